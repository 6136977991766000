"""Packs text files into pre-training TFRecord shards (the original ELECTRA format).

    python -m electra_tf.tools.build_pretraining_data --input_files='corpus/*.txt' \\
        --vocab_file=vocab.txt --output_dir=data --max_seq_length=128 --num_shards=64 --num_processes=2

Input: one sentence (or one paragraph) a line; a blank line ends a document (or,
with --noblanks_separate_docs, each file is one document). A line longer than an
example is packed as its sentences, nothing dropped (--long_lines=truncate: the
original's cut, for exact reproduction). Each shard appears atomically when
complete, and `manifest.json` records the settings and counts (tokens read,
written and dropped, with the reason), which the tool also prints.
Re-running the same command after an interruption writes only the missing
shards; the output does not depend on --num_processes.
"""

from absl import flags

from electra_tf.data.packing import LONG_LINES
from electra_tf.data.pipeline import list_files
from electra_tf.data.pretraining_data import build_pretraining_shards, packing_totals
from electra_tf.tools.common import exits_cleanly_on_bad_input, run_tool
from electra_tf.vocabulary import load_vocabulary

FLAGS = flags.FLAGS
flags.DEFINE_string("input_files", None, "Comma-separated globs of text files (or folders).", required=True)
flags.DEFINE_string("vocab_file", None, "The WordPiece vocab.txt.", required=True)
flags.DEFINE_string("output_dir", None, "Where the shards and manifest.json go.", required=True)
flags.DEFINE_integer("max_seq_length", 128, "Example length, special tokens included.")
flags.DEFINE_integer("num_shards", 16, "Number of output shards.")
flags.DEFINE_integer("num_processes", 1, "Worker processes.")
flags.DEFINE_bool("blanks_separate_docs", True, "A blank line ends a document.")
flags.DEFINE_bool("lowercase", True, "Lower-case the text (uncased vocabularies).")
flags.DEFINE_bool("strip_accents", None, "Strip accents (default: as --lowercase).")
flags.DEFINE_integer("seed", 0, "Packing seed.")
flags.DEFINE_enum("long_lines", "split", LONG_LINES,
                  "A line longer than an example: split (at sentence ends, else every half example; no text "
                  "dropped) or truncate (the original ELECTRA's rule: cut, the rest discarded).")


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
        lowercase=FLAGS.lowercase, strip_accents=FLAGS.strip_accents, long_lines=FLAGS.long_lines,
        num_processes=FLAGS.num_processes, progress=_Progress())
    print(f"\n{sum(s['examples'] for s in shards.values()):,} examples in {len(shards)} shard(s) → "
          f"{FLAGS.output_dir}")
    print(token_summary(packing_totals(shards)))


def token_summary(totals):
    """One line: tokens read, written (special tokens not counted) and dropped, by reason."""
    read, written = totals["tokens"], totals["tokens_written"]
    dropped = ", ".join(f"{n:,} {reason.replace('_', ' ')}" for reason, n in totals["tokens_dropped"].items())
    return (f"tokens: {read:,} read, {written:,} written ({written / max(read, 1):.1%}), "
            f"{read - written:,} dropped" + (f" ({dropped})" if dropped else ""))


def run():
    run_tool(main)


if __name__ == "__main__":
    run()
