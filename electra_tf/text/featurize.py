"""Raw text → model inputs inside the graph, keeping each token's character span in the raw text.

The one featurization of training, evaluation and the exported serving graphs, so a model is served the ids it
was trained on: `split_words` (words with character offsets), `word_pieces` (their ids and character spans),
`pack` (`[CLS] A [SEP] (B [SEP])`, padded) and per task `encode`, `tagging_features`, `squad_windows`.

Example:
>>> from electra_tf.text.tokenizer import WordPieceTokenizer
>>> tokenizer = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox", "##es", "."])
>>> words = split_words(tf.constant(["  Thé foxes."]))
>>> words.words.to_list(), words.start.to_list(), words.end.to_list()
([[b'Th\\xc3\\xa9', b'foxes.']], [[2, 6]], [[5, 12]])
>>> pieces = word_pieces(tokenizer, words)
>>> pieces.ids.to_list(), pieces.start.to_list(), pieces.end.to_list()
([[5, 6, 7, 8]], [[2, 6, 9, 11]], [[5, 9, 11, 12]])
"""

import collections

import numpy as np
import tensorflow as tf
import tensorflow_text as tf_text

from electra_tf.text.cjk import CJK_IDEOGRAPH
from electra_tf.text.normalization import BERT_WHITESPACE, CJK_PUNCTUATION  # noqa: F401

# Python's `str.isspace()` characters: how `str.split()` (CoNLL) and `\s` (SQuAD) cut words.
PYTHON_WHITESPACE = r"[\t\n\x{0B}\x{0C}\r\x{1C}-\x{1F}\x{85}\p{Z}]"
# Length-aware batches are padded to a multiple of this (see `padded_length`), or to SHORT_LENGTH when every row fits.
PAD_MULTIPLE = 16
SHORT_LENGTH = 8
# Characters that are words of their own when tagging raw Chinese text.
CJK_WORDS = f"{CJK_IDEOGRAPH}|{CJK_PUNCTUATION}"
# A tagger's word unit (the unit its training words were) → the `own_words` pattern that cuts raw text alike.
WORD_UNITS = {"whitespace": None, "cjk_char": CJK_WORDS, "char": "[^" + PYTHON_WHITESPACE[1:]}
# The unit of a model folder that records none (saved before units were recorded): the split it was served with.
DEFAULT_WORD_UNIT = "cjk_char"

Words = collections.namedtuple("Words", "words start end byte_start byte_end")
Pieces = collections.namedtuple("Pieces", "ids start end counts")


def split_words(texts, whitespace=PYTHON_WHITESPACE, own_words=None):
    """`[batch]` strings → `Words`: ragged `[batch, (words)]` strings, int32 character offsets `start`, `end`,
    and int64 byte offsets `byte_start`, `byte_end`. Words end at `whitespace`; each character `own_words`
    matches (a regex, e.g. `CJK_WORDS`) is a word of its own too.

    >>> split_words(tf.constant(["江泽民，Bill Clinton。"]), own_words=CJK_WORDS).end.to_list()
    [[1, 2, 3, 4, 8, 16, 17]]
    """
    texts = tf.convert_to_tensor(texts, tf.string)
    # tf-text's split stops at a NUL byte: U+0001 stands in for it (`raw_words` cuts the words from the raw text).
    delimiter = f"{whitespace}+" + (f"|{own_words}" if own_words else "")
    words, begin, end = tf_text.regex_split_with_offsets(tf.strings.regex_replace(texts, "\x00", "\x01"),
                                                         delimiter, own_words or "")
    start = byte_to_char_offsets(texts, begin)
    return Words(words, start, start + tf.strings.length(words, unit="UTF8_CHAR"), begin, end)


def raw_words(texts, words):
    """The words as they are in `texts` (NUL bytes included), dense `[batch, max words]`, "" as padding."""
    begin = words.byte_start.to_tensor(0)
    return tf.strings.substr(tf.expand_dims(texts, 1), begin, words.byte_end.to_tensor(0) - begin)


def byte_to_char_offsets(texts, byte_offsets):
    """Byte offsets `[batch, (n)]` (each at the start of a character of its row's text) → int32 character offsets
    (one `searchsorted` over the whole batch)."""
    _, char_bytes = tf.strings.unicode_decode_with_offsets(texts, "UTF-8")
    row_base = tf.cumsum(tf.cast(tf.strings.length(texts), tf.int64), exclusive=True)
    sorted_starts = char_bytes.flat_values + tf.gather(row_base, char_bytes.value_rowids())
    rows = byte_offsets.value_rowids()
    queries = tf.cast(byte_offsets.flat_values, tf.int64) + tf.gather(row_base, rows)
    global_index = tf.searchsorted(sorted_starts, queries, side="left", out_type=tf.int64)
    chars = global_index - tf.gather(char_bytes.row_splits, rows)
    return byte_offsets.with_flat_values(tf.cast(chars, tf.int32))


def piece_lengths(tokenizer):
    """Characters each vocabulary entry spells (without the suffix marker); -1 for the unknown token."""
    marker = tokenizer.suffix_indicator
    lengths = np.array([len(token[len(marker):] if token.startswith(marker) else token)
                        for token in tokenizer.get_vocabulary()], np.int32)
    lengths[tokenizer.token_to_id(tokenizer.oov_token)] = -1
    return lengths


def word_pieces(tokenizer, words, empty_word_id=None):
    """`Words` → `Pieces`: ragged `[batch, (pieces)]` int32 ids and character spans `start`, `end`, and
    `counts`, pieces per word. A word with no piece is dropped (as `tokenizer(text)` drops it) or, given
    `empty_word_id`, is that one id."""
    flat_words = words.words.flat_values
    ids = tf.cast(tokenizer.tokenize(flat_words), tf.int32)  # [words, (pieces)]
    if empty_word_id is not None:
        empty = tf.cast(ids.row_lengths() == 0, tf.int64)
        filler = tf.RaggedTensor.from_row_lengths(
            tf.fill([tf.reduce_sum(empty)], tf.constant(empty_word_id, tf.int32)), empty)
        ids = tf.concat([ids, filler], axis=1)
    # A word is aligned when its pieces spell as many characters as it has (one unknown piece takes what the
    # others leave); an unaligned word gives each piece the whole word, as the original does.
    word = ids.value_rowids()
    num_words = tf.shape(flat_words, out_type=tf.int64)[0]
    lengths = tf.gather(tf.constant(piece_lengths(tokenizer)), ids.flat_values)
    unknown = lengths < 0
    known_chars = tf.math.unsorted_segment_sum(tf.where(unknown, 0, lengths), word, num_words)
    unknowns = tf.math.unsorted_segment_sum(tf.cast(unknown, tf.int32), word, num_words)
    word_start, word_end = words.start.flat_values, words.end.flat_values
    word_chars = word_end - word_start
    aligned = (((unknowns == 0) & (known_chars == word_chars))
               | ((unknowns == 1) & (known_chars < word_chars)))
    lengths = tf.where(unknown, tf.gather(word_chars - known_chars, word), lengths)
    chars_before_word = tf.cumsum(tf.math.unsorted_segment_sum(lengths, word, num_words), exclusive=True)
    end_in_word = tf.cumsum(lengths) - tf.gather(chars_before_word, word)
    piece_aligned, start_of_word = tf.gather(aligned, word), tf.gather(word_start, word)
    start = tf.where(piece_aligned, start_of_word + end_in_word - lengths, start_of_word)
    end = tf.where(piece_aligned, start_of_word + end_in_word, tf.gather(word_end, word))
    pieces_per_text = tf.math.unsorted_segment_sum(ids.row_lengths(), words.words.value_rowids(),
                                                   words.words.nrows())
    to_batch = lambda values: tf.RaggedTensor.from_row_lengths(values, pieces_per_text, validate=False)  # noqa: E731
    return Pieces(to_batch(ids.flat_values), to_batch(start), to_batch(end),
                  words.words.with_flat_values(tf.cast(ids.row_lengths(), tf.int32)))


def row_cumsum(ragged):
    """Inclusive cumulative sums along each row of a ragged `[batch, (n)]`."""
    total = tf.cumsum(ragged.flat_values)
    before_row = tf.gather(tf.concat([tf.zeros([1], total.dtype), total], 0), ragged.row_starts())
    return ragged.with_flat_values(total - tf.gather(before_row, ragged.value_rowids()))


def _position_in_row(ragged):
    rows = ragged.value_rowids()
    return tf.cast(tf.range(tf.shape(rows, out_type=tf.int64)[0]) - tf.gather(ragged.row_starts(), rows), tf.int32)


def keep_first(ragged, counts):
    """The first `counts[i]` items of each row of a ragged `[batch, (n)]`."""
    # Flat-value ops rather than ragged broadcasting, whose shape checks make tracing slow.
    counts = tf.cast(counts, tf.int32)
    keep = _position_in_row(ragged) < tf.gather(counts, ragged.value_rowids())
    lengths = tf.minimum(tf.cast(ragged.row_lengths(), tf.int32), counts)
    return tf.RaggedTensor.from_row_lengths(tf.boolean_mask(ragged.flat_values, keep), tf.cast(lengths, tf.int64),
                                            validate=False)


def fit_single(length, budget):
    """How many tokens of one segment fit in `budget` (int32)."""
    return tf.minimum(tf.cast(length, tf.int32), tf.cast(budget, tf.int32))


def fit_pair(length_a, length_b, budget):
    """Round-robin truncation of two segments to `budget` tokens (keras-hub's `truncate="round_robin"`):
    tokens are taken one from each in turn, so the longer segment is cut first."""
    length_a, length_b, budget = (tf.cast(x, tf.int32) for x in (length_a, length_b, budget))
    half = (budget + 1) // 2
    keep_a = tf.minimum(length_a, tf.maximum(half, budget - length_b))
    return keep_a, tf.minimum(length_b, budget - keep_a)


def _layout(segments):
    """Where `pack` puts things: per segment the `[n, 2]` (row, position) of its tokens; the [SEP] positions."""
    batch = tf.shape(segments[0].row_lengths())[0]
    offset = tf.ones([batch], tf.int32)  # after [CLS]
    token_indices, sep_positions = [], []
    for segment in segments:
        rows = tf.cast(segment.value_rowids(), tf.int32)
        token_indices.append(tf.stack([rows, tf.gather(offset, rows) + _position_in_row(segment)], axis=1))
        offset += tf.cast(segment.row_lengths(), tf.int32)
        sep_positions.append(offset)
        offset += 1
    return batch, token_indices, sep_positions, offset


def padded_length(lengths, sequence_length):
    """Length-aware padding: the longest of `lengths` rounded up to `SHORT_LENGTH` or else a multiple of
    `PAD_MULTIPLE`, at most `sequence_length` (so a model sees a handful of lengths, not one per batch).

    >>> [int(padded_length([n], 128)) for n in (3, 8, 9, 17, 200)]
    [8, 8, 16, 32, 128]
    """
    longest = tf.reduce_max(tf.concat([tf.cast(lengths, tf.int32), [1]], axis=0))
    rounded = tf.where(longest <= SHORT_LENGTH, SHORT_LENGTH, -(-longest // PAD_MULTIPLE) * PAD_MULTIPLE)
    return tf.minimum(tf.cast(sequence_length, tf.int32), rounded)


def pack(segments, sequence_length, cls_id, sep_id, pad_id=0, pad_to_max_length=True):
    """`[CLS] segment_0 [SEP] (segment_1 [SEP])` as int32 `input_ids`, `attention_mask`, `token_type_ids`
    `[batch, sequence_length]` (or, with `pad_to_max_length=False`, `[batch, padded_length(...)]`); the
    segments are ragged `[batch, (n)]` int32, already cut to fit `sequence_length`."""
    batch, token_indices, sep_positions, length = _layout(segments)
    if not pad_to_max_length:
        sequence_length = padded_length(length, sequence_length)
    shape = tf.stack([batch, sequence_length])
    rows = tf.range(batch)
    ids = tf.fill(shape, tf.constant(pad_id, tf.int32))
    ids = tf.tensor_scatter_nd_update(ids, tf.stack([rows, tf.zeros_like(rows)], 1), tf.fill([batch], cls_id))
    types = tf.zeros(shape, tf.int32)
    for index, (segment, indices, sep) in enumerate(zip(segments, token_indices, sep_positions)):
        sep_indices = tf.stack([rows, sep], 1)
        ids = tf.tensor_scatter_nd_update(ids, indices, tf.cast(segment.flat_values, tf.int32))
        ids = tf.tensor_scatter_nd_update(ids, sep_indices, tf.fill([batch], sep_id))
        if index:
            types = tf.tensor_scatter_nd_update(types, indices, tf.fill(tf.shape(indices)[:1], index))
            types = tf.tensor_scatter_nd_update(types, sep_indices, tf.fill([batch], index))
    mask = tf.cast(tf.range(sequence_length)[None, :] < length[:, None], tf.int32)
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


def pack_side(segments, sequence_length, fill=-1):
    """Per-token values (e.g. character offsets) where `pack` puts the tokens, `fill` elsewhere."""
    batch, token_indices, _, _ = _layout(segments)
    side = tf.fill(tf.stack([batch, sequence_length]), tf.constant(fill, segments[0].dtype))
    for segment, indices in zip(segments, token_indices):
        side = tf.tensor_scatter_nd_update(side, indices, segment.flat_values)
    return side


def encode(tokenizer, sequence_length, texts, pairs=None, pad_to_max_length=True):
    """`[CLS] text [SEP] (pair [SEP])` ids truncated to `sequence_length` (the longer of a pair first) and padded
    to it, or with `pad_to_max_length=False` to the batch's longest (`padded_length`)."""
    segments = [tokenizer.tokenize(texts)]
    if pairs is None:
        keep = [fit_single(segments[0].row_lengths(), sequence_length - 2)]
    else:
        segments.append(tokenizer.tokenize(pairs))
        keep = fit_pair(segments[0].row_lengths(), segments[1].row_lengths(), sequence_length - 3)
    segments = [keep_first(segment, n) for segment, n in zip(segments, keep)]
    return pack(segments, sequence_length, tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id,
                pad_to_max_length)


def tagging_features(tokenizer, sequence_length, texts, pad_to_max_length=True, own_words=None):
    """Tagging inputs for whitespace-separated words (and `own_words`): `(inputs, words, first_piece)`, the
    last each word's first-piece position (-1 where the word does not fit), where its label goes."""
    words = split_words(texts, PYTHON_WHITESPACE, own_words)
    pieces = word_pieces(tokenizer, words, empty_word_id=tokenizer.token_to_id(tokenizer.oov_token))
    counts = pieces.counts
    ends = row_cumsum(counts).flat_values
    kept = ends <= sequence_length - 2
    first_piece = counts.with_flat_values(tf.where(kept, ends - counts.flat_values + 1, -1))  # after [CLS]
    kept_pieces = tf.math.unsorted_segment_sum(tf.where(kept, counts.flat_values, 0), counts.value_rowids(),
                                               counts.nrows())
    inputs = pack([keep_first(pieces.ids, kept_pieces)], sequence_length, tokenizer.cls_token_id,
                  tokenizer.sep_token_id, tokenizer.pad_token_id, pad_to_max_length)
    return inputs, words, first_piece


class SquadWindows(collections.namedtuple(
        "SquadWindows", "inputs example_index char_start char_end is_max_context query_lengths "
                        "start_positions end_positions unlocated")):
    """The doc-stride windows of a batch of questions, one row per window (see `squad_windows`)."""


def _ceil_div(a, b):
    return (a + b - 1) // b


def _answer_tokens(pieces, answer_start, answer_end):
    """The first and last context token overlapping each answer's characters; first > last when none does."""
    no_more = tf.int32.max  # pads each row so that searching past its tokens finds nothing
    ends = pieces.end.to_tensor(no_more)
    starts = pieces.start.to_tensor(no_more)
    first = tf.searchsorted(ends, answer_start[:, None], side="right", out_type=tf.int32)[:, 0]
    last = tf.searchsorted(starts, answer_end[:, None], side="left", out_type=tf.int32)[:, 0] - 1
    return tf.where(answer_start >= 0, first, 1), tf.where(answer_start >= 0, last, 0)


def squad_windows(tokenizer, sequence_length, max_query_length, doc_stride, questions, contexts,
                  context_index=None, answer_start=None, answer_end=None):
    """Every `[CLS] question [SEP] context window [SEP]` of a batch of SQuAD questions, as BERT's and
    ELECTRA's `run_squad` cut them: a `SquadWindows` of flat `[F, ...]` tensors, F windows in all
    (`is_max_context`: the window where a token has most context, the only one it is scored in).

    `context_index` `[N]` picks each question's context of `contexts` (default: the i-th), so a shared context
    is tokenized once. `answer_start`, `answer_end` (`[N]` characters, -1 for none) add the labels
    `start_positions`, `end_positions` (0, 0 when the answer is not wholly in the window) and `unlocated`,
    how many answers cover no token.
    """
    query = tf.cast(tokenizer.tokenize(questions), tf.int32)
    query_lengths = fit_single(query.row_lengths(), max_query_length)
    query = keep_first(query, query_lengths)
    pieces = word_pieces(tokenizer, split_words(contexts, PYTHON_WHITESPACE))
    if context_index is not None:
        pieces = Pieces(*(tf.gather(part, context_index) for part in pieces))
    tokens = tf.cast(pieces.ids.row_lengths(), tf.int32)
    max_window = tf.maximum(sequence_length - query_lengths - 3, 1)
    step = tf.minimum(doc_stride, max_window)
    windows = tf.ragged.range(1 + tf.maximum(0, _ceil_div(tokens - max_window, step)))  # [N, (windows)]
    example = tf.cast(windows.value_rowids(), tf.int32)
    number = windows.flat_values  # of the window within its example
    start = number * tf.gather(step, example)
    length = tf.minimum(tf.gather(tokens, example) - start, tf.gather(max_window, example))
    first_token = tf.cast(tf.gather(pieces.ids.row_starts(), example), tf.int32) + start
    token = tf.ragged.range(first_token, first_token + length)  # [F, (length)]: indices into the flat pieces
    window_of = lambda values: token.with_flat_values(tf.gather(values.flat_values, token.flat_values))  # noqa: E731

    # Max context: score 100 · min(left, right) + length, i.e. min(left, right) + 0.01 · length in integers.
    position = _position_in_row(token)
    window_length = tf.gather(length, tf.cast(token.value_rowids(), tf.int32))
    score = 100 * tf.minimum(position, window_length - 1 - position) + window_length
    flat_token, all_tokens = token.flat_values, tf.size(pieces.ids.flat_values)
    best = tf.gather(tf.math.unsorted_segment_max(score, flat_token, all_tokens), flat_token)
    token_window = tf.gather(number, tf.cast(token.value_rowids(), tf.int32))
    first_best = tf.math.unsorted_segment_min(tf.where(score == best, token_window, tf.int32.max), flat_token,
                                              all_tokens)
    is_max = tf.cast((score == best) & (token_window == tf.gather(first_best, flat_token)), tf.int32)

    window_query = tf.gather(query, example)
    no_offsets = window_query * 0 - 1
    inputs = pack([window_query, window_of(pieces.ids)], sequence_length, tokenizer.cls_token_id,
                  tokenizer.sep_token_id, tokenizer.pad_token_id)
    char_start = pack_side([no_offsets, window_of(pieces.start)], sequence_length)
    char_end = pack_side([no_offsets, window_of(pieces.end)], sequence_length)
    is_max_context = pack_side([no_offsets * 0, token.with_flat_values(is_max)], sequence_length, fill=0) > 0

    start_positions = end_positions = unlocated = None
    if answer_start is not None:
        first, last = _answer_tokens(pieces, tf.cast(answer_start, tf.int32), tf.cast(answer_end, tf.int32))
        unlocated = tf.reduce_sum(tf.cast((answer_start >= 0) & (first > last), tf.int32))
        first, last = tf.gather(first, example), tf.gather(last, example)
        inside = (first <= last) & (start <= first) & (last < start + length)
        offset = tf.gather(query_lengths, example) + 2 - start  # window token i sits at i + offset
        start_positions = tf.where(inside, first + offset, 0)
        end_positions = tf.where(inside, last + offset, 0)
    return SquadWindows(inputs, example, char_start, char_end, is_max_context, query_lengths, start_positions,
                        end_positions, unlocated)


def squad_window(tokenizer, sequence_length, max_query_length, questions, contexts, pad_to_max_length=True):
    """The first window of each question (what the serving graph answers): `(inputs, char_start, char_end)`."""
    windows = squad_windows(tokenizer, sequence_length, max_query_length, sequence_length, questions, contexts)
    first = tf.searchsorted(windows.example_index, tf.range(tf.shape(questions)[0]), side="left")
    inputs = {name: tf.gather(value, first) for name, value in windows.inputs.items()}
    length = tf.shape(inputs["input_ids"])[1] if pad_to_max_length else \
        padded_length(tf.reduce_sum(inputs["attention_mask"], axis=1), sequence_length)
    take = lambda values: tf.gather(values, first)[:, :length]  # noqa: E731
    return {name: value[:, :length] for name, value in inputs.items()}, take(windows.char_start), \
        take(windows.char_end)


def unit_pattern(unit):
    """The `own_words` pattern (`split_words`) of a word unit."""
    if unit not in WORD_UNITS:
        raise ValueError(f"word_unit must be one of {sorted(WORD_UNITS)}, got {unit!r}")
    return WORD_UNITS[unit]
