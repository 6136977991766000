"""ONNX exports (`--format=onnx`, `electra_tf.export.onnx`): every served kind of model, run by ONNX Runtime.

A tiny pre-trained folder gives one model of each kind; each is exported to ONNX and
its outputs compared with the same model's `serve_ids` signature: a real SavedModel
export for the classifier (exported by the tool, in process), the serving task in
process for the others (the function a SavedModel's `serve_ids` holds).
"""

import contextlib
import io
import os
import re
from pathlib import Path

import keras
import numpy as np
import onnx
import onnxruntime
import pytest
import tensorflow as tf
from onnxruntime.transformers.optimizer import optimize_model

from electra_tf import (
    ElectraConfig,
    ElectraDiscriminator,
    ElectraForMultipleChoice,
    ElectraForQuestionAnswering,
    ElectraForSequenceClassification,
    ElectraForTokenClassification,
)
from electra_tf.util.atomic import read_json
from electra_tf.export import precision
from electra_tf.export.client import query_export
from electra_tf.export.ids_folder import INFO_FILE
from electra_tf.export.onnx import EXTRA, MODEL_FILE, export_onnx
from electra_tf.export.onnx_text import require
from electra_tf.export.signatures import make_serving_task
from electra_tf.checkpoints.tokenizer_files import load_tokenizer
from electra_tf.text.vocabulary import load_vocabulary

TEXTS = ["The cat sat on the mat.", "a gripping film", "Héllo, Wörld! 北京欢迎你。", "no"]
LABELS = ["neg", "pos", "mixed"]
MAX_LEN = 16


def _session(folder):
    return onnxruntime.InferenceSession(os.path.join(folder, MODEL_FILE), providers=["CPUExecutionProvider"])


def _run(folder, inputs):
    session = _session(folder)
    names = [output.name for output in session.get_outputs()]
    return dict(zip(names, session.run(None, {name: inputs[name] for name in ("input_ids", "attention_mask",
                                                                              "token_type_ids")})))


def _close(ours, reference, tolerance):
    for name, value in reference.items():
        value = np.asarray(value)
        if value.dtype.kind == "f":
            finite = np.isfinite(value)
            assert np.array_equal(finite, np.isfinite(ours[name])), (name, value, ours[name])
            np.testing.assert_allclose(ours[name][finite], value[finite], atol=tolerance, err_msg=name)
        else:
            np.testing.assert_array_equal(ours[name], value, err_msg=name)


@pytest.fixture(scope="module")
def tokenizer(tiny_pretrained_dir):
    return load_tokenizer(tiny_pretrained_dir)


@pytest.fixture(scope="module")
def ids(tokenizer):
    return {key: value.numpy() for key, value in tokenizer.encode(TEXTS, sequence_length=MAX_LEN).items()}


@pytest.fixture(scope="module")
def classifier_exports(tiny_pretrained_dir, tokenizer, tmp_path_factory, run_tool):
    """(SavedModel, ONNX fp32, ONNX int8) folders of a 3-class classifier, each exported by the tool."""
    keras.utils.set_random_seed(0)
    model = ElectraForSequenceClassification.from_pretrained(tiny_pretrained_dir, num_labels=3)
    rng = np.random.default_rng(0)
    for weight in model.weights:  # as trained (a fresh model's zero biases, gamma 1 and beta 0 fold away in TensorFlow)
        if weight.path.endswith(("gamma", "beta", "bias")):
            weight.assign(weight.numpy() + rng.normal(0.0, 0.1, weight.shape).astype("float32"))
    folder = str(tmp_path_factory.mktemp("classifier") / "model")
    model.save_pretrained(folder, tokenizer=tokenizer, label_names=LABELS, max_seq_length=MAX_LEN)
    export_dir = str(tmp_path_factory.mktemp("exports"))
    paths = {}
    for name, argv in {"saved_model": [], "onnx": ["--format=onnx"],
                       "onnx_int8": ["--format=onnx", "--precision=int8"]}.items():
        code, out, err = run_tool("export_model", f"--model={folder}", f"--export_dir={export_dir}",
                                  f"--model_name={name}", *argv)
        assert code in (0, None), err[-3000:]
        paths[name] = os.path.join(export_dir, name, "1")
        if name != "saved_model":
            assert f"{paths[name]}/{MODEL_FILE}" in out
    return paths


def test_an_onnx_classifier_gives_the_saved_models_outputs(classifier_exports, ids):
    serve_ids = tf.saved_model.load(classifier_exports["saved_model"]).signatures["serve_ids"]
    for inputs in (ids, {key: value[:1, :7] for key, value in ids.items()}):  # any batch and length
        served = serve_ids(**{key: tf.constant(value) for key, value in inputs.items()})
        reference = {key: value.numpy() for key, value in served.items() if value.dtype != tf.string}
        fp32 = _run(classifier_exports["onnx"], inputs)
        assert set(fp32) == set(reference) == {"logits", "probabilities", "label_id"}
        _close(fp32, reference, 1e-4)
        int8 = _run(classifier_exports["onnx_int8"], inputs)
        _close({"probabilities": int8["probabilities"]}, {"probabilities": reference["probabilities"]}, 2e-2)


def test_onnx_runtimes_transformer_fusions_match_the_export(classifier_exports, ids):
    """The export is the graph transformers' BERT exports have: ONNX Runtime's fusions (`optimize_model`, as
    optimum's O2) make one EmbedLayerNormalization, and per block an Attention, two SkipLayerNormalizations and a
    BiasGelu (and one for the head's GELU); the fused model gives the export's outputs. (tf2onnx's graph fused
    none of these: its 13-op layer norms, 5-D head transposes and 0.5·x first GELU match no pattern.)"""
    path = os.path.join(classifier_exports["onnx"], MODEL_FILE)
    ops = [node.op_type for node in onnx.load(path).graph.node]
    assert ops.count("LayerNormalization") == 2 * 2 + 1 and "Einsum" not in ops  # 2 layers and the embeddings'
    fused = optimize_model(path, model_type="bert", num_heads=2, hidden_size=32, opt_level=0)
    statistics = {name: count for name, count in fused.get_fused_operator_statistics().items() if count}
    assert statistics == {"EmbedLayerNormalization": 1, "Attention": 2, "SkipLayerNormalization": 4, "BiasGelu": 3}
    session = onnxruntime.InferenceSession(fused.model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [output.name for output in session.get_outputs()]
    outputs = dict(zip(names, session.run(None, {name: ids[name] for name in ("input_ids", "attention_mask",
                                                                             "token_type_ids")})))
    _close(outputs, _run(classifier_exports["onnx"], ids), 1e-5)


def test_an_onnx_export_describes_itself(classifier_exports):
    folder = classifier_exports["onnx_int8"]
    info = read_json(os.path.join(folder, INFO_FILE))
    assert info["format"] == "onnx" and info["precision"] == "int8" and info["task"] == "classification"
    assert info["label_names"] == LABELS and info["max_seq_length"] == MAX_LEN
    assert info["outputs"] == ["label_id", "logits", "probabilities"] and info["model_file"] == MODEL_FILE
    assert load_tokenizer(folder).get_vocabulary()[:5] == \
        load_tokenizer(classifier_exports["onnx"]).get_vocabulary()[:5]
    fp32_size = os.path.getsize(os.path.join(classifier_exports["onnx"], MODEL_FILE))
    assert os.path.getsize(os.path.join(folder, MODEL_FILE)) < fp32_size


@pytest.mark.parametrize("kind", ["discriminator", "tagging", "question_answering", "multiple_choice"])
def test_every_served_kind_exports_to_onnx(kind, tiny_pretrained_dir, tokenizer, ids, tmp_path):
    keras.utils.set_random_seed(0)
    model, options, inputs = {
        "discriminator": (ElectraDiscriminator.from_pretrained(tiny_pretrained_dir), {}, ids),
        "tagging": (ElectraForTokenClassification.from_pretrained(tiny_pretrained_dir, num_labels=5), {}, ids),
        "question_answering": (ElectraForQuestionAnswering.from_pretrained(tiny_pretrained_dir),
                               {"max_query_length": 4}, {**ids, "token_type_ids": (np.arange(MAX_LEN) > 6)
                                                         .astype("int32")[None].repeat(len(TEXTS), 0)}),
        "multiple_choice": (ElectraForMultipleChoice.from_pretrained(tiny_pretrained_dir, num_choices=2), {},
                            {key: value.reshape(2, 2, MAX_LEN) for key, value in ids.items()}),
    }[kind]
    path = export_onnx(model, tokenizer, str(tmp_path), model_name=kind, max_seq_length=MAX_LEN, **options)
    task = make_serving_task(model, tokenizer, MAX_LEN, **options)
    reference = {key: value.numpy() for key, value in
                 task.serve_ids(**{key: tf.constant(value) for key, value in inputs.items()}).items()
                 if value.dtype != tf.string}
    ours = _run(path, inputs)
    assert set(ours) == set(reference)
    _close(ours, reference, 1e-4)


def test_onnx_export_refusals(run_tool, refused, tmp_path):
    refused(run_tool("export_model", f"--model={tmp_path}/model", f"--export_dir={tmp_path}", "--format=onnx",
                     "--precision=bf16"), "--format=onnx is --precision=fp32 or int8 (no bfloat16 model)")
    with pytest.raises(ValueError, match=r"in an electra_tf checkout \(or pip install tf2onnx onnx onnxruntime\) "
                                         r"\(no_such_onnx_tool is not installed\)"):
        require("no_such_onnx_tool", EXTRA)


def test_the_export_length_follows_the_model_and_the_advice_knows_the_export(run_tool, fixture_vocab, tmp_path,
                                                                              monkeypatch):
    """A model of 64 positions exports at 64 by default (was: refused, "got 128"); after an ONNX int8 export on a
    CPU without VNNI, the advice names it "this export" instead of advising it; query_export names the format."""
    monkeypatch.setattr(precision, "cpu_flags", lambda: frozenset({"avx2", "fma"}))
    config = ElectraConfig(vocab_size=len(load_vocabulary(fixture_vocab)), embedding_size=8, hidden_size=8,
                           num_layers=1, num_heads=1, intermediate_size=8, max_position_embeddings=64)
    ElectraDiscriminator(config).save(str(tmp_path / "short.keras"))
    code, out, err = run_tool("export_model", f"--model={tmp_path}/short.keras", f"--vocab={fixture_vocab}",
                              f"--export_dir={tmp_path}/exports", "--format=onnx", "--precision=int8",
                              "--notext_model")  # (with its text model, query_export runs it: test_onnx_text.py)
    assert code in (0, None), err[-3000:]
    folder = f"{tmp_path}/exports/electra/1"
    assert read_json(os.path.join(folder, INFO_FILE))["max_seq_length"] == 64
    assert out.strip().splitlines()[-1].startswith(
        "fastest on this CPU (no VNNI/AMX): this export (--format=onnx --precision=int8) in ONNX Runtime; "), out
    with pytest.raises(ValueError, match=rf"^{re.escape(folder)} is an ONNX export \(model.onnx, token ids in\), not a "
                                         r"SavedModel: run it with onnxruntime.InferenceSession"):
        query_export(folder, ["a gripping film"])


def test_openvino_runs_an_onnx_export(classifier_exports, ids):
    """(OpenVINO 2026.4 refused tf2onnx's `Unsqueeze` with no axes before the heads' transpose; the export has
    transformers' plain 4-D transposes since.)"""
    openvino = pytest.importorskip("openvino")  # in the test extra; the benchmark's other runtime
    compiled = openvino.Core().compile_model(os.path.join(classifier_exports["onnx"], MODEL_FILE), "CPU")
    outputs = compiled({name: ids[name] for name in ("input_ids", "attention_mask", "token_type_ids")})
    reference = _run(classifier_exports["onnx"], ids)
    ours = {name: value for output, value in outputs.items() for name in output.get_names() if name in reference}
    assert set(ours) == set(reference)
    _close(ours, reference, 1e-4)


def test_the_documented_onnx_example_runs(classifier_exports):
    text = (Path(__file__).parents[2] / "docs" / "serving.md").read_text(encoding="utf-8")
    code = re.search(r"<!-- tested: tests/export/test_onnx.py -->\n```python\n(.*?)```", text, re.S)[1]
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        exec(code.replace('"exports/my_task_onnx/1"', repr(classifier_exports["onnx_int8"])), {})
    label, probabilities = re.match(r"\['(\w+)'\] \[\[(.*)\]\]", printed.getvalue(), re.S).groups()
    assert label in LABELS and len(probabilities.split()) == len(LABELS)
