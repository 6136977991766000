"""Token tagging data: CoNLL-2003 NER and CoNLL-2000 chunking files, tag schemes, in-graph encoding. As the
original ELECTRA, span tags train in BIOES whatever the file holds, each word labelled at its first sub-token.

Example:
>>> tags = ("I-PER", "I-PER", "O", "I-LOC", "B-LOC")  # IOB1, as CoNLL-2003 ships it
>>> convert_tags(tags, "bioes")
['B-PER', 'E-PER', 'O', 'S-LOC', 'S-LOC']
>>> sorted(tag_spans(tags)) == sorted(tag_spans(convert_tags(tags, "bioes"))) == sorted(
...     tag_spans(convert_tags(tags, "iob2")))
True
"""

import dataclasses

import numpy as np
import tensorflow as tf
from absl import logging

from electra_tf.text import featurize
from electra_tf.data import batching
from electra_tf.data.tasks.tables import is_table, read_table, require_columns

WORDS_COLUMN = "tokens"  # the words of a 🤗 token-classification dataset (conll2003, wnut_17, wikiann, ...)
SCHEMES = ("bioes", "iob2", "none")  # what a model is trained on
FILE_SCHEMES = ("iob1", "iob2", "bioes", "bilou", "none")  # what files hold (and predictions are written in)
_SPAN_PREFIXES = {"bioes": ("B", "I", "E", "S"), "iob2": ("B", "I")}
_BILOU = {"L": "E", "U": "S"}  # BILOU's last and unit are BIOES's end and single


@dataclasses.dataclass(frozen=True)
class TaggedSentence:
    """A sentence's words and one tag per word."""

    words: tuple[str, ...]
    tags: tuple[str, ...]

    def __post_init__(self):
        if len(self.words) != len(self.tags):
            raise ValueError(f"{len(self.words)} words but {len(self.tags)} tags")


def read_conll(path, tag_column=-1):
    """Sentences of a CoNLL file (a word a line, its tag in column `tag_column`; blank lines end sentences); bad
    input is a ValueError naming the file and line."""
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


def read_sentences(path, tag_column=-1, dataset_tags="ner_tags"):
    """Sentences of a CoNLL file (`read_conll`) or of a Parquet file or 🤗 dataset (each row's `tokens` and tags, in
    the column `tag_column` names, `dataset_tags` for -1).

    >>> import os, tempfile
    >>> import pyarrow as pa, pyarrow.parquet as pq
    >>> path = os.path.join(tempfile.mkdtemp(), "ner.parquet")
    >>> pq.write_table(pa.table({"tokens": [["Ann", "met", "Bob"]], "ner_tags": [["B-PER", "O", "B-PER"]]}), path)
    >>> read_sentences(path)
    [TaggedSentence(words=('Ann', 'met', 'Bob'), tags=('B-PER', 'O', 'B-PER'))]
    """
    if not is_table(path):
        if isinstance(tag_column, str):
            raise ValueError(f"{path}: --tag_column={tag_column} names a dataset's column; a CoNLL file's columns "
                             "are numbered (-1: the last)")
        return read_conll(path, tag_column)
    if not isinstance(tag_column, str) and tag_column != -1:
        raise ValueError(f"{path}: --tag_column={tag_column} numbers a CoNLL file's column; a dataset's is named "
                         f"(--tag_column={dataset_tags})")
    tags_column = dataset_tags if tag_column == -1 else tag_column
    rows = read_table(path)
    require_columns(rows, [WORDS_COLUMN], path)
    require_columns(rows, [tags_column], path, "tag_column")
    sentences = []
    for row, line in zip(rows, rows.line_numbers):
        words, tags = row[WORDS_COLUMN], row[tags_column]
        if not isinstance(words, list) or not all(isinstance(word, str) and word.split() == [word] for word in words):
            raise ValueError(f"{path}:{line}: {WORDS_COLUMN!r} is {words!r:.80}, not a list of words (each a "
                             "string without spaces)")
        if not isinstance(tags, list) or len(tags) != len(words) or not all(isinstance(tag, str) for tag in tags):
            hint = "a class id of -1 (no label) is no tag" if tags_column in rows.class_names else \
                "class ids need a ClassLabel feature naming them"
            raise ValueError(f"{path}:{line}: {tags_column!r} is {tags!r:.80}, not one tag name per word "
                             f"({len(words)} words; {hint})")
        if words and words[0] != "-DOCSTART-":
            sentences.append(TaggedSentence(tuple(words), tuple(tags)))
    if not sentences:
        raise ValueError(f"{path}: no sentences")
    return sentences


def word_unit(sentences):
    """The unit the words of `sentences` are (see `featurize.WORD_UNITS`): "char" when every word is one character,
    "cjk_char" when every word holding a CJK character is that one character, else "whitespace".

    >>> word_unit([TaggedSentence(("4", "8", "岁", "X"), ("O",) * 4)])
    'char'
    >>> word_unit([TaggedSentence(("iPhone", "在", "北", "京"), ("O",) * 4)])
    'cjk_char'
    >>> word_unit([TaggedSentence(("iPhone", "在北京"), ("O", "O"))]), word_unit([TaggedSentence(("EU",), ("O",))])
    ('whitespace', 'whitespace')
    """
    words = sorted({word for sentence in sentences for word in sentence.words})
    if all(len(word) == 1 for word in words):
        return "char"
    cjk = tf.strings.regex_full_match(words, f".*(?:{featurize.CJK_WORDS}).*").numpy()
    if cjk.any() and all(len(word) == 1 for word, is_cjk in zip(words, cjk) if is_cjk):
        return "cjk_char"
    return "whitespace"


def is_span_tag(tag):
    """Whether `tag` is "O" or a span tag: B-, I-, E-, S- (or BILOU's L-, U-) and a type.

    >>> is_span_tag("E-PER"), is_span_tag("U-LOC"), is_span_tag("NN")
    (True, True, False)
    """
    prefix, dash, entity_type = tag.partition("-")
    return tag == "O" or bool(dash and entity_type) and prefix in ("B", "I", "E", "S", *_BILOU)


def _split_tag(tag):
    """("B"|"I"|"E"|"S", type) of a span tag (BILOU's L and U read as E and S); ("O", None) for "O"."""
    if not is_span_tag(tag):
        raise ValueError(f"tag {tag!r} is neither 'O' nor B-, I-, E-, S-, L- or U- followed by a type")
    if tag == "O":
        return "O", None
    prefix, _, entity_type = tag.partition("-")
    return _BILOU.get(prefix, prefix), entity_type


def detect_scheme(tag_sequences):
    """The scheme sentences of tags are written in: "bilou" (L-/U- seen), "bioes" (E-/S-), "iob1" (a chunk
    begun by I-), "iob2" (chunks begun by B-), "none" (a tag that is no span tag, e.g. POS); `None` when
    nothing tells (only "O").

    >>> detect_scheme([["I-PER", "I-PER", "O"]]), detect_scheme([["B-PER", "I-PER"]]), detect_scheme([["S-LOC"]])
    ('iob1', 'iob2', 'bioes')
    """
    prefixes, chunk_starts = set(), set()
    for tags in tag_sequences:
        previous = None  # the type of the tag before
        for tag in tags:
            if not is_span_tag(tag):
                return "none"
            prefix, _, entity_type = tag.partition("-")
            prefixes.add(prefix)
            if prefix in ("B", "I") and entity_type != previous:
                chunk_starts.add(prefix)
            previous = entity_type or None
    if prefixes & set(_BILOU):
        return "bilou"
    if prefixes & {"E", "S"}:
        return "bioes"
    return "iob1" if "I" in chunk_starts else "iob2" if "B" in chunk_starts else None


def tag_spans(tags):
    """The set of `(type, start, end)` chunks (`end` exclusive) of IOB1, IOB2, BIOES or BILOU tags.

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
    ends = {(entity_type, end) for entity_type, _, end in spans}
    for entity_type, start, end in spans:
        tags[start:end] = [f"I-{entity_type}"] * (end - start)
        if scheme != "iob1" or (entity_type, start) in ends:  # IOB1: B- only right after a chunk of its type
            tags[start] = f"B-{entity_type}"
        if scheme in ("bioes", "bilou"):
            last, unit = ("E", "S") if scheme == "bioes" else ("L", "U")
            tags[end - 1] = f"{last}-{entity_type}"
            if end - start == 1:
                tags[start] = f"{unit}-{entity_type}"
    return tags


def convert_tags(tags, scheme):
    """`tags` in `scheme`: "iob1", "iob2", "bioes", "bilou", or "none" (unchanged, e.g. part-of-speech tags).

    >>> convert_tags(["B-PER", "E-PER", "S-PER", "O", "S-LOC"], "iob1")
    ['I-PER', 'I-PER', 'B-PER', 'O', 'I-LOC']
    """
    if scheme not in FILE_SCHEMES:
        raise ValueError(f"unknown tag scheme {scheme!r}; choose from {FILE_SCHEMES}")
    return list(tags) if scheme == "none" else _spans_to_tags(tag_spans(tags), len(tags), scheme)


def label_names(sentences, scheme="bioes"):
    """The sorted label list, "O" first; for span schemes every prefix of every type seen, so that a known type in
    an unseen shape is never unknown later.

    >>> label_names([TaggedSentence(("Ann", "met", "Bob"), ("I-PER", "O", "I-PER"))], scheme="iob2")
    ['O', 'B-PER', 'I-PER']
    """
    if scheme not in SCHEMES:
        raise ValueError(f"a tagger trains on tags in one of {SCHEMES}, not {scheme!r}")
    tags = {tag for sentence in sentences for tag in convert_tags(sentence.tags, scheme)}
    if scheme != "none":
        types = {_split_tag(tag)[1] for tag in tags - {"O"}}
        tags = {f"{prefix}-{entity_type}" for entity_type in types for prefix in _SPAN_PREFIXES[scheme]}
    return ["O"] + sorted(tags - {"O"})


def _texts(sentences):
    """The sentences as text: words joined by a space, which `featurize.tagging_features` splits again."""
    return np.asarray([" ".join(sentence.words) for sentence in sentences], object)


def first_token_positions(sentences, tokenizer, sequence_length=128):
    """Per sentence, an int32 array: each word's first sub-token position in the model input, -1 if truncated."""
    return first_token_positions_and_lengths(sentences, tokenizer, sequence_length)[0]


def first_token_positions_and_lengths(sentences, tokenizer, sequence_length):
    """`first_token_positions`, and each sentence's packed length (`[CLS] pieces [SEP]`)."""
    features, texts = _features(tokenizer, sequence_length, True), _texts(sentences)
    positions, lengths = [], []
    for start in range(0, len(texts), 1024):
        inputs, first_piece = features(tf.constant(texts[start:start + 1024]))
        positions += [np.asarray(row, np.int32) for row in first_piece.to_list()]
        lengths.append(tf.reduce_sum(inputs["attention_mask"], axis=1).numpy())
    return positions, np.concatenate(lengths)


def _features(tokenizer, sequence_length, pad_to_max_length):
    """`featurize.tagging_features`' inputs and first pieces as a graph function traced once per tokenizer, length and
    padding (a run's statistics, training and dev sets each took seconds to trace and optimize again)."""
    return tokenizer.traced(("tagging_features", sequence_length, pad_to_max_length), lambda: tf.function(
        lambda texts: featurize.tagging_features(tokenizer, sequence_length, texts, pad_to_max_length)[::2],
        input_signature=[tf.TensorSpec([None], tf.string)], autograph=False))


def _label_ids(sentences, label_names, scheme):
    label_index = {name: i for i, name in enumerate(label_names)}
    tags = [convert_tags(sentence.tags, scheme) for sentence in sentences]
    unknown = {tag for sentence_tags in tags for tag in sentence_tags} - label_index.keys()
    if unknown:
        raise ValueError(f"tag(s) {sorted(unknown)} (scheme {scheme!r}) are not among the {len(label_names)} "
                         f"label names {label_names}: were they made from other data or another scheme?")
    return [np.array([label_index[tag] for tag in sentence_tags], np.int32) for sentence_tags in tags]


def _batch_encoder(tokenizer, sequence_length, pad_to_max_length):
    """Maps a batch of (texts, ragged word label ids) to `(inputs, labels, sample_weight)`, each
    `[batch, length]`: each word's label at its first sub-token, weight 1 there."""

    def encode(texts, word_label_ids):
        inputs, first_piece = _features(tokenizer, sequence_length, pad_to_max_length)(texts)
        kept = first_piece.flat_values >= 0
        rows = tf.cast(first_piece.value_rowids(), tf.int32)
        indices = tf.stack([tf.boolean_mask(rows, kept), tf.boolean_mask(first_piece.flat_values, kept)], axis=1)
        shape = tf.shape(inputs["input_ids"])
        labels = tf.scatter_nd(indices, tf.boolean_mask(word_label_ids.flat_values, kept), shape)
        sample_weight = tf.scatter_nd(indices, tf.ones(tf.shape(indices)[:1], tf.float32), shape)
        return inputs, labels, sample_weight

    return encode


def word_stats(first_token_positions):
    """"sentences", "words", and the "truncated_words" and "truncated_sentences" of the sentences whose
    `first_token_positions` are given (-1: a word cut by truncation).

    >>> word_stats([np.array([1, 2, -1]), np.array([1])])
    {'sentences': 2, 'words': 4, 'truncated_words': 1, 'truncated_sentences': 1}
    """
    truncated = [int(np.sum(row < 0)) for row in first_token_positions]
    return {"sentences": len(first_token_positions), "words": sum(len(row) for row in first_token_positions),
            "truncated_words": sum(truncated), "truncated_sentences": sum(n > 0 for n in truncated)}


def tagging_dataset(sentences, tokenizer, label_names, sequence_length=128, batch_size=32, shuffle=False, seed=0,
                    scheme="bioes", pad_to_max_length=True):
    """`(dataset, stats)`: `(inputs, labels, sample_weight)` batches (`batching.batch_examples`), tokenized in-graph,
    each word's label at its first sub-token (weight 1, else 0); stats hold `word_stats`, the
    "first_token_positions" `decode_tags` reads, and the packed "lengths".

    >>> from electra_tf.text.tokenizer import WordPieceTokenizer
    >>> tokenizer = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "ann", "met", "bo", "##b"])
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
    positions, lengths = first_token_positions_and_lengths(sentences, tokenizer, sequence_length)
    stats = {**word_stats(positions), "first_token_positions": positions, "lengths": lengths}
    if stats["truncated_words"]:
        logging.warning("%d of %d sentences are longer than %d tokens: %d words are cut and tagged O",
                        stats["truncated_sentences"], len(sentences), sequence_length, stats["truncated_words"])
    labels = tf.RaggedTensor.from_row_lengths(np.concatenate(word_label_ids),
                                              [len(sentence.words) for sentence in sentences])
    dataset = tf.data.Dataset.from_tensor_slices((_texts(sentences), labels))
    keys = None if pad_to_max_length else batching.bucket_keys(lengths)
    dataset = batching.batch_examples(dataset, batch_size, shuffle, seed, keys)
    dataset = dataset.map(_batch_encoder(tokenizer, sequence_length, pad_to_max_length),
                          num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    return dataset.prefetch(tf.data.AUTOTUNE), stats


def decode_tags(predictions, first_token_positions, label_names):
    """Tags per sentence, one per word, from logits `[n, L, labels]` or label ids `[n, L]`, read at each word's first
    sub-token (words cut by truncation get "O").

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
