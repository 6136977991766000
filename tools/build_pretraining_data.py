"""Packs a corpus into pre-training TFRecord shards (the original ELECTRA format).

    python -m electra_tf.tools.build_pretraining_data --input_files='corpus/*.txt' \\
        --vocab_file=vocab.txt --output_dir=data --max_seq_length=128 --num_shards=64 --num_processes=2

Input: text files, one sentence a line, a blank line ending a document (or,
with --noblanks_separate_docs, each file is one document; .gz read too);
JSONL or Parquet files and TFDS datasets, a record a document (--text_field).
Each shard appears atomically when complete, and `manifest.json` records the
settings and counts. Re-running the same command after an interruption writes
only the missing shards; the output does not depend on --num_processes, nor on
--runner=beam (an Apache Beam pipeline, same shards: docs/data_at_scale.md).
"""

from absl import flags

from electra_tf.data.pretraining_data import build_pretraining_shards
from electra_tf.tools.common import corpus_parts, define_corpus_flags, exits_cleanly_on_bad_input, run_tool
from electra_tf.vocabulary import load_vocabulary

FLAGS = flags.FLAGS
define_corpus_flags()
flags.DEFINE_string("vocab_file", None, "The WordPiece vocab.txt.", required=True)
flags.DEFINE_string("output_dir", None, "Where the shards and manifest.json go.", required=True)
flags.DEFINE_integer("max_seq_length", 128, "Example length, special tokens included.")
flags.DEFINE_integer("num_shards", 16, "Number of output shards.")
flags.DEFINE_integer("num_processes", 1, "Worker processes (--runner=local).")
flags.DEFINE_bool("dedupe", False, "Drop exact duplicate documents (same text after NFKC, case folding and "
                  "collapsing spaces); counted in manifest.json.")
flags.DEFINE_bool("blanks_separate_docs", True, "A blank line ends a document.")
flags.DEFINE_bool("lowercase", True, "Lower-case the text (uncased vocabularies).")
flags.DEFINE_bool("strip_accents", None, "Strip accents (default: as --lowercase).")
flags.DEFINE_integer("seed", 0, "Packing seed.")
flags.register_validator("max_seq_length", lambda n: n >= 5,
                         "--max_seq_length must be >= 5 ([CLS] A [SEP] B [SEP], as examples are packed)")
flags.register_validator("num_shards", lambda n: n >= 1, "--num_shards must be >= 1")
flags.register_validator("num_processes", lambda n: n >= 1, "--num_processes must be >= 1")


class _Progress:
    """One refreshed line: documents and tokens packed, and their rates."""

    def __call__(self, documents, tokens, seconds):
        rate = max(seconds, 1e-9)
        print(f"\r{documents:,} documents ({documents / rate:,.0f}/s), {tokens:,} tokens "
              f"({tokens / rate:,.0f}/s)", end="", flush=True)


@exits_cleanly_on_bad_input
def main(argv):
    del argv
    files = corpus_parts()
    load_vocabulary(FLAGS.vocab_file)  # validates it before any work
    settings = dict(max_seq_length=FLAGS.max_seq_length, num_shards=FLAGS.num_shards, seed=FLAGS.seed,
                    blanks_separate_docs=FLAGS.blanks_separate_docs, lowercase=FLAGS.lowercase,
                    strip_accents=FLAGS.strip_accents, text_field=FLAGS.text_field,
                    tfds_data_dir=FLAGS.tfds_data_dir, dedupe=FLAGS.dedupe)
    if FLAGS.runner == "beam":
        from electra_tf.data.beam_pipeline import build_pretraining_shards_on_beam  # optional: the 'beam' extra

        print(f"Beam pipeline ({FLAGS.beam_options or '--runner=DirectRunner'}) ...", flush=True)
        shards = build_pretraining_shards_on_beam(files, FLAGS.vocab_file, FLAGS.output_dir,
                                                  beam_options=FLAGS.beam_options, **settings)
    else:
        shards = build_pretraining_shards(files, FLAGS.vocab_file, FLAGS.output_dir,
                                          num_processes=FLAGS.num_processes, progress=_Progress(), **settings)
    print(f"\n{sum(s['examples'] for s in shards.values()):,} examples in {len(shards)} shard(s) → "
          f"{FLAGS.output_dir}")


def run():
    run_tool(main)


if __name__ == "__main__":
    run()
