r"""Exports a pre-trained discriminator or a fine-tuned model for TF Serving: `<export_dir>/<model_name>/<version>/`.

    python -m electra_tf.tools.export_model --model=runs/sst2/classifier.keras \
        --vocab=runs/small/final/vocab.txt --export_dir=exports --model_name=sst2 \
        --label_names=negative,positive

- --model: a `.keras` task model (sequence classification or regression, token
  classification, question answering, multiple choice) or discriminator, or a
  pre-trained checkpoint in any format `from_pretrained` reads (our
  `final/` folder, a Hugging Face folder, a Google checkpoint): its
  discriminator, serving per-token replaced probabilities.
- --vocab: the `vocab.txt` or `tokenizer.json` (or a folder holding one); by
  default the one in or beside --model. Casing follows the tokenizer files
  unless --lowercase/--strip_accents say otherwise; it must match training.
- Signatures: `serving_default` (raw text, tokenized in the graph),
  `serve_ids`, `serve_examples`; see docs/serving.md.
- The version is one more than the highest present unless --version is given;
  an existing version is kept unless --overwrite.
"""

import os

import keras
from absl import flags

from electra_tf.export import export_info, export_model, task_of
from electra_tf.models.discriminator import ElectraDiscriminator
from electra_tf.tokenization import ElectraTokenizer
from electra_tf.tools.common import exits_cleanly_on_bad_input, run_tool

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
flags.DEFINE_integer("max_seq_length", 128, "Raw text is truncated and padded to this many tokens.")
flags.DEFINE_list("label_names", None, "Class or tag names, in id order (output beside the ids).")
flags.DEFINE_bool("text_pair", False, "Classification/regression on sentence pairs: a second text input.")
flags.DEFINE_integer("max_query_length", 64, "Question answering: question tokens kept.")
flags.DEFINE_integer("max_answer_length", 30, "Question answering: longest answer, in tokens.")
flags.DEFINE_bool("squad_v2", None, "Question answering: may answer nothing (default: when the model has "
                  "the answerable classifier).")
flags.DEFINE_float("null_threshold", None, "Question answering, SQuAD 2.0: no answer above these null odds "
                   "(default -2.75 with the answerable classifier, else 0.0).")
flags.DEFINE_bool("overwrite", False, "Replace an existing version.")


def load_model(path):
    """A `.keras` model as saved, or the discriminator of a checkpoint in any format."""
    if path.endswith(".keras"):
        if not os.path.isfile(path):
            raise ValueError(f"{path}: no such file")
        return keras.saving.load_model(path, safe_mode=True)
    return ElectraDiscriminator.from_pretrained(path)


@exits_cleanly_on_bad_input
def main(argv):
    del argv
    model = load_model(FLAGS.model)
    try:
        tokenizer = ElectraTokenizer.from_pretrained(FLAGS.vocab or FLAGS.model, lowercase=FLAGS.lowercase,
                                                     strip_accents=FLAGS.strip_accents)
    except ValueError as e:
        raise ValueError(f"{e} (pass --vocab)" if not FLAGS.vocab else str(e)) from None
    task = task_of(model)
    options = {}
    if task in ("classification", "regression"):
        options["text_pair"] = FLAGS.text_pair
    elif FLAGS.text_pair:
        raise ValueError(f"--text_pair is for classification and regression, not {task}")
    if task == "question_answering":
        options.update(max_query_length=FLAGS.max_query_length, max_answer_length=FLAGS.max_answer_length,
                       version_2=FLAGS.squad_v2, null_threshold=FLAGS.null_threshold)
    path = export_model(model, tokenizer, FLAGS.export_dir, model_name=FLAGS.model_name, version=FLAGS.version,
                        max_seq_length=FLAGS.max_seq_length, label_names=FLAGS.label_names,
                        overwrite=FLAGS.overwrite, **options)
    info = export_info(path)
    print(f"{task} model → {path}")
    print(f"signatures: {', '.join(info['signatures'])}; serving_default takes {', '.join(info['text_inputs'])}")


def run():
    run_tool(main)


if __name__ == "__main__":
    run()
