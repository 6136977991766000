"""Exports of every model kind, reloaded as TF Serving would: in a fresh process with only TF and tf-text.

One module fixture exports the tiny models (the discriminator through
tools/export_model.py); one child process then reloads them all, with the
SavedModel API and with the session API TF Serving's loader uses, and runs
every signature on ordinary text, edge cases, a batch of zero, token ids,
tf.Examples and the requests in docs/serving.md. The parent compares with the
in-process Keras models and the Python featurization.
"""

import base64
import json
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf

from electra_tf import (
    ElectraForMultipleChoice,
    ElectraForQuestionAnswering,
    ElectraForSequenceClassification,
    ElectraForTokenClassification,
)
from electra_tf.text import featurize
from electra_tf.util import atomic
from electra_tf.data.tasks import squad, tagging
from electra_tf.export import export_info, export_model, versions
from electra_tf.export.signatures import make_serving_task
from electra_tf.export.litert import export_litert
from electra_tf.export.onnx import export_onnx
from electra_tf.checkpoints.tokenizer_files import load_tokenizer

ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
DOCS = Path(__file__).parents[2] / "docs" / "serving.md"
MAX_LEN = 32
LONG = ("Serving " * 12_500)[:100_000]
TEXTS = ["The cat sat on the mat.", "Héllo, Wörld! A naïve café.", "Emoji 👍🏽 and 中文 text", "a"]
EDGE = ["", LONG, "👍🏽🤖🎉", "Ünïcödé ÀÉÎ ß\x00\u200b"]
QUESTIONS = ["Who sat?", "Where?", "What is shown?", "Which letter?"]
LABELS = {"mnli": ["entailment", "neutral", "contradiction"], "conll2003": ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]}
# The tf-text ops TF Serving has shipped for years (and nothing else outside core TF).
TF_TEXT_OPS = {"FastWordpieceTokenizeWithOffsets", "RegexSplitWithOffsets", "NormalizeUTF8", "CaseFoldUTF8"}
IDS = ("attention_mask", "input_ids", "token_type_ids")
# serve_ids outputs (serving_default's and serve_examples' are documented in docs/serving.md).
ID_OUTPUTS = {
    "electra": {"logits": ("DT_FLOAT", 2), "replaced_probability": ("DT_FLOAT", 2)},
    "mnli": {"logits": ("DT_FLOAT", 2), "probabilities": ("DT_FLOAT", 2), "label_id": ("DT_INT32", 1),
             "label": ("DT_STRING", 1)},
    "stsb": {"score": ("DT_FLOAT", 1)},
    "conll2003": {"logits": ("DT_FLOAT", 3), "probabilities": ("DT_FLOAT", 3), "label_id": ("DT_INT32", 2),
                  "label": ("DT_STRING", 2)},
    "squad": {"start_logits": ("DT_FLOAT", 2), "end_logits": ("DT_FLOAT", 3), "start_candidates": ("DT_INT32", 2),
              "answerable_logits": ("DT_FLOAT", 1), "start_position": ("DT_INT32", 1),
              "end_position": ("DT_INT32", 1), "score": ("DT_FLOAT", 1), "null_odds": ("DT_FLOAT", 1),
              "has_answer": ("DT_BOOL", 1)},
    "squad_v1": {"start_logits": ("DT_FLOAT", 2), "end_logits": ("DT_FLOAT", 2), "start_position": ("DT_INT32", 1),
                 "end_position": ("DT_INT32", 1), "score": ("DT_FLOAT", 1), "null_odds": ("DT_FLOAT", 1),
                 "has_answer": ("DT_BOOL", 1)},
    "swag": {"logits": ("DT_FLOAT", 2), "probabilities": ("DT_FLOAT", 2), "choice": ("DT_INT32", 1)},
}
DOCUMENTED_AS = {"squad_v1": "squad"}  # the same serving_default outputs
# Exports compiled with XLA (`compile=True`): name → the export they must match (per-token outputs and a beam;
# multiple choice's inputs in tests/export/test_signatures.py).
COMPILED = {"conll2003_xla": "conll2003", "squad_xla": "squad"}


def _models(pretrained):
    keras.utils.set_random_seed(0)
    # The original heads: the outputs docs/serving.md documents are theirs (squad_v1 serves a Hugging Face head).
    return {
        "mnli": (ElectraForSequenceClassification.from_pretrained(pretrained, num_labels=3, head="original"),
                 dict(text_pair=True, label_names=LABELS["mnli"])),
        "stsb": (ElectraForSequenceClassification.from_pretrained(pretrained, num_labels=1, head="original"),
                 dict(text_pair=True)),
        "conll2003": (ElectraForTokenClassification.from_pretrained(pretrained, num_labels=5, head="original"),
                      dict(label_names=LABELS["conll2003"])),
        "squad": (ElectraForQuestionAnswering.from_pretrained(pretrained, beam_size=5, hidden_size=16),
                  dict(max_query_length=8)),
        "squad_v1": (ElectraForQuestionAnswering.from_pretrained(pretrained, head="huggingface"),
                     dict(max_query_length=8)),
        "swag": (ElectraForMultipleChoice.from_pretrained(pretrained, num_choices=4), {}),
    }


@pytest.fixture(scope="module")
def exported(tiny_pretrained_dir, tmp_path_factory):
    """name → (model, path); the discriminator ("electra") by the tool, the others by `export_model`."""
    export_dir = str(tmp_path_factory.mktemp("exports"))
    os.makedirs(os.path.join(export_dir, "electra", "3"))  # an older version: the tool must write version 4
    tool = subprocess.Popen([sys.executable, "-m", "electra_tf.tools.export_model", f"--model={tiny_pretrained_dir}",
                             f"--export_dir={export_dir}", "--model_name=electra", f"--max_seq_length={MAX_LEN}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    tokenizer = load_tokenizer(tiny_pretrained_dir)
    exports = {}
    models = _models(tiny_pretrained_dir)
    for name, (model, options) in models.items():
        exports[name] = (model, export_model(model, tokenizer, export_dir, model_name=name, max_seq_length=MAX_LEN,
                                             **options))
    for name, base in COMPILED.items():
        model, options = models[base]
        exports[name] = (model, export_model(model, tokenizer, export_dir, model_name=name, max_seq_length=MAX_LEN,
                                             compile=True, **options))
    stdout, stderr = tool.communicate(timeout=300)
    assert tool.returncode == 0, stderr[-3000:]
    assert f"discriminator model → {export_dir}/electra/4" in stdout
    discriminator = keras.saving.load_model(os.path.join(tiny_pretrained_dir, "discriminator.keras"))
    exports["electra"] = (discriminator, os.path.join(export_dir, "electra", "4"))
    # The command itself, once (the child runs the same code for every export).
    # The venv's own saved_model_cli: CI runs the venv's python without the venv on PATH.
    saved_model_cli = os.path.join(os.path.dirname(sys.executable), "saved_model_cli")
    cli = subprocess.Popen([saved_model_cli, "show", "--all", "--dir", exports["electra"][1]],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    return {"exports": exports, "tokenizer": tokenizer, "export_dir": export_dir, "cli": cli}


def _text_inputs(name, texts):
    """serving_default inputs of export `name` for a list of texts."""
    pairs = texts[1:] + texts[:1]
    if name in ("mnli", "stsb"):
        return {"text": texts, "text_pair": pairs}
    if name.startswith("squad"):
        return {"question": (QUESTIONS * len(texts))[:len(texts)], "context": texts}
    if name == "swag":
        return {"context": texts, "choices": [[text, "no", pair, ""] for text, pair in zip(texts, pairs)]}
    return {"text": texts}


def _examples(inputs):
    """Serialized tf.Examples with the text inputs as bytes features, as REST sends binary: {"b64": ...}."""
    rows = [dict(zip(inputs, values)) for values in zip(*inputs.values())]
    encode = lambda value: [v.encode() for v in (value if isinstance(value, list) else [value])]  # noqa: E731
    return [{"b64": base64.b64encode(tf.train.Example(features=tf.train.Features(feature={
        key: tf.train.Feature(bytes_list=tf.train.BytesList(value=encode(value))) for key, value in row.items()
    })).SerializeToString()).decode()} for row in rows]


def _reference_inputs(name, tokenizer):
    """Model inputs for TEXTS made by the Python featurization (what training uses)."""
    inputs = _text_inputs(name, TEXTS)
    if name == "swag":
        contexts = np.repeat(np.array(TEXTS, object), 4)
        flat = tokenizer.encode(tf.constant(contexts), tf.constant(np.ravel(inputs["choices"])), MAX_LEN)
        return {key: value.numpy().reshape(len(TEXTS), 4, MAX_LEN) for key, value in flat.items()}
    if name.startswith("squad"):
        features = _squad_features(tokenizer)[1]
        return {key: getattr(features, key) for key in IDS}
    if name == "conll2003":
        dataset, _ = tagging.tagging_dataset(_sentences(), tokenizer, LABELS[name], MAX_LEN, batch_size=64)
        return {key: value.numpy() for key, value in next(iter(dataset))[0].items()}
    flat = tokenizer.encode(tf.constant(inputs["text"]), tf.constant(inputs["text_pair"]) if "text_pair" in inputs
                            else None, MAX_LEN)
    return {key: value.numpy() for key, value in flat.items()}


def _squad_features(tokenizer):
    examples = [squad.SquadExample(str(i), q, c) for i, (q, c) in enumerate(zip(QUESTIONS, TEXTS))]
    features = squad.squad_features(examples, tokenizer, max_seq_length=MAX_LEN, max_query_length=8)
    assert len(features) == len(examples)  # one window each
    return examples, features


def _sentences():
    """TEXTS in words as the tagging export splits them (whitespace, and each CJK character a word)."""
    rows = featurize.split_words(tf.constant(TEXTS), own_words=featurize.CJK_WORDS).words.to_list()
    return [tagging.TaggedSentence(tuple(w.decode() for w in row), ("O",) * len(row)) for row in rows]


def _docs_rest_requests():
    """(model name, request JSON, documented response JSON) of each `curl` example in docs/serving.md."""
    text = DOCS.read_text(encoding="utf-8")
    pattern = re.compile(r"curl [^\n]*?/v1/models/(\w+):predict[^\n]*?-d '(.*?)'\n```\n+(?:[^`]*?)```json\n(.*?)```",
                         re.S)
    return [(name, json.loads(request), json.loads(response)) for name, request, response in pattern.findall(text)]


CHILD = r'''
import base64, contextlib, io, json, pickle, sys
import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2
from tensorflow.python.framework import op_def_registry
from tensorflow.python.tools import saved_model_cli

spec = json.load(open(sys.argv[1]))
result = {"unknown_ops": {}, "ops": {}, "outputs": {}, "session": {}, "cli": {}, "xla": {}}
for name, path in spec["exports"].items():  # before tensorflow_text registers its ops
    with contextlib.redirect_stdout(io.StringIO()) as shown:
        saved_model_cli._show_all(path)  # what `saved_model_cli show --all --dir path` prints
    result["cli"][name] = shown.getvalue()
    with open(path + "/saved_model.pb", "rb") as f:
        graph = saved_model_pb2.SavedModel.FromString(f.read()).meta_graphs[0].graph_def
    functions = {function.signature.name for function in graph.library.function}
    ops = {node.op for node in graph.node} | {node.op for f in graph.library.function for node in f.node_def}
    result["ops"][name] = sorted(ops - functions)
    result["xla"][name] = sorted(f.signature.name for f in graph.library.function if f.attr["_XlaMustCompile"].b)
    result["unknown_ops"][name] = sorted(op for op in ops - functions if op_def_registry.get(op) is None)

import tensorflow_text  # noqa: F401  registers the tf-text ops, as TF Serving links them

def ours(modules):  # this package, keras-hub, keras (tensorflow_text itself imports keras)
    return {m for m in modules if m.split(".")[0] in ("electra_tf", "keras_hub", "keras", "tools")}

before = ours(sys.modules)


def unjson(value):  # TF Serving's REST API: {"b64": ...} is binary
    if isinstance(value, list):
        return [unjson(v) for v in value]
    return base64.b64decode(value["b64"]) if isinstance(value, dict) else value


def tensor(value, spec):
    value = unjson(value)
    array = np.array(value, dtype=object if spec.dtype == tf.string else spec.dtype.as_numpy_dtype)
    if array.size == 0:
        array = array.reshape([0] + [d or 0 for d in spec.shape[1:]])
    return tf.constant(array, spec.dtype)


for name, path in spec["exports"].items():
    loaded = tf.saved_model.load(path)
    for signature, case, inputs in spec["requests"][name]:
        function = loaded.signatures[signature]
        specs = function.structured_input_signature[1]
        outputs = function(**{key: tensor(value, specs[key]) for key, value in inputs.items()})
        result["outputs"][name, signature, case] = {key: value.numpy() for key, value in outputs.items()}
    if name not in spec["session"]:
        continue
    # TF Serving loads a SavedModel into a session and feeds a SignatureDef's tensors by name.
    signature, case, inputs = spec["requests"][name][0]
    with tf.Graph().as_default() as graph, tf.compat.v1.Session(graph=graph) as session:
        definition = tf.compat.v1.saved_model.loader.load(session, ["serve"], path).signature_def[signature]
        feed = {definition.inputs[key].name: np.array(unjson(value), object) for key, value in inputs.items()}
        result["session"][name] = session.run({key: t.name for key, t in definition.outputs.items()}, feed)
result["modules"] = sorted(ours(sys.modules) - before)  # what loading and running the exports imported
result["packages"] = sorted({m.split(".")[0] for m in ours(sys.modules)})
with open(sys.argv[2], "wb") as f:
    pickle.dump(result, f)
'''


@pytest.fixture(scope="module")
def served(exported, tmp_path_factory):
    """The child's results: ops per export, outputs per (export, signature, case), session-API outputs."""
    folder = tmp_path_factory.mktemp("child")
    requests = {}
    for name in exported["exports"].keys() - COMPILED.keys():
        requests[name] = [
            ["serving_default", "texts", _text_inputs(name, TEXTS)],
            ["serving_default", "edge", _text_inputs(name, EDGE)],
            ["serving_default", "zero", _text_inputs(name, [])],
            ["serve_examples", "texts", {"examples": _examples(_text_inputs(name, TEXTS))}],
            ["serve_examples", "zero", {"examples": []}],
            ["serve_ids", "texts", {key: value.tolist() for key, value in
                                    _reference_inputs(name, exported["tokenizer"]).items()}],
        ]
    for index, (name, request, _) in enumerate(_docs_rest_requests()):
        requests[name].append([request.get("signature_name", "serving_default"), f"docs{index}", request["inputs"]])
    requests.update({name: requests[base] for name, base in COMPILED.items()})
    spec = {"exports": {name: path for name, (_, path) in exported["exports"].items()}, "requests": requests,
            "session": ["conll2003", "squad", "swag"]}
    (folder / "spec.json").write_text(json.dumps(spec))
    (folder / "child.py").write_text(CHILD)
    result = subprocess.run([sys.executable, str(folder / "child.py"), str(folder / "spec.json"),
                             str(folder / "result.pickle")], capture_output=True, text=True, timeout=600, env=ENV)
    assert result.returncode == 0, result.stderr[-5000:]
    with open(folder / "result.pickle", "rb") as f:
        return pickle.load(f)


def test_the_child_imports_only_tensorflow_and_tensorflow_text(served):
    assert served["modules"] == []
    assert not {"electra_tf", "keras_hub", "tools"} & set(served["packages"])


def test_graphs_use_core_ops_and_long_standing_tf_text_ops_only(served):
    for name, unknown in served["unknown_ops"].items():
        assert set(unknown) <= TF_TEXT_OPS and "FastWordpieceTokenizeWithOffsets" in unknown, name
        assert not {"PyFunc", "EagerPyFunc", "PyFuncStateless"} & set(served["ops"][name]), name


def _cli_signatures(output):
    """{signature: {"inputs"|"outputs": {name: (dtype, shape)}}} from `saved_model_cli show --all`."""
    signatures = {}
    for block in re.split(r"\nsignature_def\['", output)[1:]:
        name = block.split("'", 1)[0]
        parts = block.split("contains the following output(s):")
        signatures[name] = {side: {key: (dtype, shape) for key, dtype, shape in re.findall(
            r"\['(\w+)'\] tensor_info:\s+dtype: (\w+)\s+shape: ([^\n]+)", part)}
            for side, part in zip(("inputs", "outputs"), parts)}
    return signatures


def _cli_ops(output):
    """The op names `saved_model_cli show --all` lists."""
    return set(re.findall(r"'(\w+)'", output.split("contains the following ops:")[1].split("\n")[0]))


def _documented(task):
    """serving_default's (name → (dtype, rank or shape)) from the task's tables in docs/serving.md."""
    section = DOCS.read_text(encoding="utf-8").split(f"<!-- signature: {task} -->")[1].split("<!-- end -->")[0]
    dtypes = {"string": "DT_STRING", "float32": "DT_FLOAT", "int32": "DT_INT32", "bool": "DT_BOOL"}
    table = {}
    for side, name, dtype, shape in re.findall(r"^\| (in|out) \| `(\w+)` \| (\w+) \| `\[([^\]]*)\]` \|", section, re.M):
        # "batch" is dynamic (-1), a number is fixed, another name is the model's (any size).
        dims = tuple(-1 if d.strip() == "batch" else int(d) if d.strip().isdigit() else None for d in shape.split(","))
        table.setdefault({"in": "inputs", "out": "outputs"}[side], {})[name] = (dtypes[dtype], dims)
    return table


def _matches(shown, documented):
    """`saved_model_cli`'s (dtype, shape) per name against the documented (dtype, dims); None matches any size."""
    return shown.keys() == documented.keys() and all(
        shown[key][0] == documented[key][0] and len(shown[key][1]) == len(documented[key][1])
        and all(d is None or d == s for s, d in zip(shown[key][1], documented[key][1])) for key in shown)


def test_saved_model_cli_lists_the_documented_signatures(exported, served):
    stdout, stderr = exported["cli"].communicate(timeout=300)
    assert exported["cli"].returncode == 0, stderr[-3000:]
    assert _cli_signatures(stdout) == _cli_signatures(served["cli"]["electra"])
    assert _cli_ops(stdout) == _cli_ops(served["cli"]["electra"])
    # (The tokenizer's ops sit in `tf.cond` branches, which the CLI does not list: the child's scan finds them.)
    assert "EagerPyFunc" not in _cli_ops(stdout)
    for name, shown in served["cli"].items():
        name = COMPILED.get(name, name)  # a compiled export has its base's signatures
        signatures = _cli_signatures(shown)
        assert {"serving_default", "serve_ids", "serve_examples"} <= set(signatures), name
        cli = {side: {key: (dtype, tuple(int(d) for d in re.findall(r"-?\d+", shape)))
                      for key, (dtype, shape) in values.items()}
               for side, values in signatures["serving_default"].items()}
        documented = _documented(DOCUMENTED_AS.get(name, name))
        expected_outputs = {key: value for key, value in documented["outputs"].items()
                            if not (key == "label" and name not in LABELS)}
        assert _matches(cli["inputs"], documented["inputs"]), (name, cli["inputs"])
        assert _matches(cli["outputs"], expected_outputs), (name, cli["outputs"])
        assert signatures["serve_examples"]["outputs"] == signatures["serving_default"]["outputs"], name
        assert signatures["serve_examples"]["inputs"] == {"examples": ("DT_STRING", "(-1)")}, name
        ids_shape = "(-1, 4, -1)" if name == "swag" else "(-1, -1)"
        assert signatures["serve_ids"]["inputs"] == {key: ("DT_INT32", ids_shape) for key in IDS}, name
        assert {key: (dtype, len(re.findall(r"-?\d+", shape)))
                for key, (dtype, shape) in signatures["serve_ids"]["outputs"].items()} == ID_OUTPUTS[name], name


def _decode(array):
    """A numpy array of bytes (TF strings) as nested lists of str."""
    return np.vectorize(lambda value: value.decode(), otypes=[object])(array).tolist() if array.size else []


def _close(got, expected, name):
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5, err_msg=name)


def test_outputs_equal_the_in_process_models(exported, served):
    tokenizer = exported["tokenizer"]
    out = served["outputs"]
    for name, (model, _) in exported["exports"].items():
        if name in COMPILED:
            continue  # compared with its base export below
        inputs = _reference_inputs(name, tokenizer)
        expected = {key: np.asarray(value) for key, value in model(inputs, training=False).items()}
        text, ids = out[name, "serving_default", "texts"], out[name, "serve_ids", "texts"]
        if name == "electra":  # the raw-text path runs only up to the longest text: 0 on the padding after it
            _close(text["logits"], np.where(inputs["attention_mask"] > 0, expected["logits"], 0.0), name)
            _close(ids["replaced_probability"], tf.sigmoid(expected["logits"]) * inputs["attention_mask"], name)
            # The raw-text signature tokenized as the Python tokenizer does.
            vocabulary = np.array(tokenizer.get_vocabulary(), object)
            tokens = np.where(inputs["attention_mask"] > 0, vocabulary[inputs["input_ids"]], "")
            assert _decode(text["tokens"]) == tokens.tolist()
        elif name in ("mnli", "swag"):
            _close(text["logits"], expected["logits"], name)
            _close(ids["probabilities"], tf.nn.softmax(expected["logits"]), name)
            if name == "mnli":
                assert _decode(text["label"]) == [LABELS[name][i] for i in expected["logits"].argmax(-1)]
        elif name == "stsb":
            _close(text["score"], expected["logits"][:, 0], name)
        elif name == "conll2003":
            _close(ids["logits"], expected["logits"], name)
            positions = tagging.first_token_positions(_sentences(), tokenizer, MAX_LEN)
            probabilities = tf.nn.softmax(expected["logits"]).numpy()
            for row, first in enumerate(positions):
                word_probabilities = probabilities[row, first]
                n = len(first)
                assert text["label_id"][row, :n].tolist() == word_probabilities.argmax(-1).tolist()
                _close(text["probability"][row, :n], word_probabilities.max(-1), name)
                assert _decode(text["label"][row, :n]) == tagging.decode_tags(
                    expected["logits"][row:row + 1], [first], LABELS[name])[0]
        else:  # question answering: the best span as squad.postprocess picks it from the Keras outputs
            for key in expected:
                _close(ids[key], expected[key], f"{name} {key}")
            examples, features = _squad_features(tokenizer)
            version_2 = name == "squad"
            predictions, nbest, null_odds = squad.postprocess(examples, features, expected, version_2=version_2)
            for row, example in enumerate(examples):
                best = nbest[example.qas_id][0]
                assert (text["answer_start"][row], text["answer_end"][row]) == (best["char_start"], best["char_end"])
                assert text["answer"][row].decode() == example.context[best["char_start"]:best["char_end"]]
                assert text["score"][row] == pytest.approx(best["start_logit"] + best["end_logit"], abs=1e-5)
                assert text["null_odds"][row] == pytest.approx(null_odds[example.qas_id], abs=1e-5)
                assert predictions[example.qas_id] == (text["answer"][row].decode() if text["has_answer"][row] else "")


def test_compiled_exports_give_the_outputs_of_the_default_ones(served):
    """`compile=True`: every signature's model call under XLA, the same outputs (within 1e-5) on every request."""
    for name, base in COMPILED.items():
        assert served["xla"][name] and not served["xla"][base], name  # only the compiled export needs XLA
        cases = [key[1:] for key in served["outputs"] if key[0] == base]
        assert len(cases) >= 6, name
        for signature, case in cases:
            compiled, default = served["outputs"][name, signature, case], served["outputs"][base, signature, case]
            assert compiled.keys() == default.keys(), (name, signature, case)
            for key, value in default.items():
                where = f"{name} {signature} {case} {key}"
                assert compiled[key].shape == value.shape, where
                if value.dtype.kind == "f":
                    # (rtol: masked logits near -1e3 differ by their float32 rounding, 6e-5)
                    np.testing.assert_allclose(compiled[key], value, rtol=1e-6, atol=1e-5, err_msg=where)
                else:
                    np.testing.assert_array_equal(compiled[key], value, err_msg=where)
    assert not any(served["xla"][name] for name in served["xla"] if name not in COMPILED)  # stock TF Serving


def test_exports_hold_their_weights_as_constants(exported):
    """By default (`constant_weights=True`, the tool's too) the graphs hold the weights: the checkpoint is empty."""
    for name in ("electra", "mnli", "swag", "squad_xla"):
        path = exported["exports"][name][1]
        assert export_info(path)["constant_weights"], name
        assert [key for key, _ in tf.train.list_variables(os.path.join(path, "variables", "variables"))] == [
            "_CHECKPOINTABLE_OBJECT_GRAPH"], name


def test_examples_and_the_session_api_give_the_raw_text_outputs(exported, served):
    out = served["outputs"]
    for name in exported["exports"]:
        text = out[name, "serving_default", "texts"]
        others = [out[name, "serve_examples", "texts"]]
        others += [served["session"][name]] if name in served["session"] else []
        for other in others:
            assert other.keys() == text.keys(), name
            for key in text:
                np.testing.assert_allclose(other[key], text[key], rtol=0, atol=1e-6, err_msg=f"{name} {key}") \
                    if text[key].dtype.kind == "f" else np.testing.assert_array_equal(other[key], text[key])


def test_edge_cases_and_a_batch_of_zero_are_well_formed(exported, served):
    out = served["outputs"]
    for name in exported["exports"]:
        for case, texts in (("edge", EDGE), ("zero", [])):
            for signature in ("serving_default",) + (("serve_examples",) if case == "zero" else ()):
                outputs = out[name, signature, case]
                reference = out[name, "serving_default", "texts"]
                assert outputs.keys() == reference.keys(), name
                for key, value in outputs.items():
                    assert value.shape[0] == len(texts) and value.ndim == reference[key].ndim, (name, case, key)
                    assert value.dtype == reference[key].dtype, (name, case, key)
                    if value.dtype.kind == "f":
                        assert np.all(np.isfinite(value)), (name, case, key)
    edge = {name: out[name, "serving_default", "edge"] for name in exported["exports"]}
    assert edge["electra"]["tokens"][0, :3].tolist() == [b"[CLS]", b"[SEP]", b""]
    assert np.all(edge["electra"]["tokens"][1] != b"")  # the long text fills the sequence
    for row, text in enumerate(EDGE):
        starts, ends = edge["electra"]["token_start"][row], edge["electra"]["token_end"][row]
        assert np.all((-1 <= starts) & (starts <= ends) & (ends <= len(text)))
    tags = edge["conll2003"]
    assert tags["num_words"].tolist() == [len(text.split()) for text in EDGE]
    kept = int(np.sum(tags["label_id"][1] >= 0))  # the long text: the words whose pieces fit
    assert 1 <= kept <= MAX_LEN - 2 and np.all(tags["label_id"][1, kept:] == -1)
    assert set(_decode(tags["label"][1, kept:])) == {""} and tags["words"][1, kept + 5] == b"Serving"
    assert _decode(tags["words"][3, :3]) == EDGE[3].split()
    for name in ("squad", "squad_v1"):
        answers = edge[name]
        assert answers["answer"][0] == b"" and answers["answer_start"][0] == -1 and not answers["has_answer"][0]
        for row, context in enumerate(EDGE[1:], 1):
            start, end = answers["answer_start"][row], answers["answer_end"][row]
            assert 0 <= start < end <= len(context) and answers["answer"][row].decode() == context[start:end]


def test_the_documented_rest_requests_get_the_documented_outputs(served):
    documented = _docs_rest_requests()
    assert {name for name, _, _ in documented} == {"electra", "mnli", "stsb", "conll2003", "squad", "swag"}
    for index, (name, request, response) in enumerate(documented):
        signature = request.get("signature_name", "serving_default")
        outputs = served["outputs"][name, signature, f"docs{index}"]
        assert set(response["outputs"]) == set(outputs), name
        for key, value in response["outputs"].items():
            assert np.shape(value) == outputs[key].shape, (name, key)
            if outputs[key].dtype.kind in "SOU":
                assert value == _decode(outputs[key]), (name, key)
            elif outputs[key].dtype.kind == "f":
                np.testing.assert_allclose(value, outputs[key], atol=1e-4, err_msg=f"{name} {key}")
            else:
                assert np.array(value).tolist() == outputs[key].tolist(), (name, key)


def _python_blocks(heading):
    section = DOCS.read_text(encoding="utf-8").split(heading)[1]
    return re.findall(r"```python\n(.*?)```", section, re.S)[:2]


def test_the_documented_grpc_client_talks_to_a_predict_service(exported):
    """The README's gRPC example against a stand-in PredictionService that runs the export as TF Serving would."""
    from concurrent import futures

    import grpc
    from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc

    seen = []

    class PredictionService(prediction_service_pb2_grpc.PredictionServiceServicer):
        def Predict(self, request, context):
            seen.append(predict_pb2.PredictRequest.FromString(request.SerializeToString()))
            path = exported["exports"][request.model_spec.name][1]
            signature = tf.saved_model.load(path).signatures[request.model_spec.signature_name]
            specs = signature.structured_input_signature[1]
            assert set(request.inputs) == set(specs)
            outputs = signature(**{key: tf.constant(tf.make_ndarray(value), specs[key].dtype)
                                   for key, value in request.inputs.items()})
            response = predict_pb2.PredictResponse()
            response.model_spec.CopyFrom(request.model_spec)
            for key, value in outputs.items():
                response.outputs[key].CopyFrom(tf.make_tensor_proto(value.numpy()))
            return response

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=1))
    prediction_service_pb2_grpc.add_PredictionServiceServicer_to_server(PredictionService(), server)
    port = server.add_insecure_port("localhost:0")
    server.start()
    try:
        build, send = _python_blocks("\n## gRPC\n")
        namespace = {}
        exec(build, namespace)  # noqa: S102  the documented request
        exec(send.replace("localhost:8500", f"localhost:{port}"), namespace)  # noqa: S102
    finally:
        server.stop(None)
    (request,) = seen
    assert request.model_spec.name == "mnli" and request.model_spec.signature_name == "serving_default"
    assert set(request.inputs) == {"text", "text_pair"}
    assert all(value.dtype == tf.string.as_datatype_enum for value in request.inputs.values())
    assert _decode(namespace["labels"]) and set(_decode(namespace["labels"])) <= set(LABELS["mnli"])


def test_versions_count_up_and_are_never_overwritten_silently(exported):
    export_dir = exported["export_dir"]
    assert versions(os.path.join(export_dir, "electra")) == [3, 4]  # the tool wrote the next version
    model, path = exported["exports"]["stsb"]
    with pytest.raises(FileExistsError, match="exists"):
        export_model(model, exported["tokenizer"], export_dir, model_name="stsb", version=1, text_pair=True)
    assert not [name for name in os.listdir(os.path.join(export_dir, "stsb")) if name != "1"]  # no temporaries
    info = export_info(path)
    assert info["task"] == "regression" and info["text_inputs"] == ["text", "text_pair"]
    assert export_info(exported["exports"]["electra"][1])["task"] == "discriminator"


def test_an_overwritten_version_is_swapped_in_whole_and_the_old_one_served_until_then(exported, monkeypatch):
    model, path = exported["exports"]["stsb"]
    old_folder = os.stat(path).st_ino
    original_exchange = atomic._exchange

    def exchange(new, old):  # the moment of the swap: the old version still whole where the server reads it
        assert os.stat(old).st_ino == old_folder and os.path.exists(os.path.join(old, "saved_model.pb"))
        assert export_info(old)["task"] == "regression"
        return original_exchange(new, old)

    monkeypatch.setattr(atomic, "_exchange", exchange)
    again = export_model(model, exported["tokenizer"], exported["export_dir"], model_name="stsb",
                         version=int(os.path.basename(path)), max_seq_length=MAX_LEN, overwrite=True,
                         text_pair=True)  # (the settings it was exported with: later tests read it)
    assert again == path and os.stat(path).st_ino != old_folder and export_info(path)["task"] == "regression"
    assert sorted(os.listdir(os.path.dirname(path))) == [os.path.basename(path)]  # nothing set aside is left


def test_bad_export_requests_are_refused(exported):
    model, _ = exported["exports"]["mnli"]
    tokenizer = exported["tokenizer"]
    with pytest.raises(ValueError, match="2 label names for a model with 3 labels"):
        export_model(model, tokenizer, exported["export_dir"], label_names=["a", "b"])
    with pytest.raises(ValueError, match="max_seq_length must be in 3..128"):
        export_model(model, tokenizer, exported["export_dir"], max_seq_length=512)
    squad_model, _ = exported["exports"]["squad"]
    with pytest.raises(ValueError, match="max_query_length"):
        export_model(squad_model, tokenizer, exported["export_dir"], max_seq_length=32)
    with pytest.raises(ValueError, match="cannot serve"):
        export_model(model.backbone, tokenizer, exported["export_dir"])
    bare = ElectraForSequenceClassification(model.config, num_labels=3)  # no preprocessor: no tokenizer of its own
    for export in (export_model, export_onnx, export_litert):
        with pytest.raises(ValueError, match="no tokenizer: pass the one the Electra\\w+ was "
                                             "trained with, or export a model that has a preprocessor"):
            export(bare, None, exported["export_dir"])
    short = ElectraForSequenceClassification(bare.config.replace(max_position_embeddings=64), num_labels=3)
    assert make_serving_task(short, tokenizer).max_seq_length == 64  # its positions, not 128, unless given
