"""What `electra-build-vocab` does: its `main`.

Its flags and `--help` text are in `build_vocab_flags.py`, which the console script parses before this module
(and TensorFlow) is imported.
"""

import os

import tensorflow as tf

from electra_tf.data.corpus_readers import check_parts, corpus_texts
from electra_tf.data.pipeline import corpus_parts
from electra_tf.vocabulary_learning import build_vocabulary
from electra_tf.tools.build_vocab_flags import FLAGS
from electra_tf.tools.common import ensure_new_output, exits_cleanly_on_bad_input, run_tool
from electra_tf.vocabulary import save_vocabulary


@exits_cleanly_on_bad_input
def main(argv):
    del argv
    if os.path.isdir(FLAGS.output):
        raise ValueError(f"--output={FLAGS.output} is a folder; give the vocabulary file's path, e.g. "
                         f"--output={os.path.join(FLAGS.output, 'vocab.txt')}")
    ensure_new_output(FLAGS.output, FLAGS.overwrite)
    files = check_parts(corpus_parts(FLAGS.input_files, FLAGS.tfds_dataset), FLAGS.text_field)
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
                                      FLAGS.vocab_size, lowercase=FLAGS.lowercase, strip_accents=strip_accents,
                                      report=lambda line: print(line, flush=True))
        if folder:
            tf.io.gfile.makedirs(folder)
        save_vocabulary(vocabulary, FLAGS.output)
    print(f"{len(vocabulary)} tokens from {len(files)} file(s) → {FLAGS.output}")


if __name__ == "__main__":  # python -m electra_tf.tools.build_vocab (the console script: electra_tf_cli)
    run_tool(main, "electra_tf.tools.build_vocab_flags")
