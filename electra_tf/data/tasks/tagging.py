"""Token tagging data: CoNLL-2003 NER and CoNLL-2000 chunking files, tag schemes, in-graph encoding.

As in the original ELECTRA, span tags are trained in BIOES (whatever the file
holds: IOB1 or IOB2), each word is labelled at its first sub-token only, and
predictions are read back at those positions, one tag per word.

Example:
>>> tags = ("I-PER", "I-PER", "O", "I-LOC", "B-LOC")  # IOB1, as CoNLL-2003 ships it
>>> to_bioes(tags)
['B-PER', 'E-PER', 'O', 'S-LOC', 'S-LOC']
>>> sorted(tag_spans(tags)) == sorted(tag_spans(to_bioes(tags))) == sorted(tag_spans(to_iob2(tags)))
True
"""

import dataclasses

import numpy as np
import tensorflow as tf
from absl import logging

SCHEMES = ("bioes", "iob2", "none")
_SPAN_PREFIXES = {"bioes": ("B", "I", "E", "S"), "iob2": ("B", "I")}


@dataclasses.dataclass(frozen=True)
class TaggedSentence:
    """A sentence's words and one tag per word."""

    words: tuple[str, ...]
    tags: tuple[str, ...]

    def __post_init__(self):
        if len(self.words) != len(self.tags):
            raise ValueError(f"{len(self.words)} words but {len(self.tags)} tags")


def read_conll(path, tag_column=-1):
    """Sentences of a CoNLL file (any path `tf.io.gfile` opens).

    One token a line in whitespace-separated columns, the word first; blank
    lines end sentences; `-DOCSTART-` lines are skipped. `tag_column` picks the
    tag: -1 is NER in CoNLL-2003 (word POS chunk NER) and the chunk tag in
    CoNLL-2000 (word POS chunk). Every token line must have as many columns as
    the first; a ValueError gives the file and line otherwise, and when the
    file is not UTF-8 or holds no sentence.
    """
    sentences, words, tags = [], [], []
    num_columns = first_line = None
    with tf.io.gfile.GFile(path, "rb") as f:
        for line_number, raw_line in enumerate(f, 1):
            try:
                columns = raw_line.decode("utf-8-sig").split()
            except UnicodeDecodeError as e:
                raise ValueError(f"{path}:{line_number}: not UTF-8 ({e.reason} at byte {e.start})") from None
            if not columns or columns[0] == "-DOCSTART-":
                if words:
                    sentences.append(TaggedSentence(tuple(words), tuple(tags)))
                    words, tags = [], []
                continue
            if num_columns is None:
                num_columns, first_line = len(columns), line_number
                if num_columns < 2 or not -num_columns <= tag_column < num_columns:
                    raise ValueError(f"{path}:{line_number}: too few columns ({num_columns}) for a word and "
                                     f"tag column {tag_column}")
            elif len(columns) != num_columns:
                raise ValueError(f"{path}:{line_number}: {len(columns)} column(s), but line {first_line} has "
                                 f"{num_columns}")
            words.append(columns[0])
            tags.append(columns[tag_column])
    if words:
        sentences.append(TaggedSentence(tuple(words), tuple(tags)))
    if not sentences:
        raise ValueError(f"{path}: no sentences (an empty file?)")
    return sentences


def _split_tag(tag):
    """("B"|"I"|"E"|"S", type) of a span tag; ("O", None) for "O"."""
    if tag == "O":
        return "O", None
    prefix, dash, entity_type = tag.partition("-")
    if not dash or prefix not in ("B", "I", "E", "S") or not entity_type:
        raise ValueError(f"tag {tag!r} is neither 'O' nor B-, I-, E- or S- followed by a type")
    return prefix, entity_type


def tag_spans(tags):
    """The set of `(type, start, end)` chunks (`end` exclusive) of IOB1, IOB2 or BIOES tags.

    A chunk starts at B- or S-, or at I-/E- not continuing a chunk of its
    type; it ends at E- or S-, before O, or before a tag that does not
    continue it.

    >>> sorted(tag_spans(["B-PER", "I-PER", "O", "I-LOC", "I-ORG"]))
    [('LOC', 3, 4), ('ORG', 4, 5), ('PER', 0, 2)]
    """
    spans = set()
    open_type = start = None
    for position, tag in enumerate(tags):
        prefix, entity_type = _split_tag(tag)
        continues = prefix in ("I", "E") and entity_type == open_type
        if open_type is not None and not continues:
            spans.add((open_type, start, position))
            open_type = None
        if prefix != "O" and not continues:
            open_type, start = entity_type, position
        if prefix in ("E", "S"):
            spans.add((open_type, start, position + 1))
            open_type = None
    if open_type is not None:
        spans.add((open_type, start, len(tags)))
    return spans


def _spans_to_tags(spans, length, scheme):
    tags = ["O"] * length
    for entity_type, start, end in spans:
        tags[start:end] = [f"I-{entity_type}"] * (end - start)
        tags[start] = f"B-{entity_type}"
        if scheme == "bioes":
            tags[end - 1] = f"E-{entity_type}"
            if end - start == 1:
                tags[start] = f"S-{entity_type}"
    return tags


def to_bioes(tags):
    """BIOES tags of IOB1, IOB2 (or BIOES) tags.

    >>> to_bioes(["B-NP", "I-NP", "B-NP", "O", "B-VP"])
    ['B-NP', 'E-NP', 'S-NP', 'O', 'S-VP']
    """
    return _spans_to_tags(tag_spans(tags), len(tags), "bioes")


def to_iob2(tags):
    """IOB2 tags of IOB1, IOB2 or BIOES tags (so also BIOES back to IOB2).

    >>> to_iob2(["B-PER", "E-PER", "S-PER", "O"])
    ['B-PER', 'I-PER', 'B-PER', 'O']
    """
    return _spans_to_tags(tag_spans(tags), len(tags), "iob2")


def convert_tags(tags, scheme):
    """`tags` in `scheme`: "bioes", "iob2", or "none" (unchanged, e.g. part-of-speech tags)."""
    if scheme not in SCHEMES:
        raise ValueError(f"unknown tag scheme {scheme!r}; choose from {SCHEMES}")
    return list(tags) if scheme == "none" else _spans_to_tags(tag_spans(tags), len(tags), scheme)


def label_names(sentences, scheme="bioes"):
    """The sorted label list, "O" first: the model's class ids.

    For span schemes every prefix of every chunk type seen is a label, so a
    known type in an unseen shape (a 3-word LOC when training had only shorter
    ones) is never unknown later.

    >>> label_names([TaggedSentence(("Ann", "met", "Bob"), ("I-PER", "O", "I-PER"))], scheme="iob2")
    ['O', 'B-PER', 'I-PER']
    """
    tags = {tag for sentence in sentences for tag in convert_tags(sentence.tags, scheme)}
    if scheme != "none":
        types = {_split_tag(tag)[1] for tag in tags - {"O"}}
        tags = {f"{prefix}-{entity_type}" for entity_type in types for prefix in _SPAN_PREFIXES[scheme]}
    return ["O"] + sorted(tags - {"O"})


def _word_pieces(tokenizer, words):
    """Ragged int32 `[words, (pieces)]`; a word without pieces (e.g. a control character) gets [UNK]."""
    pieces = tf.cast(tokenizer(words), tf.int32)
    empty = pieces.row_lengths() == 0
    unknown = tf.RaggedTensor.from_row_lengths(
        tf.fill([tf.reduce_sum(tf.cast(empty, tf.int32))], tf.constant(tokenizer.token_to_id("[UNK]"), tf.int32)),
        tf.cast(empty, tf.int64))
    return tf.concat([pieces, unknown], axis=1)


def _positions_of_first_pieces(pieces, sequence_length):
    """Each word's first-piece position after [CLS]; -1 for words whose pieces do not all fit before [SEP]."""
    counts = pieces.row_lengths()
    ends = tf.cumsum(counts)
    return tf.cast(tf.where(ends <= sequence_length - 2, ends - counts + 1, -1), tf.int32)


def _sentence_dataset(sentences, *per_word_arrays):
    """A dataset of per-sentence words (and the given per-word arrays), as ragged rows."""
    lengths = [len(sentence.words) for sentence in sentences]
    words = tf.constant([word for sentence in sentences for word in sentence.words], tf.string)
    columns = [words] + [np.concatenate(arrays) for arrays in per_word_arrays]
    return tf.data.Dataset.from_tensor_slices(
        tuple(tf.RaggedTensor.from_row_lengths(column, lengths) for column in columns))


def first_token_positions(sentences, tokenizer, sequence_length=128):
    """Per sentence, an int32 array: each word's first sub-token position in the model input, -1 if truncated.

    The same in-graph tokenization and truncation as `tagging_dataset`;
    `decode_tags` reads predictions at these positions.
    """
    positions = _sentence_dataset(sentences).map(
        lambda words: _positions_of_first_pieces(_word_pieces(tokenizer, words), sequence_length),
        num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    return [row for batch in positions.ragged_batch(1024) for row in batch.numpy()]


def _label_ids(sentences, label_names, scheme):
    label_index = {name: i for i, name in enumerate(label_names)}
    tags = [convert_tags(sentence.tags, scheme) for sentence in sentences]
    unknown = {tag for sentence_tags in tags for tag in sentence_tags} - label_index.keys()
    if unknown:
        raise ValueError(f"tag(s) {sorted(unknown)} (scheme {scheme!r}) are not among the {len(label_names)} "
                         f"label names {label_names}: were they made from other data or another scheme?")
    return [np.array([label_index[tag] for tag in sentence_tags], np.int32) for sentence_tags in tags]


def _sentence_encoder(tokenizer, sequence_length):
    """Maps one sentence's (words, label ids) to `(inputs, labels, sample_weight)`, each `[sequence_length]`."""
    cls_id, sep_id, pad_id = tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id

    def pad(values, value=0):
        return tf.ensure_shape(tf.pad(values, [[0, sequence_length - tf.size(values)]], constant_values=value),
                               [sequence_length])

    def encode(words, word_label_ids):
        pieces = _word_pieces(tokenizer, words)
        positions = _positions_of_first_pieces(pieces, sequence_length)
        kept_words = tf.reduce_sum(tf.cast(positions >= 0, tf.int32))
        input_ids = tf.concat([[cls_id], pieces[:kept_words].flat_values, [sep_id]], axis=0)
        inputs = {"input_ids": pad(input_ids, pad_id),
                  "attention_mask": pad(tf.ones_like(input_ids)),
                  "token_type_ids": tf.zeros([sequence_length], tf.int32)}
        labelled = positions[:kept_words, None]
        labels = tf.scatter_nd(labelled, word_label_ids[:kept_words], [sequence_length])
        sample_weight = tf.scatter_nd(labelled, tf.ones([kept_words], tf.float32), [sequence_length])
        return inputs, labels, sample_weight

    return encode


def tagging_dataset(sentences, tokenizer, label_names, sequence_length=128, batch_size=32, shuffle=False, seed=0,
                    scheme="bioes", drop_remainder=False):
    """`(inputs, labels, sample_weight)` batches, tokenized in-graph, and statistics.

    Inputs are int32 `[batch, sequence_length]` `input_ids` (`[CLS] pieces
    [SEP]`, then padding), `attention_mask` and `token_type_ids`; labels hold
    each word's label id (tags converted to `scheme`) at its first sub-token
    and 0 elsewhere; sample_weight is 1.0 at those positions, 0.0 elsewhere.
    A sentence longer than the model keeps the words whose pieces all fit.

    Returns:
        `(dataset, stats)`: stats has "sentences", "words",
        "truncated_words", "truncated_sentences" and "first_token_positions"
        (see `first_token_positions`, in sentence order: the dataset's order
        when not shuffled) for `decode_tags`.

    >>> from electra_tf.tokenization import ElectraTokenizer
    >>> tokenizer = ElectraTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "ann", "met", "bo", "##b"])
    >>> sentences = [TaggedSentence(("Ann", "met", "Bob"), ("I-PER", "O", "I-PER"))]
    >>> names = label_names(sentences)
    >>> dataset, stats = tagging_dataset(sentences, tokenizer, names, sequence_length=8)
    >>> inputs, labels, sample_weight = next(iter(dataset))
    >>> inputs["input_ids"].numpy().tolist(), labels.numpy().tolist()
    ([[2, 5, 6, 7, 8, 3, 0, 0]], [[0, 4, 0, 4, 0, 0, 0, 0]])
    >>> decode_tags(labels, stats["first_token_positions"], names)
    [['S-PER', 'O', 'S-PER']]
    """
    if not sentences:
        raise ValueError("no sentences")
    if sequence_length < 3:
        raise ValueError(f"sequence_length {sequence_length} leaves no room for a word between [CLS] and [SEP]")
    word_label_ids = _label_ids(sentences, label_names, scheme)
    positions = first_token_positions(sentences, tokenizer, sequence_length)
    truncated = [int(np.sum(row < 0)) for row in positions]
    stats = {"sentences": len(sentences), "words": sum(len(row) for row in positions),
             "truncated_words": sum(truncated), "truncated_sentences": sum(n > 0 for n in truncated),
             "first_token_positions": positions}
    if stats["truncated_words"]:
        logging.warning("%d of %d sentences are longer than %d tokens: %d words are cut and tagged O",
                        stats["truncated_sentences"], len(sentences), sequence_length, stats["truncated_words"])
    dataset = _sentence_dataset(sentences, word_label_ids)
    if shuffle:
        dataset = dataset.shuffle(min(len(sentences), 10_000), seed=seed, reshuffle_each_iteration=True)
    dataset = dataset.map(_sentence_encoder(tokenizer, sequence_length), num_parallel_calls=tf.data.AUTOTUNE,
                          deterministic=True)
    return dataset.batch(batch_size, drop_remainder=drop_remainder).prefetch(tf.data.AUTOTUNE), stats


def decode_tags(predictions, first_token_positions, label_names):
    """Tags per sentence, one per word, from logits `[n, L, labels]` or label ids `[n, L]` in sentence order.

    Predictions are read at each word's first sub-token (`first_token_positions`,
    e.g. `stats["first_token_positions"]` of `tagging_dataset`); words cut by
    truncation get "O", so every sentence keeps its length.

    >>> decode_tags([[0, 2, 1, 0]], [np.array([1, 2, -1])], ["O", "B-PER", "E-PER"])
    [['E-PER', 'B-PER', 'O']]
    """
    predictions = np.asarray(predictions)
    if predictions.ndim == 3:
        if predictions.shape[-1] != len(label_names):
            raise ValueError(f"logits have {predictions.shape[-1]} classes but there are "
                             f"{len(label_names)} labels")
        predictions = predictions.argmax(-1)
    if predictions.ndim != 2 or len(predictions) != len(first_token_positions):
        raise ValueError(f"predictions of shape {predictions.shape} do not match "
                         f"{len(first_token_positions)} sentences")
    return [[label_names[row[position]] if position >= 0 else "O" for position in positions]
            for row, positions in zip(predictions, first_token_positions)]
