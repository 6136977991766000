"""Learns a WordPiece vocabulary (`vocab.txt`) from a corpus (text, JSONL, Parquet files, a TFDS dataset).

    python -m electra_tf.tools.build_vocab --input_files='corpus/*.txt' --vocab_size=30522 \\
        --output=vocab.txt [--runner=beam --beam_options='--direct_num_workers=2']

Uses tensorflow-text's WordPiece learner, splitting words as keras-hub's
trainer does; the special tokens [PAD] [UNK] [CLS] [SEP] [MASK] come first.
With --runner=beam the words are counted in an Apache Beam pipeline (the
same vocab.txt; docs/data_at_scale.md). An existing BERT/ELECTRA `vocab.txt` needs no rebuilding: every
tool accepts it as is.
"""

import os

import tensorflow as tf
from absl import flags

from electra_tf.data.corpus_readers import check_parts, corpus_texts
from electra_tf.tokenization import build_vocabulary
from electra_tf.tools.common import (
    corpus_parts,
    define_corpus_flags,
    ensure_new_output,
    exits_cleanly_on_bad_input,
    run_tool,
)
from electra_tf.vocabulary import save_vocabulary

FLAGS = flags.FLAGS
define_corpus_flags()
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
    files = check_parts(corpus_parts(), FLAGS.text_field)
    strip_accents = FLAGS.lowercase if FLAGS.strip_accents is None else FLAGS.strip_accents
    folder = os.path.dirname(FLAGS.output)
    if FLAGS.runner == "beam":
        from electra_tf.data.beam_vocabulary import learn_vocabulary_on_beam  # optional: the 'beam' extra

        if folder:
            tf.io.gfile.makedirs(folder)
        vocabulary = learn_vocabulary_on_beam(files, FLAGS.output, FLAGS.vocab_size, lowercase=FLAGS.lowercase,
                                              strip_accents=strip_accents, text_field=FLAGS.text_field,
                                              tfds_data_dir=FLAGS.tfds_data_dir, beam_options=FLAGS.beam_options)
    else:
        vocabulary = build_vocabulary(corpus_texts(files, FLAGS.text_field, FLAGS.tfds_data_dir),
                                      FLAGS.vocab_size, lowercase=FLAGS.lowercase, strip_accents=strip_accents)
        if folder:
            tf.io.gfile.makedirs(folder)
        save_vocabulary(vocabulary, FLAGS.output)
    print(f"{len(vocabulary)} tokens from {len(files)} file(s) → {FLAGS.output}")


def run():
    run_tool(main)


if __name__ == "__main__":
    run()
