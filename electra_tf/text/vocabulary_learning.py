"""Vocabulary learning: a WordPiece `vocab.txt` from a corpus, with tensorflow-text's learner, and the share of
`[UNK]` a vocabulary leaves in a corpus. Words are counted as the tokenizer splits them, so every piece learned
is one it can produce.

Example (with `min_char_count=2`, `x`, seen once, gets no token; `北` `京` `，`, never inside a word, get no `##`
form):
>>> learn_vocabulary({"北": 4, "京": 4, "，": 3, "bat": 6, "sat": 4, "x": 1}, 20, min_char_count=2)[5:]
['a', 'b', 's', 't', '京', '北', '，', '##at', '##a', '##t']
"""

import collections
import itertools
import re
import time

import tensorflow as tf

from electra_tf.util.library_internals import count_words, learn_wordpieces
from electra_tf.text.normalization import bert_pretokenize
from electra_tf.text.vocabulary import SPECIAL_TOKENS

# tensorflow-text's learner keeps a piece of more than one character only when it is seen this many times (its
# `lower_thresh`), ignores words longer than `MAX_WORD_LENGTH` characters (its `max_token_length`), and stops
# when the vocabulary is within 5 % under the size asked (its `slack_ratio`).
LEARNER_MIN_COUNT = 10
MAX_WORD_LENGTH = 50
LEARNER_SLACK = 0.05
# A character seen this many times gets a token (on a large corpus, raise it so that stray characters do not take
# the room of longer pieces).
MIN_CHAR_COUNT = 1
JOINER = "##"
# The share of [UNK] above which the tools warn: the BERT-Chinese vocabulary leaves about 1.2 % on Chinese text,
# an English vocabulary on English text well under 1 %.
UNKNOWN_RATE_WARNING = 0.02


def read_text_files(paths):
    """A `tf.data.Dataset` of each file's whole text, bytes that are not UTF-8 dropped (as the tokenizer drops the
    U+FFFD the shard builder puts there)."""
    return tf.data.Dataset.from_tensor_slices(tf.constant(list(paths), tf.string)).map(
        lambda path: tf.strings.unicode_transcode(tf.io.read_file(path), "UTF-8", "UTF-8", errors="ignore"))


def check_settings(vocab_size, min_char_count):
    if vocab_size <= len(SPECIAL_TOKENS):
        raise ValueError(f"vocab_size must exceed the {len(SPECIAL_TOKENS)} special tokens, got {vocab_size}")
    if min_char_count < 1:
        raise ValueError(f"min_char_count must be at least 1, got {min_char_count}")


def alphabet(word_counts, vocab_size, min_char_count=MIN_CHAR_COUNT):
    """`(characters, inside)`: the characters that get a token, most frequent first, and those of them seen
    inside a word (which also get a `##` form); the most frequent that fit (ties by code point, as the learner).

    >>> characters, inside = alphabet({"bat": 3, "sat": 2, "at": 1, "x": 1}, 30, min_char_count=2)
    >>> characters, sorted(inside)
    (['a', 't', 'b', 's'], ['a', 't'])
    >>> alphabet({"bat": 3, "sat": 2, "at": 1, "x": 1}, 9)[0]  # room for 4 tokens: a ##a t ##t
    ['a', 't']
    """
    char_counts, seen_inside = collections.Counter(), set()
    for word, count in word_counts.items():
        if len(word) <= MAX_WORD_LENGTH:
            for character in word:
                char_counts[character] += count
            seen_inside.update(word[1:])
    ranked = sorted((c for c, n in char_counts.items() if n >= min_char_count), key=lambda c: (-char_counts[c], c))
    characters, room = [], vocab_size - len(SPECIAL_TOKENS)
    for character in ranked:
        room -= 1 + (character in seen_inside)
        if room < 0:
            break
        characters.append(character)
    return characters, seen_inside.intersection(characters)


def learn_vocabulary(word_counts, vocab_size, min_char_count=MIN_CHAR_COUNT):
    """tensorflow-text's WordPiece learner on `{word: count}`, the five special tokens first, the `##` forms of
    characters never inside a word dropped; the same vocabulary whatever order the words were counted in.

    >>> learn_vocabulary({"bat": 3, "sat": 2, "pat": 1}, 12)[5:]  # no room for "##at" beside the characters
    ['a', 'b', 'p', 's', 't', '##a', '##t']
    """
    check_settings(vocab_size, min_char_count)
    if not word_counts:
        raise ValueError("the corpus holds no words: is it empty?")
    characters, inside = alphabet(word_counts, vocab_size, min_char_count)
    if not characters:
        raise ValueError(f"no character of the corpus is seen {min_char_count}+ times (min_char_count), or "
                         f"vocab_size={vocab_size} leaves no room for one")
    unused = {JOINER + character for character in characters if character not in inside}
    vocabulary = learn_wordpieces(
        sorted(word_counts.items()), vocab_size=vocab_size + len(unused), reserved_tokens=list(SPECIAL_TOKENS),
        lower_thresh=LEARNER_MIN_COUNT, max_token_length=MAX_WORD_LENGTH, max_unique_chars=len(characters),
        slack_ratio=LEARNER_SLACK, include_joiner_token=True, joiner=JOINER)
    vocabulary = [token for token in vocabulary if token not in unused]
    if len(vocabulary) > vocab_size:  # the learner's search can end above the size: its rarest longer pieces go
        kept = {*SPECIAL_TOKENS, *characters, *(JOINER + character for character in inside)}
        dropped = set([token for token in reversed(vocabulary) if token not in kept][:len(vocabulary) - vocab_size])
        vocabulary = [token for token in vocabulary if token not in dropped]
    if len(vocabulary) <= len(SPECIAL_TOKENS):
        raise ValueError("the corpus yielded no word pieces: is it empty?")
    return vocabulary


def build_vocabulary(data, vocab_size, lowercase=True, strip_accents=True, min_char_count=MIN_CHAR_COUNT,
                     report=None):
    """A WordPiece vocabulary of at most `vocab_size` tokens learned on `data` (text file paths or a `tf.data.Dataset`
    of strings) as the tokenizer splits it; `report` (e.g. `print`) is given one line per stage."""
    report = report or (lambda line: None)
    check_settings(vocab_size, min_char_count)
    if isinstance(data, (list, tuple)):
        data = read_text_files(data)
    started = time.perf_counter()
    report("counting the corpus's words…")
    words = data.batch(64).map(lambda texts: bert_pretokenize(texts, lowercase, strip_accents),
                               num_parallel_calls=tf.data.AUTOTUNE)
    try:
        counts = count_words(words)
    except StopIteration:  # tensorflow-text's counter, on a corpus without a word
        raise ValueError("the corpus holds no words: is it empty?") from None
    except tf.errors.InvalidArgumentError as e:  # a corpus reader's line (a file, and its line or row), from tf.data
        reader_error = re.search(r"\bValueError: (.+)", e.message)
        if reader_error is None:
            raise
        raise ValueError(reader_error.group(1).strip()) from None
    frequent = sum(count >= LEARNER_MIN_COUNT for count in counts.values())
    report(f"{len(counts):,} distinct words ({sum(counts.values()):,} in all, {frequent:,} of them seen "
           f"{LEARNER_MIN_COUNT}+ times) counted in {time.perf_counter() - started:.1f} s; learning up to "
           f"{vocab_size:,} WordPiece tokens (tensorflow-text's learner, one call)…")
    started = time.perf_counter()
    vocabulary = learn_vocabulary(counts, vocab_size, min_char_count)
    characters, joined, longer = composition(vocabulary)
    report(f"learned {len(vocabulary):,} tokens in {time.perf_counter() - started:.1f} s: {characters:,} characters "
           f"(each seen {min_char_count}+ times), {joined:,} ## forms of characters (those seen inside words), "
           f"{longer:,} longer pieces")
    if len(vocabulary) < (1 - LEARNER_SLACK) * vocab_size:
        report(shortfall(vocabulary, vocab_size, min_char_count))
    return vocabulary


def composition(vocabulary):
    """`(characters, joined, longer)`: how many of a vocabulary's pieces are characters, `##` characters, longer.

    >>> composition(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "中", "国", "a", "t", "##t", "at"])
    (4, 1, 1)
    """
    pieces = vocabulary[len(SPECIAL_TOKENS):]
    characters = sum(len(token) == 1 for token in pieces)
    joined = sum(token.startswith(JOINER) and len(token) == len(JOINER) + 1 for token in pieces)
    return characters, joined, len(pieces) - characters - joined


def shortfall(vocabulary, vocab_size, min_char_count=MIN_CHAR_COUNT):
    """Why a learned vocabulary is smaller than asked.

    >>> print(shortfall(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "中", "国", "人", "##t", "at"], 30000))
    note: 10 tokens, not 30,000: every character seen 1+ times has its token, and the learner keeps a longer \
piece only if the corpus has it 10+ times; most characters are CJK ideographs, each a word of its own (as the \
tokenizer splits them), which make no longer pieces; a larger corpus gives more (or ask for fewer)
    """
    characters = [token for token in vocabulary[len(SPECIAL_TOKENS):] if len(token) == 1]
    cjk = sum("\u4e00" <= character <= "\u9fff" for character in characters)
    return (f"note: {len(vocabulary):,} tokens, not {vocab_size:,}: every character seen {min_char_count}+ times has "
            f"its token, and the learner keeps a longer piece only if the corpus has it {LEARNER_MIN_COUNT}+ times"
            + ("; most characters are CJK ideographs, each a word of its own (as the tokenizer splits them), which "
               "make no longer pieces" if cjk > len(characters) / 2 else "")
            + ("; lower --min_char_count for rarer characters" if min_char_count > 1 else "")
            + "; a larger corpus gives more (or ask for fewer)")


def split_held_out(texts, every):
    """`(learned, held_out)`: the non-blank lines of a `tf.data.Dataset` of texts, every `every`-th one held out,
    each part a dataset of texts of up to 256 lines.

    >>> corpus = tf.data.Dataset.from_tensors(chr(10).join(["a", "b", "", "c", "d"]))  # lines a, b, c, d
    >>> learned, held_out = split_held_out(corpus, 2)
    >>> [text.numpy().decode().split() for text in learned], [text.numpy().decode().split() for text in held_out]
    ([['a', 'c']], [['b', 'd']])
    """
    if every < 2:
        raise ValueError(f"held out: every must be at least 2 (one line in `every`), got {every}")
    lines = texts.flat_map(lambda text: tf.data.Dataset.from_tensor_slices(tf.strings.split(text, "\n")))
    lines = lines.filter(lambda line: tf.strings.length(tf.strings.strip(line)) > 0).enumerate()
    parts = (lines.filter(lambda i, _: i % every != every - 1), lines.filter(lambda i, _: i % every == every - 1))
    return tuple(part.map(lambda _, line: line).batch(256).map(
        lambda lines: tf.strings.reduce_join(lines, separator="\n")) for part in parts)


def unknown_token_rate(tokenizer, texts, batch_size=256):
    """The share of `[UNK]` among the tokens a `WordPieceTokenizer` gives `texts` (0.0 when there are none).

    >>> from electra_tf.text.tokenizer import WordPieceTokenizer
    >>> tokenizer = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox", "，"])
    >>> unknown_token_rate(tokenizer, ["the fox，", "the cat"])
    0.2
    """
    unknown_id, unknown, total = tokenizer.token_to_id(tokenizer.oov_token), 0, 0
    texts = iter(texts)
    while batch := list(itertools.islice(texts, batch_size)):
        ids = tokenizer.tokenize(tf.constant(batch, tf.string)).flat_values
        unknown += int(tf.reduce_sum(tf.cast(ids == unknown_id, tf.int64)))
        total += int(tf.size(ids))
    return unknown / total if total else 0.0


def unknown_words(tokenizer, texts, batch_size=256):
    """A `collections.Counter` of the words (as BERT splits them) of `texts` that a `WordPieceTokenizer` maps,
    wholly or in part, to `[UNK]`.

    >>> from electra_tf.text.tokenizer import WordPieceTokenizer
    >>> tokenizer = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "他", "说", "the", "fox"])
    >>> unknown_words(tokenizer, ["他说：“the fox”", "他说……"]).most_common()
    [('…', 2), ('：', 1), ('“', 1), ('”', 1)]
    """
    unknown_id, counts = tokenizer.token_to_id(tokenizer.oov_token), collections.Counter()
    texts = iter(texts)
    while batch := list(itertools.islice(texts, batch_size)):
        texts_batch = tf.constant(batch, tf.string)
        words = bert_pretokenize(texts_batch, tokenizer.lowercase, tokenizer.strip_accents).flat_values
        ids = tokenizer.tokenize(words)
        unknown = tf.math.unsorted_segment_max(tf.cast(ids.flat_values == unknown_id, tf.int32), ids.value_rowids(),
                                               ids.nrows()) > 0
        counts.update(word.decode("utf-8") for word in tf.boolean_mask(words, unknown).numpy())
    return counts
