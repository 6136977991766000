"""What `electra-build-vocab` does: its `main`.

Its flags and `--help` text are in `build_vocab_flags.py`, which the console script parses before this module
(and TensorFlow) is imported.
"""

import os

import tensorflow as tf

from electra_tf.data.pipeline import list_files
from electra_tf.tokenization import build_vocabulary
from electra_tf.tools.build_vocab_flags import FLAGS
from electra_tf.tools.common import ensure_new_output, exits_cleanly_on_bad_input, run_tool
from electra_tf.vocabulary import save_vocabulary


@exits_cleanly_on_bad_input
def main(argv):
    del argv
    ensure_new_output(FLAGS.output, FLAGS.overwrite)
    files = list_files(FLAGS.input_files)
    strip_accents = FLAGS.lowercase if FLAGS.strip_accents is None else FLAGS.strip_accents
    vocabulary = build_vocabulary(files, FLAGS.vocab_size, lowercase=FLAGS.lowercase, strip_accents=strip_accents,
                                  report=lambda line: print(line, flush=True))
    folder = os.path.dirname(FLAGS.output)
    if folder:
        tf.io.gfile.makedirs(folder)
    save_vocabulary(vocabulary, FLAGS.output)
    print(f"{len(vocabulary)} tokens from {len(files)} file(s) → {FLAGS.output}")


if __name__ == "__main__":  # python -m electra_tf.tools.build_vocab (the console script: electra_tf_cli)
    run_tool(main, "electra_tf.tools.build_vocab_flags")
