"""What `electra-build-pretraining-data` does: its `main`.

Its flags and `--help` text are in `build_pretraining_data_flags.py`, which the console script parses before this
module (and TensorFlow) is imported.
"""

from electra_tf.data.pipeline import corpus_parts
from electra_tf.data.pretraining_data import build_pretraining_shards, packing_totals, unknown_token_rate
from electra_tf.tools.build_pretraining_data_flags import FLAGS
from electra_tf.tools.common import exits_cleanly_on_bad_input, run_tool
from electra_tf.vocabulary import load_vocabulary
from electra_tf.vocabulary_learning import UNKNOWN_RATE_WARNING


class _Progress:
    """One refreshed line: documents and tokens packed, and their rates."""

    def __call__(self, documents, tokens, seconds):
        rate = max(seconds, 1e-9)
        print(f"\r{documents:,} documents ({documents / rate:,.0f}/s), {tokens:,} tokens "
              f"({tokens / rate:,.0f}/s)", end="", flush=True)


@exits_cleanly_on_bad_input
def main(argv):
    del argv
    files = corpus_parts(FLAGS.input_files, FLAGS.tfds_dataset)
    load_vocabulary(FLAGS.vocab_file)  # validates it before any work
    settings = dict(max_seq_length=FLAGS.max_seq_length, num_shards=FLAGS.num_shards, seed=FLAGS.seed,
                    blanks_separate_docs=FLAGS.blanks_separate_docs, lowercase=FLAGS.lowercase,
                    strip_accents=FLAGS.strip_accents, long_lines=FLAGS.long_lines, text_field=FLAGS.text_field,
                    tfds_data_dir=FLAGS.tfds_data_dir, dedupe=FLAGS.dedupe, whole_word_masking=FLAGS.whole_word_masking)
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
    print(token_summary(packing_totals(shards)))
    rate = unknown_token_rate(shards)
    if rate is not None:
        print(unknown_summary(rate))


def token_summary(totals):
    """One line: tokens read, written (special tokens not counted) and dropped, by reason."""
    read, written = totals["tokens"], totals["tokens_written"]
    dropped = ", ".join(f"{n:,} {reason.replace('_', ' ')}" for reason, n in totals["tokens_dropped"].items())
    return (f"tokens: {read:,} read, {written:,} written ({written / max(read, 1):.1%}), "
            f"{read - written:,} dropped" + (f" ({dropped})" if dropped else ""))


def unknown_summary(rate):
    """One line: the share of `[UNK]` among the tokens written, a warning above `UNKNOWN_RATE_WARNING`.

    >>> unknown_summary(0.0124)
    '[UNK]: 1.24% of the tokens written'
    """
    if rate <= UNKNOWN_RATE_WARNING:
        return f"[UNK]: {rate:.2%} of the tokens written"
    return (f"warning: [UNK] is {rate:.2%} of the tokens written (above {UNKNOWN_RATE_WARNING:.0%}): --vocab_file "
            "does not cover this text; learn one on it (electra-build-vocab) or check --lowercase/--strip_accents")


if __name__ == "__main__":  # python -m electra_tf.tools.build_pretraining_data (the console script: electra_tf_cli)
    run_tool(main, "electra_tf.tools.build_pretraining_data_flags")
