"""Vocabulary learning: a WordPiece `vocab.txt` from a corpus, with tensorflow-text's learner.

The words are split as the tokenizer splits them (`electra_tf.tokenization`),
so every piece learned is one the tokenizer can produce.

Example:
>>> learn_vocabulary({"bat": 3, "sat": 2, "pat": 1}, 12)[5:]
['a', 'b', 'p', 's', 't', '##at', '##a']
"""

import time

import tensorflow as tf
from keras_hub.src.tokenizers.word_piece_tokenizer import pretokenize as keras_hub_pretokenize
from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib as wordpiece_learner

from electra_tf.vocabulary import SPECIAL_TOKENS

# tensorflow-text's learner keeps a piece only when it is seen this many times (its `lower_thresh`), and stops
# when the vocabulary is within 5 % under the size asked (its `slack_ratio`).
LEARNER_MIN_COUNT = 10
LEARNER_SLACK = 0.05


def read_text_files(paths):
    """A `tf.data.Dataset` of each file's whole text, bytes that are not UTF-8 dropped: the shard builder
    replaces them by U+FFFD, which the tokenizer then removes, so the vocabulary sees the text the tokenizer
    will."""
    return tf.data.Dataset.from_tensor_slices(tf.constant(list(paths), tf.string)).map(
        lambda path: tf.strings.unicode_transcode(tf.io.read_file(path), "UTF-8", "UTF-8", errors="ignore"))


def vocabulary_words(texts, lowercase=True, strip_accents=True):
    """The words a `[batch]` string tensor gives the WordPiece learner: keras-hub's trainer's splitting
    (whitespace, punctuation, CJK), after dropping U+FFFD, which the tokenizer drops too."""
    texts = tf.strings.regex_replace(texts, "\ufffd", "")
    return keras_hub_pretokenize(texts, lowercase, strip_accents, split=True, split_on_cjk=True)


def learn_vocabulary(word_counts, vocab_size):
    """tensorflow-text's WordPiece learner on `{word: count}`, the five special tokens first.

    The counts are sorted by word first, so the vocabulary does not depend on the order they were
    counted in (the local tool and the Beam pipeline count in different orders).

    >>> learn_vocabulary({"bat": 3, "sat": 2, "pat": 1}, 12)[5:]
    ['a', 'b', 'p', 's', 't', '##at', '##a']
    """
    if vocab_size <= len(SPECIAL_TOKENS):
        raise ValueError(f"vocab_size must exceed the {len(SPECIAL_TOKENS)} special tokens, got {vocab_size}")
    if not word_counts:
        raise ValueError("the corpus holds no words: is it empty?")
    vocabulary = wordpiece_learner.learn(sorted(word_counts.items()), vocab_size=vocab_size,
                                         reserved_tokens=list(SPECIAL_TOKENS), include_joiner_token=True,
                                         joiner="##")[:vocab_size]
    # The learner can keep exotic whitespace (e.g. U+2009) as a "word"; the
    # tokenizer splits on whitespace, so such an entry could never be used.
    vocabulary = [token for token in vocabulary if token.strip()]
    if len(vocabulary) <= len(SPECIAL_TOKENS):
        raise ValueError("the corpus yielded no word pieces: is it empty?")
    return vocabulary


def build_vocabulary(data, vocab_size, lowercase=True, strip_accents=True, report=None):
    """Learns a WordPiece vocabulary with tensorflow-text's learner, splitting words as keras-hub's
    `compute_word_piece_vocabulary` does.

    Args:
        data: a list of text file paths, or a `tf.data.Dataset` of strings.
        vocab_size: the maximum size, special tokens included.
        report: called with one line per stage (the words counted, the tokens learned, and why the
            vocabulary is smaller than `vocab_size` when it is), e.g. `print`; None: silent.

    Returns:
        The tokens, the five special tokens first; fewer than `vocab_size`
        when the corpus has fewer distinct pieces.
    """
    report = report or (lambda line: None)
    if vocab_size <= len(SPECIAL_TOKENS):
        raise ValueError(f"vocab_size must exceed the {len(SPECIAL_TOKENS)} special tokens, got {vocab_size}")
    if isinstance(data, (list, tuple)):
        data = read_text_files(data)
    started = time.perf_counter()
    report("counting the corpus's words…")
    words = data.batch(64).map(lambda texts: vocabulary_words(texts, lowercase, strip_accents),
                               num_parallel_calls=tf.data.AUTOTUNE)
    try:
        counts = wordpiece_learner.count_words(words)
    except StopIteration:  # tensorflow-text's counter, on a corpus without a word
        raise ValueError("the corpus holds no words: is it empty?") from None
    frequent = sum(count >= LEARNER_MIN_COUNT for count in counts.values())
    report(f"{len(counts):,} distinct words ({sum(counts.values()):,} in all, {frequent:,} of them seen "
           f"{LEARNER_MIN_COUNT}+ times) counted in {time.perf_counter() - started:.1f} s; learning up to "
           f"{vocab_size:,} WordPiece tokens (tensorflow-text's learner, one call)…")
    started = time.perf_counter()
    vocabulary = learn_vocabulary(counts, vocab_size)
    report(f"learned {len(vocabulary):,} tokens in {time.perf_counter() - started:.1f} s")
    if len(vocabulary) < (1 - LEARNER_SLACK) * vocab_size:
        report(shortfall(len(vocabulary), vocab_size, len(counts), frequent))
    return vocabulary


def shortfall(size, vocab_size, distinct_words, frequent_words):
    """Why a learned vocabulary is smaller than asked.

    >>> print(shortfall(4977, 8000, 21034, 3101))
    note: 4,977 tokens, not 8,000: the learner keeps a piece only if the corpus has it at least 10 times, and \
of its 21,034 distinct words 3,101 occur that often; a larger corpus gives more (or ask for fewer)
    """
    return (f"note: {size:,} tokens, not {vocab_size:,}: the learner keeps a piece only if the corpus has it at "
            f"least {LEARNER_MIN_COUNT} times, and of its {distinct_words:,} distinct words {frequent_words:,} occur "
            "that often; a larger corpus gives more (or ask for fewer)")
