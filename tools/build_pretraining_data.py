"""Packs a corpus into pre-training TFRecord shards (the original ELECTRA format).

    python -m electra_tf.tools.build_pretraining_data --input_files='corpus/*.txt' \\
        --vocab_file=vocab.txt --output_dir=data --max_seq_length=128 --num_shards=64 --num_processes=2

Input: text files, one sentence (or one paragraph) a line, a blank line ending
a document (or, with --noblanks_separate_docs, each file is one document; .gz
read too); JSONL or Parquet files and TFDS datasets, a record a document
(--text_field). A line longer than an example is packed as its sentences,
nothing dropped (--long_lines=truncate: the original's cut, for exact
reproduction; sentences end at .!? before a capital, and at 。！？；… in CJK
text); CJK text (detected, or --language=zh/ja/ko) packs whole sentences by default. Each shard appears
atomically when complete, and `manifest.json` records the settings and counts (tokens read, written and
dropped, with the reason; the share of examples ending mid-sentence; the share of [UNK] among the tokens written
and the words that became [UNK]), which the tool also prints (a warning above 2 % [UNK]). --whole_word_masking
stores the words of Chinese (CJK) text, found by jieba (pip install jieba) in worker processes on every core
(--segmenter_processes), with each example, for electra-pretrain --whole_word_masking, and prints how many words
hold several tokens (what it masks whole).
Re-running the same
command after an interruption writes only the missing shards; the output does not depend on --num_processes, nor on
--runner=beam (an Apache Beam pipeline, same shards: docs/data_at_scale.md).
"""

from absl import flags

from electra_tf.data.packing import LONG_LINES
from electra_tf.tools.common import define_corpus_flags, exits_cleanly_on_bad_input, run_tool
from electra_tf.text.vocabulary import load_vocabulary

FLAGS = flags.FLAGS
define_corpus_flags()
flags.DEFINE_string("vocab_file", None, "The WordPiece vocab.txt.", required=True)
flags.DEFINE_string("output_dir", None, "Where the shards and manifest.json go.", required=True)
flags.DEFINE_integer("max_seq_length", 128, "Example length, special tokens included.")
flags.DEFINE_integer("num_shards", 16, "Number of output shards.")
flags.DEFINE_integer("num_processes", 1, "Worker processes (--runner=local): keep 1 unless the corpus is hundreds "
                     "of MB (each process starts its own TensorFlow).")
flags.DEFINE_integer("segmenter_processes", None, "--whole_word_masking: processes that cut CJK text into words "
                     "(jieba) while the build tokenizes, at most one per core this build may use (the default; with "
                     "--num_processes above 1, each of those cuts its own text).")
flags.DEFINE_bool("dedupe", False, "Drop exact duplicate documents (same text after NFKC, case folding and "
                  "collapsing spaces); counted in manifest.json.")
flags.DEFINE_bool("blanks_separate_docs", True, "A blank line ends a document.")
flags.DEFINE_bool("lowercase", True, "Lower-case the text (uncased vocabularies).")
flags.DEFINE_bool("strip_accents", None, "Strip accents (default: as --lowercase).")
flags.DEFINE_integer("seed", 0, "Packing seed.")
flags.DEFINE_bool("whole_word_masking", False, "Store the word boundaries of CJK text, found by the jieba word "
                  "segmenter (pip install jieba), with each example (feature continues_word), for "
                  "electra-pretrain --whole_word_masking; other text needs none (its words are its ## pieces).")
flags.DEFINE_enum("long_lines", None, LONG_LINES,
                  "A line longer than an example: split (at sentence ends, else every half example; no text "
                  "dropped; a sentence overflowing an example goes on in the next), sentences (as split, but every "
                  "example ends at a sentence end where one exists: more padding) or truncate (the original "
                  "ELECTRA's rule: cut, the rest discarded). Default: sentences for CJK text, split otherwise: CJK "
                  "lines are often whole paragraphs without spaces, and split ends over a third of their examples "
                  "mid-sentence (the manifest's mid_sentence_rate).")
flags.DEFINE_string("language", None, "The corpus's language code (zh, ja, ko: CJK text) for the defaults that "
                    "follow it (--long_lines). Default: CJK if 30 %+ of its first 100,000 "
                    "characters are CJK ideographs.")
flags.register_validator("max_seq_length", lambda n: n >= 5,
                         "--max_seq_length must be >= 5 ([CLS] A [SEP] B [SEP], as examples are packed)")
flags.register_validator("num_shards", lambda n: n >= 1, "--num_shards must be >= 1")
flags.register_validator("num_processes", lambda n: n >= 1, "--num_processes must be >= 1")
flags.register_validator("segmenter_processes", lambda n: n is None or n >= 1, "--segmenter_processes must be >= 1")


class _Progress:
    """One refreshed line: documents and tokens packed, and their rates."""

    def __call__(self, documents, tokens, seconds):
        rate = max(seconds, 1e-9)
        print(f"\r{documents:,} documents ({documents / rate:,.0f}/s), {tokens:,} tokens "
              f"({tokens / rate:,.0f}/s)", end="", flush=True)


@exits_cleanly_on_bad_input
def run(argv):
    del argv
    from electra_tf.data.tfrecord_dataset import corpus_parts  # (these load TensorFlow: not for --help)
    from electra_tf.data.pretraining_data import (
        build_pretraining_shards,
        masking_unit,
        mid_sentence_rate,
        packing_totals,
        read_manifest,
        unknown_token_rate,
    )

    files = corpus_parts(FLAGS.input_files, FLAGS.tfds_dataset)
    load_vocabulary(FLAGS.vocab_file)  # validates it before any work
    settings = dict(max_seq_length=FLAGS.max_seq_length, num_shards=FLAGS.num_shards, seed=FLAGS.seed,
                    blanks_separate_docs=FLAGS.blanks_separate_docs, lowercase=FLAGS.lowercase,
                    strip_accents=FLAGS.strip_accents, long_lines=FLAGS.long_lines, text_field=FLAGS.text_field,
                    tfds_data_dir=FLAGS.tfds_data_dir, dedupe=FLAGS.dedupe, whole_word_masking=FLAGS.whole_word_masking,
                    language=FLAGS.language)
    if FLAGS.runner == "beam":
        from electra_tf.data.beam_pipeline import build_pretraining_shards_on_beam  # optional: the 'beam' extra

        print(f"Beam pipeline ({FLAGS.beam_options or '--runner=DirectRunner'}) ...", flush=True)
        shards = build_pretraining_shards_on_beam(files, FLAGS.vocab_file, FLAGS.output_dir,
                                                  beam_options=FLAGS.beam_options, **settings)
    else:
        shards = build_pretraining_shards(files, FLAGS.vocab_file, FLAGS.output_dir,
                                          num_processes=FLAGS.num_processes,
                                          segmenter_processes=FLAGS.segmenter_processes, progress=_Progress(),
                                          **settings)
    print(f"\n{sum(s['examples'] for s in shards.values()):,} examples in {len(shards)} shard(s) → "
          f"{FLAGS.output_dir}")
    totals = packing_totals(shards)
    print(token_summary(totals))
    long_lines = read_manifest(FLAGS.output_dir)["settings"]["long_lines"]
    share = mid_sentence_rate(shards)
    if share is not None:
        print(f"examples ending mid-sentence: {share:.1%} (--long_lines={long_lines})")
    if "whole_words" in totals:
        print(masking_unit(totals["whole_words"]))
    rate = unknown_token_rate(shards)
    if rate is not None:
        print(unknown_summary(rate, totals.get("unknown_words", {})))


def token_summary(totals):
    """One line: tokens read, written (special tokens not counted) and dropped, by reason."""
    read, written = totals["tokens"], totals["tokens_written"]
    dropped = ", ".join(f"{n:,} {reason.replace('_', ' ')}" for reason, n in totals["tokens_dropped"].items())
    return (f"tokens: {read:,} read, {written:,} written ({written / max(read, 1):.1%}), "
            f"{read - written:,} dropped" + (f" ({dropped})" if dropped else ""))


def unknown_summary(rate, unknown_words=None):
    """One line: the share of `[UNK]` among the tokens written (a warning above `UNKNOWN_RATE_WARNING`) and the
    words that became `[UNK]` most often (`{word: count}`).

    >>> unknown_summary(0.0124, {"“": 40, "”": 38, "—": 9})
    '[UNK]: 1.24% of the tokens written; most often unknown: “ (40), ” (38), — (9)'
    """
    from electra_tf.text.vocabulary_learning import UNKNOWN_RATE_WARNING

    top = sorted((unknown_words or {}).items(), key=lambda item: (-item[1], item[0]))[:10]
    words = f"; most often unknown: {', '.join(f'{word} ({count:,})' for word, count in top)}" if top else ""
    if rate <= UNKNOWN_RATE_WARNING:
        return f"[UNK]: {rate:.2%} of the tokens written{words}"
    return (f"warning: [UNK] is {rate:.2%} of the tokens written (above {UNKNOWN_RATE_WARNING:.0%}){words}: "
            "--vocab_file does not cover this text; learn one on it (electra-build-vocab) or check "
            "--lowercase/--strip_accents")


def main():
    """The console script `electra-build-pretraining-data`."""
    run_tool(run, __name__)


if __name__ == "__main__":  # python -m electra_tf.tools.build_pretraining_data
    main()
