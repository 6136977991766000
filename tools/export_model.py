"""What `electra-export` does: its `main`.

Its flags and `--help` text are in `export_model_flags.py`, which the console script parses before this module
(and TensorFlow) is imported.
"""

import os

from electra_tf.atomic import read_json
from electra_tf.convert import load_model
from electra_tf.export import export_info, export_model, task_of
from electra_tf.export.ids_folder import INFO_FILE
from electra_tf.export.litert import export_litert
from electra_tf.export.onnx import export_onnx, require_onnx
from electra_tf.export.precision import check_cpu
from electra_tf.finetuning.trainer import check_vocabulary_size
from electra_tf.folder_lock import lock_folder
from electra_tf.tokenization import ElectraTokenizer
from electra_tf.tools.common import exits_cleanly_on_bad_input, resolve_checkpoint_flags, run_tool
from electra_tf.tools.export_model_flags import FLAGS


def given(flag, info, default=None):
    """A flag's value when given, else what the model folder says, else `default`."""
    value = FLAGS[flag].value
    return value if value is not None else info.get(flag, default) if info.get(flag) is not None else default


@exits_cleanly_on_bad_input
def main(argv):
    del argv
    if FLAGS.format != "saved_model":
        if FLAGS.precision == "bf16":
            raise ValueError(f"--format={FLAGS.format} is --precision=fp32 or int8 (no bfloat16 model)")
        if FLAGS.compile:
            raise ValueError(f"--compile is for --format=saved_model (--format={FLAGS.format} is not XLA-compiled)")
    if FLAGS.format == "onnx":
        require_onnx()
    check_cpu(FLAGS.precision)
    resolve_checkpoint_flags("model")
    lock_folder(os.path.join(FLAGS.export_dir, FLAGS.model_name))  # one export per model name at a time
    if FLAGS.model.endswith(".keras") and not os.path.isfile(FLAGS.model):
        raise ValueError(f"{FLAGS.model}: no such file")
    model, info = load_model(FLAGS.model)
    try:
        tokenizer = ElectraTokenizer.from_pretrained(FLAGS.vocab or FLAGS.model, lowercase=FLAGS.lowercase,
                                                     strip_accents=FLAGS.strip_accents)
    except ValueError as e:
        raise ValueError(f"{e} (pass --vocab)" if not FLAGS.vocab else str(e)) from None
    check_vocabulary_size(tokenizer, model, FLAGS.model, FLAGS.vocab)
    task = task_of(model)
    if FLAGS.format == "litert" and task != "classification":
        raise ValueError(f"--format=litert exports a classifier; {FLAGS.model} is a {task} model")
    options = {}
    if task in ("classification", "regression"):
        options["text_pair"] = given("text_pair", info, False)
    elif FLAGS.text_pair:
        raise ValueError(f"--text_pair is for classification and regression, not {task}")
    if task == "question_answering":
        options.update(max_query_length=given("max_query_length", info, 64),
                       max_answer_length=given("max_answer_length", info, 30),
                       version_2=FLAGS.squad_v2 if FLAGS.squad_v2 is not None else info.get("version_2"),
                       null_threshold=given("null_threshold", info))
    label_names = FLAGS.label_names or (info.get("label_names") if task in ("classification", "tagging") else None)
    length = given("max_seq_length", info, 128)
    if FLAGS.format == "onnx":
        path = export_onnx(model, tokenizer, FLAGS.export_dir, model_name=FLAGS.model_name, version=FLAGS.version,
                           max_seq_length=length, label_names=label_names, overwrite=FLAGS.overwrite,
                           precision=FLAGS.precision, **options)
        info = read_json(os.path.join(path, INFO_FILE))
        size = os.path.getsize(os.path.join(path, info["model_file"]))
        print(f"{task} model → {path}/{info['model_file']} ({size / 2 ** 20:.1f} MB, {FLAGS.precision}; token ids in: "
              f"input_ids, attention_mask, token_type_ids; outputs: {', '.join(info['outputs'])}; vocab.txt and "
              "export_info.json beside it)")
        return
    if FLAGS.format == "litert":
        path = export_litert(model, tokenizer, FLAGS.export_dir, model_name=FLAGS.model_name, version=FLAGS.version,
                             max_seq_length=length, label_names=label_names, overwrite=FLAGS.overwrite,
                             precision=FLAGS.precision, **options)
        size = os.path.getsize(os.path.join(path, "model.tflite"))
        print(f"{task} model → {path}/model.tflite ({size / 2 ** 20:.1f} MB, {FLAGS.precision}; token ids in: "
              f"input_ids, attention_mask, token_type_ids; vocab.txt and export_info.json beside it)")
        return
    path = export_model(model, tokenizer, FLAGS.export_dir, model_name=FLAGS.model_name, version=FLAGS.version,
                        max_seq_length=length, label_names=label_names,
                        overwrite=FLAGS.overwrite, pad_to_max_length=FLAGS.pad_to_max_length,
                        compile=FLAGS.compile, precision=FLAGS.precision, constant_weights=FLAGS.constant_weights,
                        **options)
    info = export_info(path)
    print(f"{task} model → {path}")
    print(f"signatures: {', '.join(info['signatures'])}; serving_default takes {', '.join(info['text_inputs'])}")
    if FLAGS.precision != "fp32":
        print(f"precision: {FLAGS.precision} (outputs in float32)")
    if info.get("compiled"):
        print("compiled with XLA: serve it with tensorflow_model_server --xla_cpu_compilation_enabled=true")


if __name__ == "__main__":  # python -m electra_tf.tools.export_model (the console script: electra_tf_cli)
    run_tool(main, "electra_tf.tools.export_model_flags")
