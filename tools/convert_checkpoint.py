"""What `electra-convert-checkpoint` does: its `main`.

Its flags and `--help` text are in `convert_checkpoint_flags.py`, which the console script parses before this module
(and TensorFlow) is imported.
"""

from electra_tf.config import load_run_config
from electra_tf.convert import convert
from electra_tf.folder_lock import lock_folder
from electra_tf.tools.common import ensure_new_output, exits_cleanly_on_bad_input, resolve_checkpoint_flags, run_tool
from electra_tf.tools.convert_checkpoint_flags import FLAGS


@exits_cleanly_on_bad_input
def main(argv):
    del argv
    resolve_checkpoint_flags("input", "input_generator")
    lock_folder(FLAGS.output)  # one conversion per output: another one is refused, naming its pid
    ensure_new_output(FLAGS.output, FLAGS.overwrite)
    if FLAGS.to == "google":  # a prefix is no file of its own: its index says it exists
        ensure_new_output(FLAGS.output + ".index", FLAGS.overwrite)
    run_config = load_run_config(FLAGS.config) if FLAGS.config else None
    written = convert(FLAGS.input, FLAGS.output, FLAGS.to, input_generator=FLAGS.input_generator,
                      networks=FLAGS.networks, run_config=run_config, vocab_file=FLAGS.vocab_file, dtype=FLAGS.dtype)
    print(f"converted {FLAGS.input} → {', '.join(written)} ({FLAGS.to})", flush=True)


if __name__ == "__main__":  # python -m electra_tf.tools.convert_checkpoint (the console script: electra_tf_cli)
    run_tool(main, "electra_tf.tools.convert_checkpoint_flags")
