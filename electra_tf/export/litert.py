"""LiteRT (TensorFlow Lite) exports of a classifier for on-device use: `model.tflite` (token ids in: the raw-text
graph's ops have no TFLite kernels) and what an app needs beside it (docs/serving.md, "LiteRT").

Example (converting takes a few seconds, so not run here):
>>> export_litert(model, tokenizer, "exports", model_name="sst2", precision="int8")  # doctest: +SKIP
'exports/sst2/1'
"""

import tempfile

import keras
import tensorflow as tf

from electra_tf.export.ids_folder import write_ids_export
from electra_tf.export.signatures import make_serving_task

MODEL_FILE = "model.tflite"
PRECISIONS = ("fp32", "int8")
OUTPUTS = ("logits", "probabilities", "label_id")


def convert(task, precision="fp32", calibration=None):
    """The `.tflite` bytes of `task.serve_ids` (a classifier's); int8 with `calibration` (batches of `{name: ids}`) is
    full-integer quantization."""
    def serve_ids(input_ids, attention_mask, token_type_ids):
        # A batch of zero rows gets zero rows, as from the SavedModel: LiteRT's kernels refuse empty tensors
        # (UNPACK), so the model then runs on one padding row, dropped from the outputs.
        batch = tf.shape(input_ids)[0]
        padding = [[0, tf.maximum(1 - batch, 0)], [0, 0]]
        outputs = task.serve_ids(*(tf.pad(ids, padding) for ids in (input_ids, attention_mask, token_type_ids)))
        return {name: outputs[name][:batch] for name in OUTPUTS}  # label names are in export_info.json

    # Keras's own route, which freezes the weights; not `model.export(format="litert")` itself, which serves the
    # logits alone and allows Flex ops a stock LiteRT runtime lacks.
    archive = keras.export.ExportArchive()
    archive.track(task.model)
    archive.add_endpoint("serving_default", serve_ids, input_signature=task.ids_signature())
    with tempfile.TemporaryDirectory() as saved_model:
        archive.write_out(saved_model, verbose=False)
        converter = tf.lite.TFLiteConverter.from_saved_model(saved_model)
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
        if precision == "int8":
            converter.optimizations = [tf.lite.Optimize.DEFAULT]
        if precision == "int8" and calibration is not None:
            converter.representative_dataset = lambda: iter(calibration)
            converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8, tf.lite.OpsSet.TFLITE_BUILTINS]
        return converter.convert()


def export_litert(model, tokenizer, export_dir, model_name="electra", version=None, max_seq_length=None,
                  label_names=None, overwrite=False, precision="fp32", text_pair=False):
    """Writes a LiteRT export of a classifier; returns its folder. Arguments as `export_model`'s; `precision`: "fp32"
    or "int8" (dynamic-range quantization)."""
    if precision not in PRECISIONS:
        raise ValueError(f"a LiteRT export is fp32 or int8, got --precision={precision}")
    if getattr(model, "serving_task", None) != "classification":
        raise ValueError(f"a LiteRT export is of a classifier (ElectraForSequenceClassification with 2 or more "
                         f"labels), not a {type(model).__name__} ({getattr(model, 'serving_task', None)})")
    task = make_serving_task(model, tokenizer, max_seq_length, label_names, text_pair=text_pair)
    return write_ids_export(task, export_dir, model_name, version, overwrite, MODEL_FILE,
                            lambda: convert(task, precision),
                            {"format": "litert", "precision": precision, "signature": "serving_default",
                             "outputs": list(OUTPUTS)})
