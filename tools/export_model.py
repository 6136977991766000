r"""Exports a pre-trained discriminator or a fine-tuned model for TF Serving: `<export_dir>/<model_name>/<version>/`.

    python -m electra_tf.tools.export_model --model=runs/sst2/trial_0/model --export_dir=exports --model_name=sst2

- --model: a model folder (`tools/run_finetuning.py` writes one per trial, `save_pretrained` writes them):
  it says what it holds, so nothing else is needed — the tokenizer, label names, length and task options
  come from the folder. Also a `.keras` model, or a pre-trained checkpoint in any format `from_pretrained`
  reads (our `final/` folder, a Hugging Face folder with its class, a Google checkpoint: the discriminator,
  serving per-token replaced probabilities).
- Flags override what the folder says: --vocab (a `vocab.txt`/`tokenizer.json` or a folder holding one),
  --lowercase/--strip_accents, --label_names, --max_seq_length, --text_pair, the QA options. A vocabulary
  of another size than the model's embedding table is refused.
- Signatures: `serving_default` (raw text, tokenized in the graph), `serve_ids`, `serve_examples`;
  see docs/serving.md. --compile compiles the model call with XLA (TF Serving then needs
  --xla_cpu_compilation_enabled). --precision=bf16|int8 exports the model in bfloat16 (refused on a CPU without
  AVX512-BF16 or AMX) or Keras's int8 quantization. --format=litert writes a LiteRT (TensorFlow Lite) model of a
  classifier instead (token ids in; fp32, or --precision=int8 for dynamic-range quantization); --format=onnx an
  ONNX model of any served model (token ids in; fp32, or --precision=int8: ONNX Runtime's dynamic quantization).
  The version is one more than the highest present unless --version is given; an existing version is kept unless
  --overwrite.
"""

import os

from absl import flags

from electra_tf.util.atomic import read_json
from electra_tf.util.folder_lock import lock_folder
from electra_tf.tools.common import (
    check_hub_flags,
    define_hub_flags,
    exits_cleanly_on_bad_input,
    push_output,
    resolve_checkpoint_flags,
    run_tool,
)

FLAGS = flags.FLAGS
flags.DEFINE_string("model", None, "A .keras model, or a pre-trained checkpoint (its discriminator).",
                    required=True)
flags.DEFINE_string("export_dir", None, "The base folder TF Serving mounts.", required=True)
flags.DEFINE_string("model_name", "electra", "The model's name in TF Serving (a folder under --export_dir).")
flags.DEFINE_integer("version", None, "The version number (default: one more than the highest present).")
flags.DEFINE_string("vocab", None, "vocab.txt, tokenizer.json or a folder holding one (default: in or beside "
                    "--model).")
flags.DEFINE_bool("lowercase", None, "Lower-case the text, as the model was trained (default: as the tokenizer "
                  "files say, else lower-case).")
flags.DEFINE_bool("strip_accents", None, "Strip accents (default: as --lowercase).")
flags.DEFINE_integer("max_seq_length", None, "Raw text is truncated at this many tokens (default: the "
                     "model folder's, else the model's positions up to 128).")
flags.DEFINE_list("label_names", None, "Class or tag names, in id order (default: the model folder's).")
flags.DEFINE_bool("text_pair", None, "Classification/regression on sentence pairs: a second text input (default: "
                  "the model folder's, else single texts).")
flags.DEFINE_integer("max_query_length", None, "Question answering: question tokens kept (default: the model "
                     "folder's, else 64).")
flags.DEFINE_integer("max_answer_length", None, "Question answering: longest answer, in tokens (default: the "
                     "model folder's, else 30).")
flags.DEFINE_bool("squad_v2", None, "Question answering: may answer nothing (default: when the model has "
                  "the answerable classifier).")
flags.DEFINE_float("null_threshold", None, "Question answering, SQuAD 2.0: no answer above these null odds "
                   "(default -2.75 with the answerable classifier, else 0.0).")
flags.DEFINE_bool("overwrite", False, "Replace an existing version.")
flags.DEFINE_bool("compile", False, "Compile the model call of every signature with XLA (faster on short requests); "
                  "TF Serving then needs --xla_cpu_compilation_enabled, see docs/serving.md.")
flags.DEFINE_bool("constant_weights", True, "Hold the weights as constants of the serving graph (folded and laid "
                  "out once: faster on short requests; not above 1 GiB of weights), else as variables.")
flags.DEFINE_bool("pad_to_max_length", False, "Pad every request to --max_seq_length (fixed shapes, e.g. for XLA); "
                  "by default a request is padded to its longest text, with the same outputs.")
flags.DEFINE_enum("precision", "fp32", ["fp32", "bf16", "int8"], "Weights and compute: bf16 needs a CPU with "
                  "AVX512-BF16 or AMX; int8 is Keras's int8 quantization (LiteRT: dynamic-range), see docs/serving.md.")
flags.DEFINE_enum("format", "saved_model", ["saved_model", "litert", "onnx"], "saved_model: for TF Serving; "
                  "litert: a classifier as model.tflite; onnx: any model as model.onnx (ONNX Runtime, OpenVINO; the "
                  "onnx extra); both take token ids, with the vocabulary, config and labels beside the model file.")

flags.DEFINE_bool("text_model", None, "--format=onnx: also write text_model.onnx, raw text in (the tokenizer as "
                  "onnxruntime-extensions ops before the model; a discriminator, classifier or regressor). Default: "
                  "when onnxruntime-extensions is installed and the model is one of those.")

define_hub_flags()


def given(flag, info, default=None):
    """A flag's value when given, else what the model folder says, else `default`."""
    value = FLAGS[flag].value
    return value if value is not None else info.get(flag, default) if info.get(flag) is not None else default


@exits_cleanly_on_bad_input
def run(argv):
    del argv
    from electra_tf.checkpoints.convert import load_model  # (these load TensorFlow: not for --help)
    from electra_tf.export import task_of
    from electra_tf.export.ids_folder import INFO_FILE
    from electra_tf.export.litert import export_litert
    from electra_tf.export.onnx import export_onnx, require_onnx
    from electra_tf.export.cpu_advice import export_flags, fastest_exports
    from electra_tf.export.precision import check_cpu
    from electra_tf.finetuning.trainer import check_vocabulary_size
    from electra_tf.checkpoints.tokenizer_files import load_tokenizer

    if FLAGS.text_model and FLAGS.format != "onnx":
        raise ValueError(f"--text_model is for --format=onnx, not --format={FLAGS.format}")
    if FLAGS.format != "saved_model":
        if FLAGS.precision == "bf16":
            raise ValueError(f"--format={FLAGS.format} is --precision=fp32 or int8 (no bfloat16 model)")
        if FLAGS.compile:
            raise ValueError(f"--compile is for --format=saved_model (--format={FLAGS.format} is not XLA-compiled)")
    if FLAGS.format == "onnx":
        require_onnx()
    check_cpu(FLAGS.precision)
    check_hub_flags()
    resolve_checkpoint_flags("model")
    lock_folder(os.path.join(FLAGS.export_dir, FLAGS.model_name))  # one export per model name at a time
    if FLAGS.model.endswith(".keras") and not os.path.isfile(FLAGS.model):
        raise ValueError(f"{FLAGS.model}: no such file")
    model, info = load_model(FLAGS.model)
    try:
        tokenizer = load_tokenizer(FLAGS.vocab or FLAGS.model, lowercase=FLAGS.lowercase,
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
    if task == "tagging" and info.get("word_unit"):  # raw text cut into the words the model was trained on
        options["word_unit"] = info["word_unit"]
    label_names = FLAGS.label_names or (info.get("label_names") if task in ("classification", "tagging") else None)
    length = given("max_seq_length", info, min(128, model.config.max_position_embeddings))
    if FLAGS.format == "onnx":
        path = export_onnx(model, tokenizer, FLAGS.export_dir, model_name=FLAGS.model_name, version=FLAGS.version,
                           max_seq_length=length, label_names=label_names, overwrite=FLAGS.overwrite,
                           precision=FLAGS.precision, text_model=FLAGS.text_model, **options)
        info = read_json(os.path.join(path, INFO_FILE))
        size = os.path.getsize(os.path.join(path, info["model_file"]))
        print(f"{task} model → {path}/{info['model_file']} ({size / 2 ** 20:.1f} MB, {FLAGS.precision}; token ids in: "
              f"input_ids, attention_mask, token_type_ids; outputs: {', '.join(info['outputs'])}; vocab.txt and "
              "export_info.json beside it)")
        if info.get("text_model"):
            print(f"raw text in: {path}/{info['text_model']} (inputs {', '.join(info['text_inputs'])}; ONNX Runtime "
                  "with onnxruntime-extensions' ops, see docs/serving.md)")
    elif FLAGS.format == "litert":
        path = export_litert(model, tokenizer, FLAGS.export_dir, model_name=FLAGS.model_name, version=FLAGS.version,
                             max_seq_length=length, label_names=label_names, overwrite=FLAGS.overwrite,
                             precision=FLAGS.precision, **options)
        size = os.path.getsize(os.path.join(path, "model.tflite"))
        print(f"{task} model → {path}/model.tflite ({size / 2 ** 20:.1f} MB, {FLAGS.precision}; token ids in: "
              f"input_ids, attention_mask, token_type_ids; vocab.txt and export_info.json beside it)")
    else:
        path = _export_saved_model(model, tokenizer, task, length, label_names, options)
    print(fastest_exports(done=export_flags(FLAGS.format, FLAGS.precision, FLAGS.compile)))
    push_output(path)


def _export_saved_model(model, tokenizer, task, length, label_names, options):
    from electra_tf.export import export_info, export_model

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
    return path


def main():
    """The console script `electra-export`."""
    run_tool(run, __name__)


if __name__ == "__main__":  # python -m electra_tf.tools.export_model
    main()
