"""Querying an export in Python as TF Serving would run it: load the SavedModel, call a signature.

Loading needs only `tensorflow` and `tensorflow_text` (imported here: it
registers the tokenizer ops); nothing of this package runs inside the export.

Example (after `export_model`, not run here):
>>> query_export("exports/sst2/1", text=["a gripping film"])  # doctest: +SKIP
{'label': array(['positive'], dtype=object), 'label_id': array([1], dtype=int32), ...}
"""

import os

import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the tf-text ops the graph uses)

from electra_tf.util.atomic import read_json
from electra_tf.export.archive import INFO_FILE


def load_export(path):
    """The loaded SavedModel (`.signatures[name]` are its signatures)."""
    return tf.saved_model.load(path)


def export_info(path):
    """What `export_model` recorded in `assets.extra/export_info.json` (task, text inputs, labels, ...)."""
    return read_json(os.path.join(path, INFO_FILE), expect=dict)


def query_export(path, *texts, signature="serving_default", **inputs):
    """Runs a signature of the export at `path`, returning numpy outputs (strings as `str`, not bytes).

    Inputs by name (`text=[...]`, `question=..., context=...`, `input_ids=...`),
    or, for `serving_default`, raw texts in the order of the export's text
    inputs: `(texts,)`, `(texts, text_pairs)`, `(questions, contexts)`,
    `(contexts, choices)`.
    """
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
