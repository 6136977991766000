"""What `electra-build-pretraining-data` does: its `main`.

Its flags and `--help` text are in `build_pretraining_data_flags.py`, which the console script parses before this module
(and TensorFlow) is imported.
"""

from electra_tf.data.pipeline import list_files
from electra_tf.data.pretraining_data import build_pretraining_shards
from electra_tf.tools.build_pretraining_data_flags import FLAGS
from electra_tf.tools.common import exits_cleanly_on_bad_input, run_tool
from electra_tf.vocabulary import load_vocabulary


class _Progress:
    """One refreshed line: documents and tokens packed, and their rates."""

    def __call__(self, documents, tokens, seconds):
        rate = max(seconds, 1e-9)
        print(f"\r{documents:,} documents ({documents / rate:,.0f}/s), {tokens:,} tokens "
              f"({tokens / rate:,.0f}/s)", end="", flush=True)


@exits_cleanly_on_bad_input
def main(argv):
    del argv
    files = list_files(FLAGS.input_files)
    load_vocabulary(FLAGS.vocab_file)  # validates it before any work
    shards = build_pretraining_shards(
        files, FLAGS.vocab_file, FLAGS.output_dir, max_seq_length=FLAGS.max_seq_length,
        num_shards=FLAGS.num_shards, seed=FLAGS.seed, blanks_separate_docs=FLAGS.blanks_separate_docs,
        lowercase=FLAGS.lowercase, strip_accents=FLAGS.strip_accents, num_processes=FLAGS.num_processes,
        progress=_Progress())
    print(f"\n{sum(s['examples'] for s in shards.values()):,} examples in {len(shards)} shard(s) → "
          f"{FLAGS.output_dir}")


if __name__ == "__main__":  # python -m electra_tf.tools.build_pretraining_data (the console script: electra_tf_cli)
    run_tool(main, "electra_tf.tools.build_pretraining_data_flags")
