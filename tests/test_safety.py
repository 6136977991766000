"""Safety: nothing the library loads can run code, and no tool silently replaces what exists.

- An AST scan of every `.py` under `electra_tf/` and `tools/` (code only: comments and docstrings do not count)
  for unsafe loaders: pickle and its kin, `torch.load`, `np.load(allow_pickle=True)`, Keras `load_model`
  without `safe_mode=True`, `yaml.load` without a safe loader, `eval`/`exec`; and for Python callbacks
  (`py_function`, `numpy_function`) in the code that ends up in exported graphs.
- The loaders as a stranger's files meet them: a pickle that would leave a mark if unpickled, a `.keras`
  file with a Python lambda. (An export's graph holds no Python callback: tests/test_bad_inputs.py
  `test_the_export_holds_no_python_callback`, and tests/export/test_export.py checks every export's op list.)
- Every absl tool that writes refuses to replace an existing output without `--overwrite`, or resumes the
  same run by design (and refuses another run's folder).
"""

import ast
import os
import pickle
from pathlib import Path

import pytest
from test_architecture import import_graph, modules

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("electra_tf", "tools")
# Code that runs inside exported graphs (and so in TF Serving), where no Python callback may be: the serving
# signatures and the models they call (`GRAPH_ROOTS`), and every module of ours those import, transitively
# (derived from the import graph, so a module the signatures start to use is covered without a list to keep).
GRAPH_ROOTS = ("electra_tf.export", "electra_tf.models")


def graph_code():
    """The files of `GRAPH_ROOTS`' modules and of all they import (tests/test_architecture.py's graph)."""
    edges = import_graph()
    reached = [name for name in edges if any(name == root or name.startswith(root + ".") for root in GRAPH_ROOTS)]
    seen = set(reached)
    while reached:
        for target in edges[reached.pop()]:
            if target not in seen:
                seen.add(target)
                reached.append(target)
    return {modules()[name].relative_to(ROOT).as_posix() for name in seen} | {"tools/export_model.py"}

PICKLE_MODULES = {"pickle", "cPickle", "_pickle", "cloudpickle", "dill", "joblib", "shelve", "marshal", "jsonpickle"}
PICKLE_CALLS = {"pandas.read_pickle", "numpy.lib.format.read_array", "torch.load", "torch.jit.load",
                "keras.config.enable_unsafe_deserialization", "tensorflow.keras.config.enable_unsafe_deserialization",
                "yaml.unsafe_load", "yaml.full_load", "yaml.load_all", "yaml.unsafe_load_all"}
SAFE_YAML_LOADERS = {"SafeLoader", "CSafeLoader", "BaseLoader", "CBaseLoader"}
PYTHON_CALLBACKS = {"tensorflow.py_function", "tensorflow.numpy_function", "tensorflow.compat.v1.py_func",
                    "tensorflow.py_func", "tensorflow.compat.v1.numpy_function"}


def _dotted(node):
    """`a.b.c` of a Name/Attribute chain, or None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def _keyword(call, name):
    return next((k.value for k in call.keywords if k.arg == name), None)


def _is_true(node):
    return isinstance(node, ast.Constant) and node.value is True


def unsafe_uses(source, path="<source>", graph_code=False):
    """`(line, what)` for every unsafe loader (and, in graph code, Python callback) in `source`."""
    tree = ast.parse(source, path)
    aliases = {}  # local name → fully qualified name
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                aliases[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else \
                    alias.name.split(".")[0]
                if alias.name.split(".")[0] in PICKLE_MODULES:
                    found.append((node.lineno, f"import {alias.name}"))
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                if node.module.split(".")[0] in PICKLE_MODULES:
                    found.append((node.lineno, f"from {node.module} import {alias.name}"))
    aliases.update({"np": aliases.get("np", "numpy"), "tf": aliases.get("tf", "tensorflow")})
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        dotted = _dotted(node.func)
        if dotted is None:
            continue
        head, _, rest = dotted.partition(".")
        name = aliases.get(head, head) + ("." + rest if rest else "")
        name = name.replace("tf.", "tensorflow.", 1) if name.startswith("tf.") else name
        where = node.lineno
        if isinstance(node.func, ast.Name) and node.func.id in ("eval", "exec") and node.func.id not in aliases:
            found.append((where, f"{node.func.id}()"))
        elif name in PICKLE_CALLS:
            found.append((where, name))
        elif name.split(".")[0] in PICKLE_MODULES:
            found.append((where, name))
        elif name in ("numpy.load", "numpy.lib.npyio.load") and not (
                _keyword(node, "allow_pickle") is None
                or (isinstance(_keyword(node, "allow_pickle"), ast.Constant)
                    and _keyword(node, "allow_pickle").value is False)):
            found.append((where, "numpy.load(allow_pickle=...)"))
        elif name.endswith(".load_model") and name.split(".")[0] in ("keras", "tensorflow") and not _is_true(
                _keyword(node, "safe_mode")):
            found.append((where, f"{name} without safe_mode=True"))
        elif _keyword(node, "safe_mode") is not None and not _is_true(_keyword(node, "safe_mode")):
            found.append((where, f"{name}(safe_mode=...) other than True"))
        elif name == "yaml.load":
            loader = _keyword(node, "Loader") or (node.args[1] if len(node.args) > 1 else None)
            if loader is None or (_dotted(loader) or "").split(".")[-1] not in SAFE_YAML_LOADERS:
                found.append((where, "yaml.load without a safe Loader"))
        elif graph_code and name in PYTHON_CALLBACKS:
            found.append((where, f"{name} in code that runs inside exported graphs"))
    return sorted(found)


def python_files():
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), path


def test_nothing_in_the_package_or_the_tools_loads_unsafely():
    covered = graph_code()
    problems = []
    scanned = 0
    for name, path in python_files():
        graph = name in covered
        problems += [f"{name}:{line}: {what}"
                     for line, what in unsafe_uses(path.read_text(encoding="utf-8"), name, graph_code=graph)]
        scanned += 1
    assert scanned > 40
    assert not problems, "\n".join(problems)


def test_graph_code_is_all_the_serving_signatures_and_models_import():
    covered = graph_code()
    # Before, a hand list left out code every serving signature runs.
    assert {"electra_tf/text/featurize.py", "electra_tf/text/answer_spans.py", "electra_tf/text/preprocessor.py",
            "electra_tf/export/signatures.py", "electra_tf/text/tokenizer.py", "tools/export_model.py"} <= covered
    assert any(name.startswith("electra_tf/layers/") for name in covered)
    assert not any(name.startswith(("electra_tf/pretraining/", "electra_tf/finetuning/")) for name in covered)


def test_the_scan_finds_what_it_looks_for_and_nothing_else():
    unsafe = '''
import pickle
import cloudpickle as cp
from joblib import load
import numpy as np, torch, yaml, keras
import tensorflow as tf
from keras.saving import load_model
"""A docstring saying pickle.load(f) and eval(x) is not code."""
# Nor is a comment: torch.load(path)
pickle.loads(data)
torch.load("model.bin")
np.load("a.npy", allow_pickle=True)
np.load("a.npy", allow_pickle=flag)
keras.saving.load_model("m.keras")
keras.models.load_model("m.keras", safe_mode=False)
tf.keras.models.load_model("m.keras")
load_model("m.keras")
keras.config.enable_unsafe_deserialization()
yaml.load(text)
yaml.load(text, Loader=yaml.Loader)
eval("1 + 1")
exec("x = 1")
tf.py_function(f, [x], tf.string)
tf.numpy_function(f, [x], tf.string)
'''
    found = [what for _, what in unsafe_uses(unsafe, graph_code=True)]
    assert len(found) == 18, found
    for expected in ("import pickle", "import cloudpickle", "from joblib import load", "pickle.loads", "torch.load",
                     "eval()", "exec()", "yaml.load without a safe Loader",
                     "keras.config.enable_unsafe_deserialization",
                     "tensorflow.py_function in code", "tensorflow.numpy_function in code"):
        assert any(what.startswith(expected) for what in found), expected
    assert sum("load_model" in what for what in found) == 4 and found.count("numpy.load(allow_pickle=...)") == 2
    safe = '''
import numpy as np, yaml, keras, json
import tensorflow as tf
np.load("a.npz")
np.load("a.npy", allow_pickle=False)
keras.saving.load_model("m.keras", safe_mode=True)
yaml.safe_load(text)
yaml.load(text, Loader=yaml.SafeLoader)
json.load(f)
model.eval()
tf.saved_model.load("export")
tf.py_function(f, [x], tf.string)  # outside graph code
'''
    assert unsafe_uses(safe, graph_code=False) == []


class _LeavesAMark:
    """Unpickling this calls `Path.touch` on the marker: proof that a pickle was run."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return Path.touch, (Path(self.marker),)


def test_a_pytorch_pickle_is_never_opened(tmp_path, refused, run_tool):
    from electra_tf import ElectraDiscriminator

    folder = tmp_path / "downloaded"
    folder.mkdir()
    (folder / "config.json").write_text((ROOT / "tests/fixtures/hf/discriminator/config.json").read_text())
    (folder / "vocab.txt").write_text((ROOT / "tests/fixtures/hf/discriminator/vocab.txt").read_text())
    marker = tmp_path / "unpickled"
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps(_LeavesAMark(marker)))
    pickle.loads((folder / "pytorch_model.bin").read_bytes())  # the bait works ...
    assert marker.exists()
    marker.unlink()
    with pytest.raises(ValueError, match=r"only pytorch_model\.bin here, a pickle, which electra_tf never unpickles"):
        ElectraDiscriminator.from_pretrained(str(folder))
    refused(run_tool("convert_checkpoint", f"--input={folder}", "--to=ours", f"--output={tmp_path}/converted"),
            f"{folder}: only pytorch_model.bin here")
    assert not marker.exists()  # ... and nothing of ours took it


def test_keras_files_load_in_safe_mode(tmp_path):
    import keras

    from electra_tf import ElectraModel

    inputs = keras.Input((2,))
    path = str(tmp_path / "model.keras")
    keras.Model(inputs, keras.layers.Lambda(lambda x: x * 2)(inputs)).save(path)  # Python bytecode inside
    with pytest.raises(ValueError, match=r"model\.keras: not a loadable Keras model of ours \(Requested the "
                                         r"deserialization of a `Lambda` layer whose `function` is a Python lambda"):
        ElectraModel.from_pretrained(path)


# === Outputs: created, never silently replaced ===

OUTPUT_FLAGS = {"output", "output_dir", "model_dir", "export_dir"}
# Tools that continue the same run in an existing output, and refuse another run's (see docs/bad_inputs.md).
RESUMES_BY_DESIGN = {
    "run_pretraining": "resumes at the last checkpoint; a model_dir of another config is refused",
    "run_finetuning": "keeps finished trials of the same flags; trials of other flags are refused",
    "build_pretraining_data": "writes only the missing shards; other settings or foreign shards are refused",
    "demo": "skips each step whose output exists",
}
# Developer tools that rewrite the committed test fixtures on purpose.
REGENERATES_FIXTURES = {"make_hf_fixtures", "make_tokenizer_fixtures", "make_tf_h5_fixtures",
                        "make_tokenizer_call_fixtures", "make_hf_hub_fixtures", "make_cmrc_fixtures",
                        "make_transformers_data_fixtures", "make_model_call_fixtures", "make_pipeline_fixtures"}


def _defined_flags(path):
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and (_dotted(node.func) or "").startswith("flags.DEFINE_") and node.args \
                and isinstance(node.args[0], ast.Constant):
            names.add(node.args[0].value)
    return names


def test_every_tool_that_writes_refuses_to_overwrite_or_resumes_by_design():
    tools = {path.stem: _defined_flags(path) for path in sorted((ROOT / "tools").glob("*.py"))}
    assert set(RESUMES_BY_DESIGN) | REGENERATES_FIXTURES <= set(tools)
    writers = {name for name, names in tools.items() if names & OUTPUT_FLAGS}
    assert {"build_vocab", "convert_checkpoint", "export_model", "run_pretraining"} <= writers
    unguarded = [name for name in writers if "overwrite" not in tools[name]
                 and name not in RESUMES_BY_DESIGN and name not in REGENERATES_FIXTURES]
    assert not unguarded, f"tools that write without --overwrite nor a resume design: {unguarded}"


def test_the_converter_refuses_an_existing_google_prefix(tmp_path, tiny_pretrained_dir, refused, run_tool):
    prefix = tmp_path / "google" / "model.ckpt"
    arguments = (f"--input={tiny_pretrained_dir}", "--to=google", f"--output={prefix}")
    assert run_tool("convert_checkpoint", *arguments)[0] == 0
    index = (tmp_path / "google" / "model.ckpt.index").read_bytes()
    refused(run_tool("convert_checkpoint", *arguments), f"{prefix}.index exists; pass --overwrite to replace it")
    assert (tmp_path / "google" / "model.ckpt.index").read_bytes() == index
    code, out, err = run_tool("convert_checkpoint", *arguments, "--overwrite")
    assert code == 0 and f"→ {prefix} (google)" in out, err[-2000:]


def test_build_vocab_and_the_converter_refuse_an_existing_output(tmp_path, tiny_pretrained_dir, refused, run_tool):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("some words\n")
    (tmp_path / "vocab.txt").write_text("mine\n")
    refused(run_tool("build_vocab", f"--input_files={corpus}", f"--output={tmp_path}/vocab.txt"),
            f"{tmp_path}/vocab.txt exists; pass --overwrite to replace it")
    (tmp_path / "converted").mkdir()
    refused(run_tool("convert_checkpoint", f"--input={tiny_pretrained_dir}", "--to=huggingface",
                     f"--output={tmp_path}/converted"), f"{tmp_path}/converted exists; pass --overwrite to replace it")
    assert (tmp_path / "vocab.txt").read_text() == "mine\n" and os.listdir(tmp_path / "converted") == []
    code, out, err = run_tool("convert_checkpoint", f"--input={tiny_pretrained_dir}", "--to=huggingface",
                              f"--output={tmp_path}/converted", "--overwrite")
    assert code == 0 and sorted(os.listdir(tmp_path / "converted")) == [
        "README.md", "config.json", "model.safetensors", "tokenizer_config.json", "vocab.txt"], err[-2000:]
