"""Raw text → model inputs inside the graph, keeping each token's character span in the raw text.

The serving signatures tokenize in-graph with the training tokenizer
(`ElectraTokenizer.tokenize`: BERT's rules in TF string ops, then tf-text's
`FastWordpieceTokenizer`). Tagging and question answering also need to point
back into the raw text, which `tokenize` cannot (its normalisation changes
lengths), so text is cut into whitespace-separated words first, as the data
readers do (`str.split()` for CoNLL, `\\S+` in `data/tasks/squad.py`):

- `split_words`: words with their `[start, end)` *character* offsets (code
  points, as Python's `str` indexes them);
- `word_pieces`: each word's WordPiece ids, and each piece's characters found
  by counting what the pieces spell, exactly as `squad.py` does (a word whose
  pieces do not spell as many characters as it has gives every piece the
  whole word);
- `pack`: `[CLS] A [SEP] (B [SEP])` padded to a fixed length, with truncation
  budgets (`fit_single`, `fit_pair` = keras-hub's "round_robin");
- `encode`, `tagging_features`, `squad_window`: what `tokenizer.encode`,
  `data/tasks/tagging.py` and the first window of `squad_features` make.

Splitting on whitespace first does not change the ids: whitespace ends a word
in `bert_pretokenize` too, and lower-casing and NFD do not look across it.
With `whitespace=BERT_WHITESPACE` the ids equal `tokenizer(text)` exactly;
with `PYTHON_WHITESPACE` they equal the SQuAD/CoNLL featurisation (which also
splits at \\x1c-\\x1f, \\v, \\f and \\x85, control characters BERT deletes).

Packing is written with core ops rather than keras-hub's `MultiSegmentPacker`
because that one runs tf-text's trimmer ops; the exported graph keeps to the
long-standing ops TF Serving bundles (see `docs/serving.md`).

Example:
>>> from electra_tf.tokenization import ElectraTokenizer
>>> tokenizer = ElectraTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox", "##es", "."])
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

# The same class `bert_normalize` turns into spaces (reused so the two cannot drift apart).
from electra_tf.text_normalization import _WHITESPACE as BERT_WHITESPACE

# Python's `str.isspace()` characters: how `str.split()` (CoNLL) and `\s` (SQuAD) cut words.
PYTHON_WHITESPACE = r"[\t\n\x{0B}\x{0C}\r\x{1C}-\x{1F}\x{85}\p{Z}]"

Words = collections.namedtuple("Words", "words start end byte_start byte_end")
Pieces = collections.namedtuple("Pieces", "ids start end counts")


def split_words(texts, whitespace=PYTHON_WHITESPACE):
    """`[batch]` strings → `Words`: ragged `[batch, (words)]` strings, int32 character offsets `start`, `end`,
    and int64 byte offsets `byte_start`, `byte_end`.

    (tf-text's `RegexSplitWithOffsets` stops at a NUL byte, so U+0001, also a
    one-byte control character, stands in for NUL while splitting: `words`
    holds it in place of NUL; `raw_words` cuts the words from the raw text.)
    """
    texts = tf.convert_to_tensor(texts, tf.string)
    words, begin, end = tf_text.regex_split_with_offsets(tf.strings.regex_replace(texts, "\x00", "\x01"),
                                                         f"{whitespace}+", "")
    start = byte_to_char_offsets(texts, begin)
    return Words(words, start, start + tf.strings.length(words, unit="UTF8_CHAR"), begin, end)


def raw_words(texts, words):
    """The words as they are in `texts` (NUL bytes included), dense `[batch, max words]`, "" as padding."""
    begin = words.byte_start.to_tensor(0)
    return tf.strings.substr(tf.expand_dims(texts, 1), begin, words.byte_end.to_tensor(0) - begin)


def byte_to_char_offsets(texts, byte_offsets):
    """Byte offsets `[batch, (n)]` (each at the start of a character of its row's text) → int32 character offsets.

    One `searchsorted` over all rows at once: the rows' character starts are
    made increasing by adding each row's byte position in the whole batch.
    """
    _, char_bytes = tf.strings.unicode_decode_with_offsets(texts, "UTF-8")
    row_base = tf.cumsum(tf.cast(tf.strings.length(texts), tf.int64), exclusive=True)
    sorted_starts = char_bytes.flat_values + tf.gather(row_base, char_bytes.value_rowids())
    rows = byte_offsets.value_rowids()
    queries = tf.cast(byte_offsets.flat_values, tf.int64) + tf.gather(row_base, rows)
    global_index = tf.searchsorted(sorted_starts, queries, side="left", out_type=tf.int64)
    chars = global_index - tf.gather(char_bytes.row_splits, rows)
    return byte_offsets.with_flat_values(tf.cast(chars, tf.int32))


def piece_lengths(tokenizer):
    """Characters each vocabulary entry spells (without the suffix marker); -1 for the unknown token.

    (`data/tasks/squad.py` has the same numbers as a private numpy helper;
    here they become a graph constant.)
    """
    marker = tokenizer.suffix_indicator
    lengths = np.array([len(token[len(marker):] if token.startswith(marker) else token)
                        for token in tokenizer.get_vocabulary()], np.int32)
    lengths[tokenizer.token_to_id(tokenizer.oov_token)] = -1
    return lengths


def word_pieces(tokenizer, words, empty_word_id=None):
    """`Words` → `Pieces`: ragged `[batch, (pieces)]` int32 ids and character spans `start`, `end`;
    `counts`, ragged `[batch, (words)]`, is how many pieces each word has.

    A word that yields no piece (only control characters) is dropped, as
    `tokenizer(text)` drops it, unless `empty_word_id` is given: then it is
    that one id (the tagging data's `[UNK]`), so every word keeps a piece.
    """
    flat_words = words.words.flat_values
    ids = tf.cast(tokenizer.tokenize(flat_words), tf.int32)  # [words, (pieces)]
    if empty_word_id is not None:
        empty = tf.cast(ids.row_lengths() == 0, tf.int64)
        filler = tf.RaggedTensor.from_row_lengths(
            tf.fill([tf.reduce_sum(empty)], tf.constant(empty_word_id, tf.int32)), empty)
        ids = tf.concat([ids, filler], axis=1)
    # Characters per piece; a word is aligned when its pieces spell as many characters as it has
    # (one unknown piece takes whatever the others leave), as in data/tasks/squad.py. Flat values:
    # one entry per piece, `word` its index among all words of the batch.
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
    # [words, (pieces)] → [batch, (pieces)].
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


def pack(segments, sequence_length, cls_id, sep_id, pad_id=0):
    """`[CLS] segment_0 [SEP] (segment_1 [SEP])` as int32 `input_ids`, `attention_mask`, `token_type_ids`
    `[batch, sequence_length]`; the segments are ragged `[batch, (n)]` int32, already cut to fit."""
    batch, token_indices, sep_positions, length = _layout(segments)
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


def encode(tokenizer, sequence_length, texts, pairs=None):
    """`tokenizer.encode(texts, pairs, sequence_length)`, packed with core ops: the same ids."""
    segments = [tokenizer.tokenize(texts)]
    if pairs is None:
        keep = [fit_single(segments[0].row_lengths(), sequence_length - 2)]
    else:
        segments.append(tokenizer.tokenize(pairs))
        keep = fit_pair(segments[0].row_lengths(), segments[1].row_lengths(), sequence_length - 3)
    segments = [keep_first(segment, n) for segment, n in zip(segments, keep)]
    return pack(segments, sequence_length, tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id)


def tagging_features(tokenizer, sequence_length, texts):
    """The tagging data's inputs for whitespace-separated words: `(inputs, words, first_piece)`.

    Every word keeps a piece (`[UNK]` if it has none) and a sentence keeps the
    words whose pieces all fit, as in `data/tasks/tagging.py`; `first_piece` is
    ragged `[batch, (words)]`, each word's first-piece position (-1 if cut).
    """
    words = split_words(texts, PYTHON_WHITESPACE)
    pieces = word_pieces(tokenizer, words, empty_word_id=tokenizer.token_to_id(tokenizer.oov_token))
    counts = pieces.counts
    ends = row_cumsum(counts).flat_values
    kept = ends <= sequence_length - 2
    first_piece = counts.with_flat_values(tf.where(kept, ends - counts.flat_values + 1, -1))  # after [CLS]
    kept_pieces = tf.math.unsorted_segment_sum(tf.where(kept, counts.flat_values, 0), counts.value_rowids(),
                                               counts.nrows())
    inputs = pack([keep_first(pieces.ids, kept_pieces)], sequence_length, tokenizer.cls_token_id,
                  tokenizer.sep_token_id, tokenizer.pad_token_id)
    return inputs, words, first_piece


def squad_window(tokenizer, sequence_length, max_query_length, questions, contexts):
    """The first window of `squad_features`: `(inputs, char_start, char_end)`.

    The question is cut to `max_query_length` tokens, the context's whitespace
    words are tokenized one by one and cut to what is left; `char_start`,
    `char_end` `[batch, sequence_length]` are each context token's characters
    in the context, -1 on other tokens.
    """
    query = tokenizer.tokenize(questions)
    query = keep_first(query, fit_single(query.row_lengths(), max_query_length))
    pieces = word_pieces(tokenizer, split_words(contexts, PYTHON_WHITESPACE))
    keep = fit_single(pieces.ids.row_lengths(), sequence_length - 3 - tf.cast(query.row_lengths(), tf.int32))
    context = keep_first(pieces.ids, keep)
    inputs = pack([query, context], sequence_length, tokenizer.cls_token_id, tokenizer.sep_token_id,
                  tokenizer.pad_token_id)
    no_offsets = tf.cast(query, tf.int32) * 0 - 1
    char_start = pack_side([no_offsets, keep_first(pieces.start, keep)], sequence_length)
    char_end = pack_side([no_offsets, keep_first(pieces.end, keep)], sequence_length)
    return inputs, char_start, char_end
