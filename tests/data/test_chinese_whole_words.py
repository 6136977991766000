"""Chinese whole-word masking: shards built with `whole_word_masking` store jieba's words (`continues_word`), and
in-graph masking masks them whole; shards without the feature and English text are masked as before."""

import hashlib
import json
import os
import subprocess
import sys

import jieba
import numpy as np
import pytest
import tensorflow as tf

from electra_tf.config import PretrainingConfig, load_run_config
from electra_tf.data.beam_pipeline import build_pretraining_shards_on_beam
from electra_tf.data.tfrecord_dataset import Shards, check_word_boundaries, pretraining_dataset
from electra_tf.data.pretraining_data import MANIFEST, build_pretraining_shards, marked_documents
from electra_tf.data.tfrecord import CONTINUES_WORD
from electra_tf.data.word_segmentation import WordCutter, word_runs
from electra_tf.pretraining.masking import mask_tokens
from electra_tf.pretraining.run import RunOptions, run_pretraining
from electra_tf.pretraining.variant_inputs import variant_inputs
from electra_tf.text.tokenizer import WordPieceTokenizer
from electra_tf.text.vocabulary import save_vocabulary

# One line a document, each short enough to be one example: token p of an example is character p - 1 of its line.
LINES = ["江泽民主席在北京会见了美国总统克林顿。", "今天早上下了一场大雨，街上的行人都撑着伞走向车站。",
         "中国科学院的研究人员发现了一种新的治疗方法。", "我们一边看书一边聊天，时间过得很快。",
         "这家公司去年的销售收入增长了百分之二十。", "上海是中国最大的经济中心城市之一。",
         "学生们在图书馆里认真地准备期末考试。", "他说明天要去医院看望生病的奶奶。"]
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def digests(folder):
    return {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in os.listdir(folder)
            if "tfrecord" in name}


@pytest.fixture(scope="module")
def chinese(tmp_path_factory):
    folder = tmp_path_factory.mktemp("chinese")
    corpus = folder / "corpus.txt"
    corpus.write_text("\n\n".join(LINES) + "\n", encoding="utf-8")
    vocab = str(folder / "vocab.txt")
    save_vocabulary(SPECIAL + ["##s"] + sorted(set("".join(LINES))), vocab)
    return str(corpus), vocab, folder


@pytest.fixture(scope="module")
def shards(chinese):
    corpus, vocab, folder = chinese
    build_pretraining_shards([corpus], vocab, str(folder / "wwm"), max_seq_length=40, whole_word_masking=True)
    return folder / "wwm"


def test_beam_writes_the_local_builder_s_shards_with_their_words(shards, chinese, tmp_path):
    corpus, vocab, _ = chinese
    build_pretraining_shards_on_beam([corpus], vocab, str(tmp_path), max_seq_length=40, whole_word_masking=True)
    assert digests(tmp_path) == digests(shards)
    assert json.loads((tmp_path / MANIFEST).read_text()) == json.loads((shards / MANIFEST).read_text())


def test_word_runs_mark_the_characters_that_continue_a_segmenter_word():
    runs = word_runs("江泽民主席, 在 New York。", jieba.lcut("江泽民主席, 在 New York。"))
    assert runs == [("江泽民主席", [0, 1, 1, 0, 1]), (", ", None), ("在", [0]), (" New York。", None)]


def test_segmented_tokenization_gives_the_line_s_ids(chinese):
    _, vocab, _ = chinese
    tokenizer = WordPieceTokenizer(vocab)
    lines = LINES + ["混合 English 文本 s，北京。"]
    ((_, document, marks),) = marked_documents([(0, lines)], tokenizer, cutter=WordCutter())
    assert [s for line in document for s in line] == tokenizer.tokenize(tf.constant(lines)).to_list()
    assert [len(m) for line in marks for m in line] == [len(s) for line in document for s in line]


def test_shards_store_jieba_s_words_and_the_manifest_names_the_segmenter(shards, chinese):
    _, vocab, _ = chinese
    manifest = json.loads((shards / MANIFEST).read_text())
    assert manifest["settings"]["word_segmenter"] == f"jieba {jieba.__version__}"
    vocabulary = open(vocab, encoding="utf-8").read().splitlines()
    batch = next(iter(pretraining_dataset(str(shards), batch_size=len(LINES), seq_length=40, training=False)))
    for ids, marks in zip(batch["input_ids"].numpy(), batch[CONTINUES_WORD].numpy()):
        text = "".join(vocabulary[i] for i in ids if i > 4)
        words, word = [], ""
        for i, mark in zip(ids, marks):
            if i > 4:
                if not mark and word:
                    words.append(word)
                word = word + vocabulary[i] if mark else vocabulary[i]
        words.append(word)
        assert words == jieba.lcut(text)
    check_word_boundaries(Shards.listed(str(shards), 40), vocabulary)  # carries its words: accepted


def _masked_spans(batch, masked, vocabulary):
    """(masked spans that are whole jieba words, masked spans): a span is the masked characters of one word."""
    whole = total = 0
    for ids, weights, positions in zip(batch["input_ids"].numpy(), masked.weights.numpy(), masked.positions.numpy()):
        text = "".join(vocabulary[i] for i in ids if i > 4)
        word_of = np.repeat(np.arange(len(words := jieba.lcut(text))), [len(w) for w in words])
        chosen = positions[weights > 0] - 1  # [CLS] first: token p is character p - 1
        for word in set(word_of[chosen].tolist()):
            total += 1
            whole += np.sum(word_of[chosen] == word) == len(words[word])
    return whole, total


def test_whole_word_masking_masks_jieba_s_words_whole(shards, chinese):
    _, vocab, _ = chinese
    vocabulary = open(vocab, encoding="utf-8").read().splitlines()
    batch = next(iter(pretraining_dataset(str(shards), batch_size=len(LINES), seq_length=40, training=False)))
    continuation = tf.constant([token.startswith("##") for token in vocabulary])
    counts = {}
    for segmented in (True, False):
        whole = total = 0
        for draw in range(40):
            masked = mask_tokens(batch["input_ids"], batch["attention_mask"],
                                 tf.constant(np.arange(len(LINES)) + 1000 * draw, tf.uint64), mask_prob=0.3,
                                 max_predictions=10, mask_token_id=4, special_token_ids=[0, 2, 3, 4],
                                 vocab_size=len(vocabulary), word_continuation=continuation,
                                 continues_word=batch[CONTINUES_WORD] if segmented else None)
            counts_now = _masked_spans(batch, masked, vocabulary)
            whole, total = whole + counts_now[0], total + counts_now[1]
        counts[segmented] = whole / total
    print(f"masked spans that are whole jieba words: {counts[True]:.1%} with the shards' words, "
          f"{counts[False]:.1%} without (characters)")
    assert counts[True] == 1.0 and counts[False] < 0.75


def test_jieba_cuts_in_worker_processes_the_same_shards_even_from_a_script_without_a_main_guard(chinese, tmp_path):
    _, vocab, _ = chinese
    long_corpus = tmp_path / "corpus.txt"  # more than one batch of sentences: the workers start
    long_corpus.write_text("\n\n".join(LINES * 260) + "\n", encoding="utf-8")  # 2,080 sentences
    build_pretraining_shards([str(long_corpus)], vocab, str(tmp_path / "1"), max_seq_length=40,
                             whole_word_masking=True, segmenter_processes=1)
    # As many users' scripts are: TensorFlow imported at the top, the build called there, no __main__ guard
    # (which multiprocessing's workers would run again).
    script = tmp_path / "build.py"
    script.write_text("import tensorflow\nfrom electra_tf.data.pretraining_data import build_pretraining_shards\n"
                      f"build_pretraining_shards([{str(long_corpus)!r}], {vocab!r}, {str(tmp_path / '2')!r}, "
                      "max_seq_length=40, whole_word_masking=True, segmenter_processes=2)\n", encoding="utf-8")
    built = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-3000:]
    assert digests(tmp_path / "1") == digests(tmp_path / "2") and len(digests(tmp_path / "1")) == 1


def test_a_worker_imports_jieba_and_no_tensorflow_and_its_errors_reach_the_builder():
    text = "我们去Beijing看长城。"
    batch = json.dumps([text, "ELECTRA"], ensure_ascii=False).encode("utf-8") + b"\n"
    worker = subprocess.run([sys.executable, "-X", "importtime", "-m", "electra_tf.data.word_segmentation"],
                            input=batch, capture_output=True, timeout=120)
    assert json.loads(worker.stdout) == {"runs": [[list(run) for run in word_runs(text, jieba.lcut(text))],
                                                  [["ELECTRA", None]]]}
    imported = {line.rsplit("|", 1)[-1].strip() for line in worker.stderr.decode().splitlines()}
    assert "jieba" in imported and not {"tensorflow", "numpy"} & imported
    with pytest.raises(TypeError, match="in a word segmenter worker"):  # raised there, by has_cjk(None)
        list(WordCutter(processes=2).runs_of_batches([("first", ["中文"]), ("second", [None])]))


def test_a_pretraining_run_with_whole_word_masking_trains_on_the_shards_words(shards, chinese, tmp_path, capsys):
    _, vocab, _ = chinese
    model, pretraining = load_run_config("electra_tiny")
    result = run_pretraining(model.replace(vocab_size=len(open(vocab, encoding="utf-8").read().splitlines())),
                             pretraining.replace(max_seq_length=40, train_steps=2, batch_size=4, warmup_steps=0,
                                                 whole_word_masking=True),
                             RunOptions(model_dir=str(tmp_path / "run"), vocab_file=vocab, train_files=str(shards)))
    assert result.step == 2 and np.isfinite(result.metrics["loss"])
    words = json.loads((shards / MANIFEST).read_text())["totals"]["whole_words"]
    share = words["words_of_several_tokens"] / words["words"]
    assert f"masking unit: the word (jieba for CJK text); {share:.1%} of {words['words']:,} words hold several " \
        "tokens (" in capsys.readouterr().out  # the log states what it masks


def test_shards_of_chinese_text_without_words_are_refused_for_whole_word_masking(chinese):
    corpus, vocab, folder = chinese
    build_pretraining_shards([corpus], vocab, str(folder / "plain"), max_seq_length=40)
    vocabulary = open(vocab, encoding="utf-8").read().splitlines()
    message = (r"holds Chinese \(CJK\) text \(\d+% of the tokens are ideographs\) but no word boundaries.*"
               r"electra-build-pretraining-data --whole_word_masking")
    plain = Shards.listed(str(folder / "plain"), 40)
    with pytest.raises(ValueError, match=message):
        check_word_boundaries(plain, vocabulary)
    # What electra-pretrain and the benchmarks build the pre-trainer with checks it.
    config = PretrainingConfig(max_seq_length=40, whole_word_masking=True)
    with pytest.raises(ValueError, match=message):
        variant_inputs(config, vocabulary, plain)
    assert variant_inputs(config.replace(whole_word_masking=False), vocabulary, plain) == {}


def test_without_jieba_the_flag_on_chinese_text_says_how_to_install_it_before_any_work(chinese, tmp_path,
                                                                                      monkeypatch):
    corpus, vocab, _ = chinese
    monkeypatch.setitem(sys.modules, "jieba", None)  # `import jieba` raises ImportError
    with pytest.raises(ValueError, match=r"^--whole_word_masking: the corpus holds CJK text, whose words need the "
                                         r'jieba word segmenter: pip install jieba, or pip install "\.\[chinese\]" '
                                         r"in an electra_tf checkout$"):
        build_pretraining_shards([corpus], vocab, str(tmp_path / "out"), whole_word_masking=True)
    assert not (tmp_path / "out").exists()
    english = tmp_path / "english.txt"
    english.write_text("An English line.\n", encoding="utf-8")
    build_pretraining_shards([str(english)], vocab, str(tmp_path / "english"), whole_word_masking=True)
    assert "word_segmenter" not in json.loads((tmp_path / "english" / MANIFEST).read_text())["settings"]


def test_english_masking_is_unchanged_by_zero_marks():
    ids = tf.constant(np.random.default_rng(0).integers(5, 60, size=(16, 24)), tf.int32)
    mask = tf.ones_like(ids)
    continuation = tf.range(60) >= 40
    common = dict(mask_prob=0.3, max_predictions=6, mask_token_id=4, special_token_ids=[0, 2, 3, 4],
                  vocab_size=60, word_continuation=continuation)
    keys = tf.constant(np.arange(16), tf.uint64)
    plain = mask_tokens(ids, mask, keys, **common)
    zeros = mask_tokens(ids, mask, keys, continues_word=tf.zeros_like(ids), **common)
    for a, b in zip(plain, zeros):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_more_segmenter_processes_than_cores_is_one_line_before_any_work(chinese, tmp_path, run_tool, refused):
    """`--segmenter_processes=100000` started one jieba worker process each (a fork bomb from a typo); now it is
    refused with the number of cores, before the corpus is read."""
    corpus, vocab, _ = chinese
    cores = len(os.sched_getaffinity(0))
    for processes in (0, cores + 1, 100000):
        with pytest.raises(ValueError, match=rf"^segmenter_processes must be in 1..{cores} \(the cores this process "
                                             rf"may use; each runs one jieba worker\), got {processes}$"):
            build_pretraining_shards([str(tmp_path / "unread.txt")], vocab, str(tmp_path / "out"),
                                     whole_word_masking=True, segmenter_processes=processes)
    refused(run_tool("build_pretraining_data", f"--input_files={corpus}", f"--vocab_file={vocab}",
                     f"--output_dir={tmp_path}/out", "--whole_word_masking", "--segmenter_processes=100000"),
            f"segmenter_processes must be in 1..{cores}")
    assert not (tmp_path / "out").exists()
