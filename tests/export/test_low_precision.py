"""bf16 and int8 SavedModel exports (`--precision`), and LiteRT exports (`--format=litert`), of a tiny classifier.

One module fixture saves a fine-tuned-like classifier folder and exports it with
the tool, in process, at each precision and as LiteRT fp32 and int8; one child
process that imports only TF and tf-text serves the SavedModels. The CPU flag
reader is monkeypatched where the test is about the refusal (and to claim
AVX512-BF16 on a machine without it: TF then emulates bfloat16, slowly but with
the same numbers).
"""

import contextlib
import io
import json
import os
import pickle
import re
import sys
import warnings
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

from electra_tf import ElectraForSequenceClassification
from electra_tf.export import precision
from electra_tf.export.client import query_export
from electra_tf.export.cpu_advice import export_flags, fastest_exports
from electra_tf.export.litert import MODEL_FILE
from electra_tf.checkpoints.tokenizer_files import load_tokenizer

DOCS = Path(__file__).parents[2] / "docs" / "serving.md"
ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
LABELS = ["neg", "pos", "mixed"]
TEXTS = ["The cat sat on the mat.", "a gripping film", "Héllo, Wörld! A naïve café.", "no"]
MAX_LEN = 16
# Tolerances on the probabilities, against the float32 Keras model (random tiny weights: logits ~0.1).
TOLERANCE = {"bf16": 2e-2, "int8": 2e-2}
BF16_CPU = frozenset({"avx512f", "avx512_bf16"})


@pytest.fixture(scope="module")
def classifier(tiny_pretrained_dir, tmp_path_factory):
    """(model folder, model, tokenizer): a 3-class classifier saved as `electra-finetune` saves one."""
    keras.utils.set_random_seed(0)
    model = ElectraForSequenceClassification.from_pretrained(tiny_pretrained_dir, num_labels=3)
    tokenizer = load_tokenizer(tiny_pretrained_dir)
    folder = str(tmp_path_factory.mktemp("classifier") / "model")
    model.save_pretrained(folder, tokenizer=tokenizer, label_names=LABELS, max_seq_length=MAX_LEN)
    return folder, model, tokenizer


@pytest.fixture(scope="module")
def exported(classifier, tmp_path_factory, run_tool):
    """name → export folder: SavedModels at bf16/int8, LiteRT at fp32/int8 (the tool, in process)."""
    folder = classifier[0]
    export_dir = str(tmp_path_factory.mktemp("exports"))
    runs = {"bf16": ["--precision=bf16"], "int8": ["--precision=int8"],
            "litert_fp32": ["--format=litert"], "litert_int8": ["--format=litert", "--precision=int8"]}
    paths, outputs = {}, {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(precision, "cpu_flags", lambda: BF16_CPU)
        for name, argv in runs.items():
            code, out, err = run_tool("export_model", f"--model={folder}", f"--export_dir={export_dir}",
                                       f"--model_name={name}", *argv)
            assert code in (0, None), err[-3000:]
            paths[name], outputs[name] = os.path.join(export_dir, name, "1"), out
    return {"paths": paths, "out": outputs}


def _ids(tokenizer, texts=TEXTS):
    return {key: value.numpy() for key, value in tokenizer.encode(tf.constant(texts), None, MAX_LEN).items()}


CHILD = r'''
import json, pickle, sys
import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401
spec = json.load(open(sys.argv[1]))
result = {}
for name, path in spec["exports"].items():
    loaded = tf.saved_model.load(path)
    text = loaded.signatures["serving_default"](text=tf.constant(spec["texts"]))
    ids = loaded.signatures["serve_ids"](**{k: tf.constant(v, tf.int32) for k, v in spec["ids"].items()})
    result[name] = {"text": {k: v.numpy() for k, v in text.items()}, "ids": {k: v.numpy() for k, v in ids.items()}}
result["modules"] = sorted(m for m in sys.modules if m.split(".")[0] in ("electra_tf", "keras_hub", "tools"))
pickle.dump(result, open(sys.argv[2], "wb"))
'''


@pytest.fixture(scope="module")
def served(exported, classifier, tmp_path_factory, children):
    folder = tmp_path_factory.mktemp("child")
    spec = {"exports": {name: exported["paths"][name] for name in ("bf16", "int8")}, "texts": TEXTS,
            "ids": {k: v.tolist() for k, v in _ids(classifier[2]).items()}}
    (folder / "spec.json").write_text(json.dumps(spec))
    (folder / "child.py").write_text(CHILD)
    result = children.run([sys.executable, str(folder / "child.py"), str(folder / "spec.json"),
                           str(folder / "result.pickle")], env=ENV)
    assert result.returncode == 0, result.stderr[-3000:]
    with open(folder / "result.pickle", "rb") as f:
        return pickle.load(f)


def test_bf16_and_int8_exports_serve_in_a_tf_only_process_close_to_fp32(served, exported, classifier):
    model, tokenizer = classifier[1], classifier[2]
    expected = keras.ops.softmax(model(_ids(tokenizer))["logits"]).numpy()
    assert served["modules"] == []
    for name in ("bf16", "int8"):
        for signature in ("text", "ids"):
            outputs = served[name][signature]
            assert outputs["probabilities"].dtype == np.float32, name
            np.testing.assert_allclose(outputs["probabilities"], expected, atol=TOLERANCE[name], err_msg=name)
            assert list(outputs["label"].astype(str)) == [LABELS[i] for i in outputs["label_id"]]
    assert "precision: bf16 (outputs in float32)" in exported["out"]["bf16"]
    done = {"bf16": export_flags(precision="bf16"), "int8": export_flags(precision="int8"),
            "litert_fp32": export_flags("litert"), "litert_int8": export_flags("litert", "int8")}
    for name, out in exported["out"].items():  # every export ends with the advice for the CPU (BF16_CPU: no VNNI)
        assert out.strip().splitlines()[-1] == fastest_exports(BF16_CPU, done=done[name]), name
        assert "fastest on this CPU (no VNNI/AMX): --format=onnx --precision=int8 in ONNX Runtime" in out, name
    # ... which knows what was just done: no advice to export what was just exported
    assert "this export (--format=litert --precision=int8) for single requests only" in exported["out"]["litert_int8"]
    for name in ("bf16", "int8"):
        with open(os.path.join(exported["paths"][name], "assets.extra", "export_info.json")) as f:
            assert json.load(f)["precision"] == name


def test_weights_are_stored_at_their_precision(exported):
    """As constants of the graphs (the export's default): the dtypes of those the size of a weight."""
    def weights(name):
        saved = saved_model_pb2.SavedModel()
        with open(os.path.join(exported["paths"][name], "saved_model.pb"), "rb") as f:
            saved.ParseFromString(f.read())
        return {tf.as_dtype(node.attr["dtype"].type) for function in saved.meta_graphs[0].graph_def.library.function
                for node in function.node_def if node.op == "Const"
                and len(node.attr["value"].tensor.tensor_content) >= 1024}

    assert tf.bfloat16 in weights("bf16") and tf.float32 not in weights("bf16")
    assert tf.int8 in weights("int8")


def test_bf16_is_refused_in_one_line_before_any_work_on_a_cpu_without_it(classifier, tmp_path, run_tool, refused,
                                                                         monkeypatch):
    monkeypatch.setattr(precision, "cpu_flags", lambda: frozenset({"avx2", "avx512f"}))
    refused(run_tool("export_model", f"--model={classifier[0]}", f"--export_dir={tmp_path}/exports",
                     "--precision=bf16"),
            "--precision=bf16 needs a CPU with avx512_bf16 or amx_bf16 (this one has neither): export at "
            "--precision=fp32")
    assert not os.path.exists(tmp_path / "exports")


def test_a_model_with_a_preprocessor_is_copied_at_each_precision_with_it(classifier):
    from electra_tf.text.preprocessor import ElectraPreprocessor

    _, model, tokenizer = classifier
    with_text = ElectraForSequenceClassification.from_config(model.get_config())
    with_text.set_weights(model.get_weights())
    with_text.preprocessor = ElectraPreprocessor(tokenizer, MAX_LEN)
    for name in ("bf16", "int8"):
        copy = precision.at_precision(with_text, name)  # int8 used to fail: "Cannot quantize ... not built"
        assert copy.preprocessor is with_text.preprocessor
        np.testing.assert_allclose(copy.predict(TEXTS[:2], verbose=0)["logits"],
                                   with_text.predict(TEXTS[:2], verbose=0)["logits"], atol=5e-2)


def test_cpu_flags_are_read_from_cpuinfo(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nmodel name\t: Some CPU\nflags\t\t: fpu avx512f avx512_bf16 amx_tile\n\n"
                       "processor\t: 1\nflags\t\t: fpu\n")
    assert precision.cpu_flags(str(cpuinfo)) == {"fpu", "avx512f", "avx512_bf16", "amx_tile"}
    assert precision.cpu_flags(str(tmp_path / "missing")) == frozenset()


def _litert(path, inputs):
    interpreter = tf.lite.Interpreter(model_path=os.path.join(path, MODEL_FILE))
    return interpreter.get_signature_runner("serving_default")(**inputs)


def test_litert_exports_give_the_keras_outputs_and_describe_themselves(exported, classifier):
    model, tokenizer = classifier[1], classifier[2]
    inputs = _ids(tokenizer)
    inputs["attention_mask"][0, 5:] = 0  # a padded row: the mask is honoured
    expected = model(inputs)["logits"].numpy()
    fp32, int8 = (_litert(exported["paths"][name], inputs) for name in ("litert_fp32", "litert_int8"))
    np.testing.assert_allclose(fp32["logits"], expected, atol=1e-4)
    np.testing.assert_array_equal(fp32["label_id"], expected.argmax(-1))
    np.testing.assert_allclose(int8["probabilities"], keras.ops.softmax(expected).numpy(), atol=2e-2)
    one = _litert(exported["paths"]["litert_fp32"], {k: v[:1, :7] for k, v in inputs.items()})  # other shapes
    np.testing.assert_allclose(one["logits"], model({k: v[:1, :7] for k, v in inputs.items()})["logits"], atol=1e-4)
    folder = exported["paths"]["litert_int8"]
    assert sorted(os.listdir(folder)) == ["README.md", "config.json", "export_info.json", MODEL_FILE,
                                          "tokenizer_config.json", "vocab.txt"]
    with open(os.path.join(folder, "export_info.json")) as f:
        info = json.load(f)
    assert (info["label_names"], info["precision"], info["max_seq_length"]) == (LABELS, "int8", MAX_LEN)
    assert info["bytes"] == os.path.getsize(os.path.join(folder, MODEL_FILE))
    assert info["bytes"] < 0.6 * os.path.getsize(os.path.join(exported["paths"]["litert_fp32"], MODEL_FILE))
    assert f"{folder}/{MODEL_FILE}" in exported["out"]["litert_int8"]
    assert load_tokenizer(folder).get_vocabulary() == tokenizer.get_vocabulary()


def test_a_litert_export_answers_an_empty_batch_and_query_export_says_what_it_is(exported, classifier):
    empty = {key: value[:0] for key, value in _ids(classifier[2]).items()}
    for name in ("litert_fp32", "litert_int8"):  # as the SavedModel answers a batch of zero
        outputs = _litert(exported["paths"][name], empty)
        assert {key: value.shape for key, value in outputs.items()} == {
            "logits": (0, 3), "probabilities": (0, 3), "label_id": (0,)}, name
    folder = exported["paths"]["litert_int8"]
    with pytest.raises(ValueError, match=rf"^{re.escape(folder)} is a LiteRT export \(model.tflite, token ids in\), "
                                         r"not a SavedModel: run it with tf.lite.Interpreter"):
        query_export(folder, ["a gripping film"])
    with pytest.raises(ValueError, match=r"holds no export \(no saved_model.pb\)"):
        query_export(os.path.dirname(folder), ["a gripping film"])


def test_litert_refuses_bf16_and_models_other_than_classifiers(classifier, tiny_pretrained_dir, tmp_path, run_tool,
                                                               refused):
    refused(run_tool("export_model", f"--model={classifier[0]}", f"--export_dir={tmp_path}", "--format=litert",
                     "--precision=bf16"), "--format=litert is --precision=fp32 or int8")
    refused(run_tool("export_model", f"--model={tiny_pretrained_dir}", f"--export_dir={tmp_path}",
                     "--format=litert"), "--format=litert exports a classifier;")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("interpreter", ["ai_edge_litert", "tf.lite"])
def test_the_documented_litert_example_runs(exported, interpreter, monkeypatch):
    """With LiteRT's package where it is installed (not a dependency: skipped without it), else with `tf.lite`."""
    if interpreter == "ai_edge_litert":
        pytest.importorskip("ai_edge_litert.interpreter")
    else:
        for name in ("ai_edge_litert", "ai_edge_litert.interpreter"):  # as where it is not installed
            monkeypatch.setitem(sys.modules, name, None)
    text = DOCS.read_text(encoding="utf-8")
    code = re.search(r"<!-- tested: tests/export/test_low_precision.py -->\n```python\n(.*?)```", text, re.S)[1]
    folder = exported["paths"]["litert_int8"]
    with contextlib.redirect_stdout(io.StringIO()) as printed, warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        exec(code.replace('"exports/my_task_lite/1"', repr(folder)), {})
    label, probabilities = re.match(r"\['(\w+)'\] \[\[(.*)\]\]", printed.getvalue(), re.S).groups()
    assert label in LABELS and len(probabilities.split()) == len(LABELS)
    deprecated = any("tf.lite.Interpreter is deprecated" in str(warning.message) for warning in warned)
    assert deprecated == (interpreter == "tf.lite")
