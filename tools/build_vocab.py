"""What `electra-build-vocab` does: its `main`.

Its flags and `--help` text are in `build_vocab_flags.py`, which the console script parses before this module
(and TensorFlow) is imported.
"""

import os

import tensorflow as tf

from electra_tf.atomic import write_json
from electra_tf.data.corpus_readers import check_parts, corpus_texts
from electra_tf.data.pipeline import corpus_parts
from electra_tf.tokenization import ElectraTokenizer
from electra_tf.tools.build_vocab_flags import FLAGS
from electra_tf.tools.common import ensure_new_output, exits_cleanly_on_bad_input, run_tool
from electra_tf.vocabulary import save_vocabulary
from electra_tf.vocabulary_learning import UNKNOWN_RATE_WARNING, build_vocabulary, check_settings, unknown_token_rate

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
def main(argv):
    del argv
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
    else:
        vocabulary = build_vocabulary(corpus_texts(files, FLAGS.text_field, FLAGS.tfds_data_dir),
                                      FLAGS.vocab_size, lowercase=FLAGS.lowercase, strip_accents=strip_accents,
                                      min_char_count=FLAGS.min_char_count, report=lambda line: print(line, flush=True))
        if folder:
            tf.io.gfile.makedirs(folder)
        save_vocabulary(vocabulary, FLAGS.output)
    sample = corpus_sample(corpus_texts(files, FLAGS.text_field, FLAGS.tfds_data_dir))
    rate = unknown_token_rate(ElectraTokenizer(vocabulary, lowercase=FLAGS.lowercase, strip_accents=strip_accents),
                              sample)
    sample_chars = sum(map(len, sample))
    print(f"[UNK] rate: {rate:.2%} of the tokens of the corpus's first {sample_chars:,} characters")
    if rate > UNKNOWN_RATE_WARNING:
        print(f"warning: more than {UNKNOWN_RATE_WARNING:.0%} of the tokens are [UNK]: lower --min_char_count "
              "(characters seen fewer times have no token), raise --vocab_size, or check --lowercase")
    write_json(report_path(FLAGS.output), {
        "vocab_file": os.path.basename(FLAGS.output), "tokens": len(vocabulary), "vocab_size": FLAGS.vocab_size,
        "min_char_count": FLAGS.min_char_count, "lowercase": FLAGS.lowercase, "strip_accents": strip_accents,
        "input_files": files, "unknown_token_rate": rate, "unknown_token_rate_sample_chars": sample_chars})
    print(f"{len(vocabulary)} tokens from {len(files)} file(s) → {FLAGS.output}")


if __name__ == "__main__":  # python -m electra_tf.tools.build_vocab (the console script: electra_tf_cli)
    run_tool(main, "electra_tf.tools.build_vocab_flags")
