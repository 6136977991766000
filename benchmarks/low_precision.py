"""Accuracy of the low-precision and LiteRT exports of a fine-tuned classifier against fp32, on held-out data.

    make demo && python benchmarks/low_precision.py --model=runs/demo/docstring_kinds/classifier \
        --dev_file=runs/demo/docstring_kinds/dev.jsonl

Exports `--model` (a classifier folder, as `electra-finetune` or the demo writes
one) as SavedModels at fp32, bf16 and int8 (`electra_tf.export.export_model`,
`precision=`) and as LiteRT fp32 and int8 (`electra_tf.export.litert`), runs each
on every text of `--dev_file` (JSON lines with `text` and `label`): the
SavedModels on raw text (`serving_default`, as TF Serving would), LiteRT on the
same texts' token ids (`tf.lite.Interpreter`), and as ONNX fp32 and int8 (`electra_tf.export.onnx`, in ONNX
Runtime on the same ids), and prints per export: accuracy,
its difference from fp32 in points, predictions that differ from fp32's, the
largest probability difference, and the size on disk (a SavedModel's whole folder, vocabulary included). Speed is in
`benchmarks/serving.py --low_precision=...`.
"""

import json
import os
import shutil
import tempfile

import numpy as np
from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_string("model", None, "A fine-tuned classifier folder.", required=True)
flags.DEFINE_string("dev_file", None, "Held-out JSON lines with `text` and `label`.", required=True)
flags.DEFINE_integer("batch_size", 32, "Texts per call.")
flags.DEFINE_string("json", None, "Also write the table to this JSON file.")


def folder_bytes(path):
    return sum(os.path.getsize(os.path.join(root, name)) for root, _, names in os.walk(path) for name in names)


def main(argv):
    del argv
    from electra_tf.tools.common import quiet_libraries

    quiet_libraries()
    import tensorflow as tf

    from electra_tf.text import featurize
    from electra_tf.util.atomic import write_json
    from electra_tf.checkpoints.convert import load_model
    from electra_tf.export import export_model, load_export
    from electra_tf.export import litert, onnx
    from electra_tf.export.precision import cpu_flags
    from electra_tf.checkpoints.tokenizer_files import load_tokenizer

    model, info = load_model(FLAGS.model)
    tokenizer = load_tokenizer(FLAGS.model)
    labels, length = list(info["label_names"]), int(info.get("max_seq_length") or 128)
    with open(FLAGS.dev_file, encoding="utf-8") as f:
        examples = [json.loads(line) for line in f if line.strip()]
    texts = [example["text"] for example in examples]
    gold = np.array([labels.index(example["label"]) for example in examples])
    encode = tf.function(lambda t: featurize.encode(tokenizer, length, t, pad_to_max_length=False),
                         input_signature=[tf.TensorSpec([None], tf.string)])
    batches = [texts[i:i + FLAGS.batch_size] for i in range(0, len(texts), FLAGS.batch_size)]
    work = tempfile.mkdtemp(prefix="electra_low_precision_")
    try:
        probabilities, sizes = {}, {}
        for precision in ("fp32", "bf16", "int8"):
            path = export_model(model, tokenizer, work, model_name=precision, max_seq_length=length,
                                label_names=labels, precision=precision)
            serve = load_export(path).signatures["serving_default"]
            probabilities[precision] = np.concatenate(
                [serve(text=tf.constant(batch))["probabilities"].numpy() for batch in batches])
            sizes[precision] = folder_bytes(path)  # the weights are graph constants (or variables)
        for precision in ("fp32", "int8"):
            path = litert.export_litert(model, tokenizer, work, model_name=f"litert_{precision}",
                                        max_seq_length=length, label_names=labels, precision=precision)
            runner = tf.lite.Interpreter(model_path=os.path.join(path, litert.MODEL_FILE)).get_signature_runner()
            probabilities[f"litert_{precision}"] = np.concatenate(
                [runner(**{k: v.numpy() for k, v in encode(tf.constant(batch)).items()})["probabilities"]
                 for batch in batches])
            sizes[f"litert_{precision}"] = os.path.getsize(os.path.join(path, litert.MODEL_FILE))
        import onnxruntime

        for precision in ("fp32", "int8"):
            path = onnx.export_onnx(model, tokenizer, work, model_name=f"onnx_{precision}", max_seq_length=length,
                                    label_names=labels, precision=precision)
            session = onnxruntime.InferenceSession(os.path.join(path, onnx.MODEL_FILE),
                                                   providers=["CPUExecutionProvider"])
            probabilities[f"onnx_{precision}"] = np.concatenate(
                [session.run(["probabilities"], {k: v.numpy() for k, v in encode(tf.constant(batch)).items()})[0]
                 for batch in batches])
            sizes[f"onnx_{precision}"] = os.path.getsize(os.path.join(path, onnx.MODEL_FILE))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    wanted = ("avx512_bf16", "amx_bf16", "avx512_vnni", "amx_int8")
    print(f"{FLAGS.model}: {len(texts)} held-out texts, {len(labels)} labels, max_seq_length {length}; "
          f"CPU flags: {' '.join(flag for flag in wanted if flag in cpu_flags()) or 'none of ' + ' '.join(wanted)}")
    header = f"{'export':<12} {'accuracy':>8} {'vs fp32':>8} {'differ':>6} {'max |dp|':>9} {'MB':>7}"
    print(header + "\n" + "-" * len(header))
    reference = probabilities["fp32"]
    rows = []
    for name, values in probabilities.items():
        accuracy = float(np.mean(values.argmax(-1) == gold))
        row = {"export": name, "accuracy": accuracy,
               "points_vs_fp32": 100 * (accuracy - float(np.mean(reference.argmax(-1) == gold))),
               "predictions_differing": int(np.sum(values.argmax(-1) != reference.argmax(-1))),
               "max_probability_difference": float(np.abs(values - reference).max()), "bytes": sizes[name]}
        rows.append(row)
        print(f"{name:<12} {accuracy:8.4f} {row['points_vs_fp32']:+8.2f} {row['predictions_differing']:6d} "
              f"{row['max_probability_difference']:9.2e} {sizes[name] / 2 ** 20:7.2f}")
    if FLAGS.json:
        write_json(FLAGS.json, {"rows": rows, "examples": len(texts), "model": FLAGS.model})


if __name__ == "__main__":
    app.run(main)
