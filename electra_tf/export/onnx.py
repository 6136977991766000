"""ONNX exports of any served model (`model.onnx`: token ids in, for ONNX Runtime, OpenVINO, Triton): the `serve_ids`
function converted by tf2onnx and rewritten into transformers' BERT graph (docs/serving.md, "ONNX").

Example (converting takes seconds, so not run here):
>>> path = export_onnx(model, tokenizer, "exports", model_name="sst2", precision="int8")  # doctest: +SKIP
>>> import onnxruntime  # doctest: +SKIP
>>> session = onnxruntime.InferenceSession(f"{path}/model.onnx")  # doctest: +SKIP
>>> batch = ElectraTokenizer.from_pretrained(path).encode(["A fine film."], sequence_length=64)  # doctest: +SKIP
>>> session.run(["probabilities"], {name: value.numpy() for name, value in batch.items()})  # doctest: +SKIP
"""

import os
import tempfile

import tensorflow as tf

from electra_tf.export.ids_folder import write_ids_export
from electra_tf.export.onnx_text import TEXT_MODEL_FILE, require, text_model_wanted, with_tokenizer
from electra_tf.export.signatures import make_serving_task

MODEL_FILE = "model.onnx"
PRECISIONS = ("fp32", "int8")
OPSET = 17
EXTRA = 'the ONNX export needs tf2onnx, onnx and onnxruntime: pip install ".[onnx]" in an electra_tf checkout (or pip install tf2onnx onnx onnxruntime)'


def require_onnx():
    """Refuses, in one line saying how to install them, a missing package of the ONNX export."""
    for module in ("tf2onnx", "onnx", "onnxruntime"):
        require(module, EXTRA)


def numeric_outputs(task):
    """`task.serve_ids` without its string outputs (label names: they are in `export_info.json`)."""

    def serve_ids(input_ids, attention_mask, token_type_ids):
        outputs = task.serve_ids(input_ids, attention_mask, token_type_ids)
        return {name: value for name, value in outputs.items() if value.dtype != tf.string}

    return tf.function(serve_ids, input_signature=task.ids_signature())


def _select_as_where(ctx, node, name, args):
    """tf2onnx's handler for TF's `SelectV2` (`tf.where`): ONNX's `Where`, which broadcasts as it does. tf2onnx's
    own writes a float select as `cond·x + (1 − cond)·y` unless an operand is a constant holding inf, so a
    computed -inf (a masked score) becomes NaN (-inf · 0)."""
    del ctx, name, args
    node.type = "Where"


def convert(task, precision, function):
    """The ONNX bytes of `function` (`numeric_outputs(task)`) at `precision`."""
    tf2onnx = require("tf2onnx", EXTRA)
    proto, _ = tf2onnx.convert.from_function(function, input_signature=task.ids_signature(),
                                             opset=OPSET, custom_op_handlers={"SelectV2": (_select_as_where, [])})
    require("electra_tf.export.onnx_fusion", EXTRA).as_transformers_graph(proto, task.model.config.num_heads)
    if precision == "fp32":
        return proto.SerializeToString()
    quantization = require("onnxruntime.quantization", EXTRA)
    with tempfile.TemporaryDirectory() as tmp:
        fp32, int8 = os.path.join(tmp, "fp32.onnx"), os.path.join(tmp, "int8.onnx")
        with open(fp32, "wb") as f:
            f.write(proto.SerializeToString())
        quantization.quantize_dynamic(fp32, int8, weight_type=quantization.QuantType.QInt8)
        with open(int8, "rb") as f:
            return f.read()


def export_onnx(model, tokenizer, export_dir, model_name="electra", version=None, max_seq_length=None,
                label_names=None, overwrite=False, precision="fp32", text_model=None, **options):
    """Writes an ONNX export of a discriminator or any task model; returns its folder. Arguments as `export_model`'s;
    `precision`: "fp32" or "int8"; `text_model`: also write `text_model.onnx` (default: where it can be written)."""
    if precision not in PRECISIONS:
        raise ValueError(f"an ONNX export is fp32 or int8, got --precision={precision}")
    require_onnx()  # before any work
    task = make_serving_task(model, tokenizer, max_seq_length, label_names, **options)
    text_model = text_model_wanted(task, text_model)
    function = numeric_outputs(task)
    outputs = sorted(function.get_concrete_function().structured_outputs)  # traced once, converted from that
    versions = {name: require(name, EXTRA).__version__
                for name in ("tf2onnx", "onnx", *(["onnxruntime_extensions"] if text_model else []))}
    beside = (lambda model_bytes: {TEXT_MODEL_FILE: with_tokenizer(model_bytes, task.tokenizer, task.max_seq_length,
                                                                   task.text_inputs)}) if text_model else None
    return write_ids_export(task, export_dir, model_name, version, overwrite, MODEL_FILE,
                            lambda: convert(task, precision, function),
                            {"format": "onnx", "precision": precision, "opset": OPSET, "outputs": outputs,
                             "text_model": TEXT_MODEL_FILE if text_model else None, "built_with": versions},
                            beside=beside)
