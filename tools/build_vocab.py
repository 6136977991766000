"""Learns a WordPiece vocabulary (`vocab.txt`) from a corpus (text, JSONL, Parquet files, a TFDS dataset).

    python -m electra_tf.tools.build_vocab --input_files='corpus/*.txt' --vocab_size=30522 \\
        --output=vocab.txt [--runner=beam --beam_options='--direct_num_workers=2']

Uses tensorflow-text's WordPiece learner on the words the tokenizer sees (its
splitting and normalisation: full-width punctuation stays full-width); every
character seen --min_char_count times gets a token, whatever the script; the
special tokens [PAD] [UNK] [CLS] [SEP] [MASK] come first. Every 10th line of the
corpus is held out (--held_out_every): the vocabulary is learned without it, and the
share of [UNK] it leaves in that text (up to 4 M characters; a warning above 2 %), with
the words that became [UNK] most often, is printed and recorded in
`<output name>_report.json` beside the vocabulary: a rate measured on the text a
vocabulary was learned from is always about 0. With
--runner=beam the words are counted in an Apache Beam pipeline (the same
vocab.txt; docs/data_at_scale.md). An existing BERT/ELECTRA `vocab.txt` (the
BERT-Chinese one too) needs no rebuilding: every tool accepts it as is.
"""

import os

from absl import flags

from electra_tf.util.atomic import write_json
from electra_tf.tools.common import define_corpus_flags, ensure_new_output, exits_cleanly_on_bad_input, run_tool
from electra_tf.text.vocabulary import save_vocabulary

FLAGS = flags.FLAGS
define_corpus_flags()
flags.DEFINE_integer("vocab_size", 30522, "Maximum vocabulary size, special tokens included.")
flags.DEFINE_integer("min_char_count", 1, "A character seen this many times gets a token (rarer ones become "
                     "[UNK]); the most frequent first when they do not all fit in --vocab_size. On a large corpus "
                     "raise it, so that stray characters do not take the room of longer pieces.")
flags.DEFINE_bool("lowercase", True, "Lower-case the text (an uncased vocabulary).")
flags.DEFINE_bool("strip_accents", None, "Strip accents (default: as --lowercase).")
flags.DEFINE_string("output", "vocab.txt", "Where to write the vocabulary.")
flags.DEFINE_bool("overwrite", False, "Replace an existing --output.")
flags.DEFINE_integer("held_out_every", 10, "Hold out every Nth non-blank line: the vocabulary is learned without "
                     "them and its [UNK] rate is measured on them (text it has not seen, as the text it will "
                     "meet). 0: learn from every line (and measure on the learned text, which flatters the rate; "
                     "as --runner=beam does).")
flags.register_validator("held_out_every", lambda n: n == 0 or n >= 2,
                         "--held_out_every must be 0 (nothing held out) or at least 2")


# How much of the corpus the [UNK] rate is measured on (its first lines).
SAMPLE_CHARS = 4_000_000


def corpus_sample(texts, max_chars=SAMPLE_CHARS):
    """The first non-blank lines of a dataset of texts, up to about `max_chars` characters."""
    lines, size = [], 0
    for text in texts.as_numpy_iterator():
        for line in text.decode("utf-8").split("\n"):
            if line.strip():
                lines.append(line)
                size += len(line)
                if size >= max_chars:
                    return lines
    return lines


def report_path(output):
    """The JSON file beside the vocabulary that records how it was learned: `vocab.txt` → `vocab_report.json`."""
    return f"{os.path.splitext(output)[0]}_report.json"


@exits_cleanly_on_bad_input
def run(argv):
    del argv
    import tensorflow as tf  # (this and the imports below load TensorFlow: not for --help)

    from electra_tf.data.corpus_readers import check_parts, corpus_texts
    from electra_tf.data.tfrecord_dataset import corpus_parts
    from electra_tf.text.tokenizer import WordPieceTokenizer
    from electra_tf.text.vocabulary_learning import (
        UNKNOWN_RATE_WARNING,
        build_vocabulary,
        check_settings,
        split_held_out,
        unknown_token_rate,
        unknown_words,
    )

    if os.path.isdir(FLAGS.output):
        raise ValueError(f"--output={FLAGS.output} is a folder; give the vocabulary file's path, e.g. "
                         f"--output={os.path.join(FLAGS.output, 'vocab.txt')}")
    check_settings(FLAGS.vocab_size, FLAGS.min_char_count)
    ensure_new_output(FLAGS.output, FLAGS.overwrite)
    files = check_parts(corpus_parts(FLAGS.input_files, FLAGS.tfds_dataset), FLAGS.text_field)
    strip_accents = FLAGS.lowercase if FLAGS.strip_accents is None else FLAGS.strip_accents
    folder = os.path.dirname(FLAGS.output)
    if FLAGS.runner == "beam":
        from electra_tf.data.beam_vocabulary import learn_vocabulary_on_beam  # optional: the 'beam' extra

        if folder:
            tf.io.gfile.makedirs(folder)
        vocabulary = learn_vocabulary_on_beam(files, FLAGS.output, FLAGS.vocab_size, lowercase=FLAGS.lowercase,
                                              strip_accents=strip_accents, min_char_count=FLAGS.min_char_count,
                                              text_field=FLAGS.text_field, tfds_data_dir=FLAGS.tfds_data_dir,
                                              beam_options=FLAGS.beam_options)
        measured, held_out = corpus_texts(files, FLAGS.text_field, FLAGS.tfds_data_dir), False
    else:
        texts = measured = corpus_texts(files, FLAGS.text_field, FLAGS.tfds_data_dir)
        held_out = FLAGS.held_out_every > 0
        if held_out:
            texts, measured = split_held_out(texts, FLAGS.held_out_every)
        vocabulary = build_vocabulary(texts, FLAGS.vocab_size, lowercase=FLAGS.lowercase, strip_accents=strip_accents,
                                      min_char_count=FLAGS.min_char_count, report=lambda line: print(line, flush=True))
        if folder:
            tf.io.gfile.makedirs(folder)
        save_vocabulary(vocabulary, FLAGS.output)
    sample = corpus_sample(measured)
    tokenizer = WordPieceTokenizer(vocabulary, lowercase=FLAGS.lowercase, strip_accents=strip_accents)
    rate, unknown = unknown_token_rate(tokenizer, sample), unknown_words(tokenizer, sample).most_common(20)
    sample_chars = sum(map(len, sample))
    measured_on = (f"{len(sample):,} held-out lines ({sample_chars:,} characters, every {FLAGS.held_out_every}th "
                   "line, not learned from)" if held_out else
                   f"the corpus's first {sample_chars:,} characters (learned from: a flattering figure)")
    print(f"[UNK] rate: {rate:.2%} of the tokens of {measured_on}"
          + (f"; most often unknown: {', '.join(f'{word} ({count:,})' for word, count in unknown[:10])}"
             if unknown else ""))
    if rate > UNKNOWN_RATE_WARNING:
        print(f"warning: more than {UNKNOWN_RATE_WARNING:.0%} of the tokens are [UNK]: lower --min_char_count "
              "(characters seen fewer times have no token), raise --vocab_size, or check --lowercase")
    write_json(report_path(FLAGS.output), {
        "vocab_file": os.path.basename(FLAGS.output), "tokens": len(vocabulary), "vocab_size": FLAGS.vocab_size,
        "min_char_count": FLAGS.min_char_count, "lowercase": FLAGS.lowercase, "strip_accents": strip_accents,
        "input_files": files, "unknown_token_rate": rate, "unknown_token_rate_sample_chars": sample_chars,
        "unknown_token_rate_held_out_every": FLAGS.held_out_every if held_out else None,
        "unknown_words": dict(unknown)})
    print(f"{len(vocabulary)} tokens from {len(files)} file(s) → {FLAGS.output}")


def main():
    """The console script `electra-build-vocab`."""
    run_tool(run, __name__)


if __name__ == "__main__":  # python -m electra_tf.tools.build_vocab
    main()
