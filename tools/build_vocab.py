"""Learns a WordPiece vocabulary (`vocab.txt`) from text files.

    python -m electra_tf.tools.build_vocab --input_files='corpus/*.txt' --vocab_size=30522 \\
        --output=vocab.txt

Uses tensorflow-text's WordPiece learner through keras-hub, with BERT's
pre-tokenization options; the special tokens [PAD] [UNK] [CLS] [SEP] [MASK]
come first. An existing BERT/ELECTRA `vocab.txt` needs no rebuilding: every
tool accepts it as is.
"""

import os

import tensorflow as tf
from absl import flags

from electra_tf.data.pipeline import list_files
from electra_tf.tokenization import build_vocabulary
from electra_tf.tools.common import ensure_new_output, exits_cleanly_on_bad_input, run_tool
from electra_tf.vocabulary import save_vocabulary

FLAGS = flags.FLAGS
flags.DEFINE_string("input_files", None, "Comma-separated globs of text files (or folders).", required=True)
flags.DEFINE_integer("vocab_size", 30522, "Maximum vocabulary size, special tokens included.")
flags.DEFINE_bool("lowercase", True, "Lower-case the text (an uncased vocabulary).")
flags.DEFINE_bool("strip_accents", None, "Strip accents (default: as --lowercase).")
flags.DEFINE_string("output", "vocab.txt", "Where to write the vocabulary.")
flags.DEFINE_bool("overwrite", False, "Replace an existing --output.")


@exits_cleanly_on_bad_input
def main(argv):
    del argv
    if os.path.isdir(FLAGS.output):
        raise ValueError(f"--output={FLAGS.output} is a folder; give the vocabulary file's path, e.g. "
                         f"--output={os.path.join(FLAGS.output, 'vocab.txt')}")
    ensure_new_output(FLAGS.output, FLAGS.overwrite)
    files = list_files(FLAGS.input_files)
    strip_accents = FLAGS.lowercase if FLAGS.strip_accents is None else FLAGS.strip_accents
    vocabulary = build_vocabulary(files, FLAGS.vocab_size, lowercase=FLAGS.lowercase, strip_accents=strip_accents)
    folder = os.path.dirname(FLAGS.output)
    if folder:
        tf.io.gfile.makedirs(folder)
    save_vocabulary(vocabulary, FLAGS.output)
    print(f"{len(vocabulary)} tokens from {len(files)} file(s) → {FLAGS.output}")


def run():
    run_tool(main)


if __name__ == "__main__":
    run()
