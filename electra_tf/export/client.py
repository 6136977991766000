"""Querying an export in Python as TF Serving would run it (only `tensorflow` and `tensorflow_text` load it), or an
ONNX export's text model in ONNX Runtime, on the same raw texts.

Example (after `export_model`, not run here):
>>> query_export("exports/sst2/1", text=["a gripping film"])  # doctest: +SKIP
{'label': array(['positive'], dtype=object), 'label_id': array([1], dtype=int32), ...}
"""

import os

import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the tf-text ops the graph uses)

from electra_tf.util.atomic import read_json
from electra_tf.export.ids_folder import INFO_FILE as IDS_INFO_FILE
from electra_tf.export.archive import INFO_FILE
from electra_tf.export.onnx_text import query_text_model, text_model_path

# The exports of token ids (`ids_folder`), by their `format`: what they are, and what runs them.
RUNNERS = {"onnx": ("an ONNX", "onnxruntime.InferenceSession"), "litert": ("a LiteRT", "tf.lite.Interpreter")}


def load_export(path):
    """The loaded SavedModel (`.signatures[name]` are its signatures)."""
    check_saved_model(path)
    return tf.saved_model.load(path)


def check_saved_model(path):
    """Refuses, in one line saying what `path` is, a folder that is not a SavedModel export (an ONNX or LiteRT one)."""
    if os.path.isfile(os.path.join(path, "saved_model.pb")):
        return
    info_file = os.path.join(path, IDS_INFO_FILE)
    if os.path.isfile(info_file):
        info = read_json(info_file, expect=dict)
        kind, runner = RUNNERS.get(info.get("format"), (f"a {info.get('format')}", "its runtime"))
        raise ValueError(f"{path} is {kind} export ({info.get('model_file')}, token ids in), not a SavedModel: run "
                         f"it with {runner} on the ids of the tokenizer beside it (docs/serving.md)")
    raise ValueError(f"{path} holds no export (no saved_model.pb): give a version folder such as "
                     f"<export_dir>/<model_name>/1")


def export_info(path):
    """What `export_model` recorded in `assets.extra/export_info.json` (task, text inputs, labels, ...)."""
    check_saved_model(path)
    return read_json(os.path.join(path, INFO_FILE), expect=dict)


def query_export(path, *texts, signature="serving_default", **inputs):
    """Runs a signature of the export at `path`; numpy outputs (strings as `str`). Inputs by name (`text=[...]`,
    `input_ids=...`) or, for `serving_default`, the raw texts in the order of the export's text inputs."""
    if text_model_path(path):
        if signature != "serving_default":
            raise ValueError(f"{path} is an ONNX export: its text model takes raw texts, it has no {signature}")
        return query_text_model(path, *texts, **inputs)
    if texts:
        if signature != "serving_default" or inputs:
            raise ValueError("positional inputs are the raw texts of serving_default; name any other inputs")
        names = export_info(path)["text_inputs"]
        if len(texts) != len(names):
            raise ValueError(f"{signature} takes {names}, got {len(texts)} input(s)")
        inputs = dict(zip(names, texts))
    function = load_export(path).signatures[signature]
    specs = function.structured_input_signature[1]
    if set(inputs) != set(specs):
        raise ValueError(f"{signature} takes {sorted(specs)}, got {sorted(inputs)}")
    outputs = function(**{name: tf.constant(value, specs[name].dtype) for name, value in inputs.items()})
    return {name: _as_str(value.numpy()) if value.dtype == tf.string else value.numpy()
            for name, value in outputs.items()}


def _as_str(values):
    """A numpy array of UTF-8 bytes as one of `str` (object dtype, as TensorFlow gives strings)."""
    return np.vectorize(lambda value: value.decode("utf-8"), otypes=[object])(values)
