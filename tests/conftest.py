"""Shared fixtures: tiny configs, a tiny vocabulary with random batches, fixture files, tools run in-process,
child processes whose stderr a failing test shows.

(The two logical CPU devices are set up by the root conftest.py.)
"""

import contextlib
import dataclasses
import importlib
import io
import itertools
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf
from absl import flags

from electra_tf import ElectraConfig, ElectraDiscriminator, ElectraPretrainer, PretrainingConfig, save_run_config
from electra_tf.checkpoints.ours import RUN_CONFIG
from electra_tf.text.vocabulary import is_unreachable, load_vocabulary

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).parents[1]
# No test reaches the Hugging Face hub: a hub id resolves from a cache or fails at once (tests/checkpoints/test_hub.py
# serves its downloads on loopback). Child processes inherit it.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# The pages whose command and Python blocks say whether tests/tools/test_demo.py runs them. (docs/serving.md's
# requests and responses are run by tests/export/test_export.py.)
DOCUMENTED_PAGES = ("README.md", "docs/finetuning.md", "docs/pretraining.md", "docs/pretraining_variants.md",
                    "docs/checkpoints.md", "docs/results.md", "docs/development.md")
_BLOCK = re.compile(r"(?:<!-- (tested: tests/tools/test_demo.py|not run: [^>]+) -->\n)?```(bash|sh|python)\n(.*?)```",
                    re.S)


@dataclasses.dataclass(frozen=True)
class DocumentedBlock:
    """A ```bash/sh/python block of a page, and the marker before it: `<!-- tested: tests/tools/test_demo.py -->`
    (the demo test runs it) or `<!-- not run: <why> -->`; `marker` is None when there is none."""

    page: str
    language: str
    code: str
    marker: str | None

    @property
    def tested(self):
        return self.marker is not None and self.marker.startswith("tested")


@dataclasses.dataclass(frozen=True)
class TinyVocabulary:
    """Token ids of a tiny vocabulary, [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4 and words from 5, and what is
    made with it: packed-looking random batches and pre-trainers."""

    pad: int = 0
    unk: int = 1
    cls: int = 2
    sep: int = 3
    mask: int = 4
    size: int = 60

    @property
    def special_ids(self):
        return (self.pad, self.cls, self.sep, self.mask)

    @property
    def continuation_ids(self):
        """The ids this vocabulary calls `##` pieces (for whole-word masking): the upper third of the words."""
        return tuple(range(40, self.size))

    @property
    def unigram_counts(self):
        """Token counts for a unigram generator: word `i` seen `i` times, special tokens never."""
        return [0 if i < 5 else i for i in range(self.size)]

    def batch(self, batch_size=8, seq_length=16, seed=0, min_length=6):
        """[CLS] words [SEP] then padding, with a segment B on some rows."""
        rng = np.random.default_rng(seed)
        ids = np.zeros((batch_size, seq_length), np.int32)
        types = np.zeros_like(ids)
        for row in range(batch_size):
            length = int(rng.integers(min_length, seq_length + 1))
            ids[row, :length] = rng.integers(5, self.size, size=length)
            ids[row, 0], ids[row, length - 1] = self.cls, self.sep
            if length >= 8 and row % 2:
                middle = length // 2
                ids[row, middle] = self.sep
                types[row, middle + 1:length] = 1
        return {"input_ids": ids, "attention_mask": (ids != self.pad).astype(np.int32), "token_type_ids": types}

    def pretrainer(self, config, seed=None, **pretraining):
        """An `ElectraPretrainer` over this vocabulary (length 16, generator 1/2 by default); `seed` seeds
        the initialisation. A variant gets what it needs: the `##` pieces, the unigram counts."""
        if seed is not None:
            keras.utils.set_random_seed(seed)
        values = {"max_seq_length": 16, "generator_hidden_size": 0.5, **pretraining}
        extra = {}
        if values.get("whole_word_masking"):
            extra["word_continuation_ids"] = self.continuation_ids
        if values.get("generator_type") == "unigram":
            extra["unigram_counts"] = self.unigram_counts
        return ElectraPretrainer(config, PretrainingConfig(**values), mask_token_id=self.mask,
                                 special_token_ids=self.special_ids, **extra)


@pytest.fixture(scope="session")
def documented_blocks():
    """Every command and Python block of `DOCUMENTED_PAGES`, in page order."""
    return [DocumentedBlock(page, "bash" if language == "sh" else language, code, marker or None)
            for page in DOCUMENTED_PAGES
            for marker, language, code in _BLOCK.findall((ROOT / page).read_text(encoding="utf-8"))]


@pytest.fixture(scope="session")
def tiny_vocab():
    return TinyVocabulary()


@pytest.fixture(scope="session")
def mirrored():
    """One MirroredStrategy over CPU:0 and CPU:1 for the session: strategies made one after another in a
    process can hand out the same collective instance keys, and a later all-reduce then meets an earlier
    one's shapes ("Shape mismatch in the collective instance")."""
    return tf.distribute.MirroredStrategy(["CPU:0", "CPU:1"])


@pytest.fixture
def tiny_config(tiny_vocab):
    return ElectraConfig(vocab_size=tiny_vocab.size, embedding_size=16, hidden_size=32, num_layers=2,
                         num_heads=2, intermediate_size=64, hidden_dropout=0.0, attention_dropout=0.0)


@pytest.fixture
def tiny_pretraining_config():
    return PretrainingConfig(max_seq_length=16, generator_hidden_size=0.5, learning_rate=1e-3)


@pytest.fixture(scope="session")
def fixtures_dir():
    return FIXTURES


@pytest.fixture(scope="session")
def fixture_vocab():
    """A real WordPiece vocabulary (`tools/make_tokenizer_fixtures.py`)."""
    return str(FIXTURES / "tokenizer" / "vocab.txt")


def _decodable(codec, leads, trails):
    """The characters of a two-byte codec's rows `leads` × columns `trails` (GB2312's and Big5's common
    hanzi)."""
    characters = []
    for lead in leads:
        for trail in trails:
            try:
                characters.append(bytes([lead, trail]).decode(codec))
            except UnicodeDecodeError:
                pass
    return characters


@pytest.fixture(scope="session")
def bert_chinese_vocab(tmp_path_factory, fixture_vocab):
    """The path of a stand-in for the BERT-Chinese `vocab.txt` (`bert-base-chinese`, every `hfl/chinese-electra-*`)
    with its layout: 21,128 tokens, [PAD], [unused1]..[unused99], [UNK] [CLS] [SEP] [MASK] <S> <T> (ids 100-105),
    single characters by code point (symbols, U+2028 at line 344, CJK punctuation, the 8,900 common simplified
    (GB2312) and traditional (Big5) hanzi, full-width forms), English words and pieces and numbers, then `##`
    forms from `##`+U+2028 at line 13,503. Generated, not shipped: the real file is not redistributed here."""
    cjk = sorted(c for c in {*_decodable("gb2312", range(0xB0, 0xF8), range(0xA1, 0xFF)),
                             *_decodable("big5", range(0xA4, 0xC7), [*range(0x40, 0x7F), *range(0xA1, 0xFF)])}
                 if "\u4e00" <= c <= "\u9fff")
    symbols = [chr(c) for c in [*range(0x21, 0x7F), *range(0xA1, 0x100), *range(0x101, 0x130, 2),
                                *range(0x3B1, 0x3CA), *range(0x430, 0x450), *range(0x2010, 0x2028)]
               if not chr(c).isupper() and chr(c) != "\xad"]  # ASCII, Latin, Greek, Cyrillic, quotes, dashes, …
    tokens = ["[PAD]", *(f"[unused{i}]" for i in range(1, 100)), "[UNK]", "[CLS]", "[SEP]", "[MASK]", "<S>", "<T>"]
    tokens += symbols + ["\u2028"]
    tokens += [chr(c) for c in range(0x3001, 0x3012)] + cjk
    tokens += [chr(c) for c in range(0xFF01, 0xFF5F) if not chr(c).isupper()]
    singles = set(tokens)
    words = [token for token in load_vocabulary(fixture_vocab)[5:] if len(token) > 1 and token not in singles
             and not is_unreachable(token)]  # the fixture's '##\xa0'
    numbers = (number for number in map(str, itertools.count(10)) if number not in words)
    tokens += words + [next(numbers) for _ in range(13502 - len(tokens) - len(words))] + ["##\u2028"]
    pieces = (f"##{c}" for c in cjk + [chr(c) for c in range(0x30, 0x7B) if chr(c).isalnum()])
    taken = set(tokens)
    tokens += [piece for piece in pieces if piece not in taken][:21128 - len(tokens)]
    assert len(tokens) == len(set(tokens)) == 21128 and tokens[343] == "\u2028" and tokens[13502] == "##\u2028"
    path = tmp_path_factory.mktemp("bert_chinese") / "vocab.txt"
    path.write_text("".join(token + "\n" for token in tokens), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="session")
def write_pretrained_dir(fixture_vocab):
    """Writes a tiny pre-trained model folder as tools/run_pretraining.py writes `final/` (random weights, the
    fixture vocabulary or `vocab_file`): `write_pretrained_dir(folder, hidden_size=32, seed=0, vocab_file=None)`."""

    def write(folder, hidden_size=32, seed=0, vocab_file=None):
        vocab_file = vocab_file or fixture_vocab
        keras.utils.set_random_seed(seed)
        config = ElectraConfig(vocab_size=len(load_vocabulary(vocab_file)), embedding_size=16,
                               hidden_size=hidden_size, num_layers=2, num_heads=2, intermediate_size=2 * hidden_size,
                               max_position_embeddings=128)
        os.makedirs(folder, exist_ok=True)
        ElectraDiscriminator(config).save(os.path.join(folder, "discriminator.keras"))
        save_run_config(os.path.join(folder, RUN_CONFIG), config, PretrainingConfig())
        shutil.copyfile(vocab_file, os.path.join(folder, "vocab.txt"))
        return str(folder)

    return write


@pytest.fixture(scope="session")
def tiny_pretrained_dir(tmp_path_factory, write_pretrained_dir):
    return write_pretrained_dir(tmp_path_factory.mktemp("pretrained") / "final")


def _run_tool(name, *argv):
    defined = {flag.name for module, module_flags in flags.FLAGS.flags_by_module_dict().items()
               if module.startswith("electra_tf.tools.") for flag in module_flags}
    for flag in defined & set(flags.FLAGS):
        delattr(flags.FLAGS, flag)
    for module in [m for m in sys.modules if m.startswith("electra_tf.tools.") and m != "electra_tf.tools.common"]:
        del sys.modules[module]
    tool = importlib.import_module(f"electra_tf.tools.{name}")
    out, err, code = io.StringIO(), io.StringIO(), 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            flags.FLAGS([name, *argv])
            tool.run([name])
        except SystemExit as e:
            code = e.code
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="session")
def run_tool():
    """`run_tool(name, *argv)`: `(exit code, stdout, stderr)` of `tools/<name>.py` run in this process, as
    `python -m` would run it. The tools define their flags at import, several under the same names, so the
    flags of any tool imported before are removed and the tool is imported afresh."""
    return _run_tool


@pytest.fixture(scope="session")
def refused():
    """`refused(result, message)`: the tool ended with exit code 2 and `error: <message>` on stderr."""

    def check(result, message):
        code, _, err = result
        assert code == 2 and f"error: {message}" in err, err[-2000:]

    return check


class ChildProcesses:
    """Runs the child processes of tests, and keeps what a failing test's report then shows of each: its
    command, exit code and stderr (the `pytest_runtest_makereport` hook below), whatever assertion failed.

    `run(command, **kwargs)` is `subprocess.run` with the output captured as text (timeout 600 s);
    `start(command, **kwargs)` is `subprocess.Popen` with stderr kept in a file (read it with
    `stderr_of(process)`), so the child never blocks on a full pipe."""

    def __init__(self):
        self._reports = []

    def run(self, command, **kwargs):
        result = subprocess.run(command, capture_output=True, text=True, **{"timeout": 600, **kwargs})
        self._reports.append(lambda: (command, result.returncode, result.stderr))
        return result

    def start(self, command, **kwargs):
        stderr = tempfile.TemporaryFile("w+", encoding="utf-8")
        process = subprocess.Popen(command, stderr=stderr, text=True, **kwargs)
        process.stderr_file = stderr
        self._reports.append(lambda: (command, process.poll(), self.stderr_of(process)))
        return process

    @staticmethod
    def stderr_of(process):
        process.stderr_file.seek(0)
        return process.stderr_file.read()

    def reports(self):
        """`(title, text)` for each child started since the last `forget`."""
        return [(f"child process {i} (exit code {code})", f"{' '.join(map(str, command))}\n{stderr[-5000:]}")
                for i, (command, code, stderr) in enumerate(report() for report in self._reports)]

    def forget(self):
        self._reports = []


CHILDREN = ChildProcesses()


@pytest.fixture(autouse=True)
def ctrl_c_as_in_a_fresh_process():
    """Each test starts with Python's own Ctrl-C handler, as a tool's process has it (and its children inherit), so
    a test that leaves SIGINT ignored or handled cannot change what the Ctrl-C tests after it see."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture(scope="session")
def children():
    """Starts child processes (`ChildProcesses`): a failing test shows each one's stderr."""
    return CHILDREN


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    if report.failed:
        for title, text in CHILDREN.reports():
            report.sections.append((title, text))
    if report.when == "teardown":
        CHILDREN.forget()


# Modules whose tests take minutes (idle 2-core machine, `make test --durations`), slowest first. `make test` hands
# whole modules to its two workers in collection order (xdist's loadscope, without its reorder by test count, which
# put these one-test modules last), so starting them first keeps one worker from finishing the run alone.
SLOW_MODULES = ("tests/benchmarks/test_benchmarks.py", "tests/tools/test_run_pretraining.py",
                "tests/tools/test_chinese_walkthrough.py", "tests/test_faults.py", "tests/export/test_export.py",
                "tests/finetuning/test_finetuning.py", "tests/tools/test_demo.py", "tests/tools/test_run_finetuning.py",
                "tests/finetuning/test_entity_warning.py", "tests/export/test_onnx_text.py",
                "tests/export/test_low_precision.py", "tests/pretraining/test_pretrainer.py",
                "tests/test_cjk_tagging.py")


def pytest_collection_modifyitems(items):
    rank = {module: place for place, module in enumerate(SLOW_MODULES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))


def pytest_collection_finish(session):
    """Once the test modules are imported, their folders leave `sys.path`: with `tests/` there, a library probing for
    Hugging Face's package (`import transformers`) would import `tests/transformers` (the mirror of
    `electra_tf/transformers`) as a namespace package, and 🤗 datasets would then ask it for its classes."""
    tests = str(Path(__file__).parent)
    sys.path[:] = [path for path in sys.path if path != tests and not path.startswith(tests + os.sep)]
    mirror = sys.modules.get("transformers")
    if mirror is not None and getattr(mirror, "__file__", None) is None:  # the namespace package, not the library
        del sys.modules["transformers"]
