"""What a transformers-style tokenizer call returns (`BatchEncoding`, one `Encoding` per row), and how its rows are
packed from each text's word pieces by `BertTokenizerFast`'s rules (special tokens, truncation strategies, `stride`
windows, padding on either side, `pad`), whoever made the pieces.

Example:
>>> first = Pieces([5, 6, 7], list("abc"), [(0, 1), (2, 3), (4, 5)], [0, 1, 2])  # ids, tokens, offsets, words
>>> second = Pieces([8], ["d"], [(0, 1)], [0])
>>> batch = encode_batch([(first, second)], SpecialTokens(cls=(2, "[CLS]"), sep=(3, "[SEP]"), pad=(0, "[PAD]")),
...                      truncation=True, max_length=5)
>>> batch.input_ids, batch["token_type_ids"], batch.sequence_ids(0)
([[2, 5, 3, 8, 3]], [[0, 0, 0, 1, 1]], [None, 0, None, 1, None])
"""

import collections

import numpy as np
import tensorflow as tf

from electra_tf.util.library_internals import register_keras_tree_node

PADDING = {False: "do_not_pad", True: "longest", "do_not_pad": "do_not_pad", "longest": "longest",
           "max_length": "max_length"}
TRUNCATION = {None: "do_not_truncate", False: "do_not_truncate", True: "longest_first",
              "do_not_truncate": "do_not_truncate", "longest_first": "longest_first", "only_first": "only_first",
              "only_second": "only_second"}
PADDING_SIDES = ("right", "left")
MODEL_INPUT_NAMES = ("input_ids", "token_type_ids", "attention_mask")
# The keys of a call's answer, in transformers' order, and what padding puts in each.
PADDED_WITH = {"token_type_ids": 0, "attention_mask": 0, "special_tokens_mask": 1, "offset_mapping": (0, 0)}
CharSpan = collections.namedtuple("CharSpan", "start end")
TokenSpan = collections.namedtuple("TokenSpan", "start end")
SpecialTokens = collections.namedtuple("SpecialTokens", "cls sep pad")  # each `(id, token)`


class Pieces(collections.namedtuple("Pieces", "ids tokens offsets words")):
    """One text's word pieces: ids, token strings, `(start, end)` character offsets, word indices."""

    def window(self, start, stop):
        return Pieces(*(values[start:stop] for values in self))


class Encoding:
    """One row of a call's answer and what it is made of, as `tokenizers.Encoding` holds it: `ids`,
    `type_ids`, `tokens`, `offsets`, `word_ids`, `sequence_ids`, `attention_mask`, `special_tokens_mask`.

    >>> row = Encoding.pack(Pieces([5, 6], ["the", "fox"], [(0, 3), (4, 7)], [0, 1]), None,
    ...                     SpecialTokens((2, "[CLS]"), (3, "[SEP]"), (0, "[PAD]")))
    >>> row.tokens, row.word_ids, row.char_to_token(5), row.word_to_chars(1)
    (['[CLS]', 'the', 'fox', '[SEP]'], [None, 0, 1, None], 2, CharSpan(start=4, end=7))
    """

    def __init__(self, ids, type_ids, tokens, offsets, word_ids, sequence_ids, special_tokens_mask, n_sequences):
        self.ids, self.type_ids, self.tokens, self.offsets = ids, type_ids, tokens, offsets
        self.word_ids, self.sequence_ids, self.special_tokens_mask = word_ids, sequence_ids, special_tokens_mask
        self.attention_mask = [1] * len(ids)
        self.n_sequences = n_sequences

    @classmethod
    def pack(cls, first, second, special, add_special_tokens=True):
        """`[CLS] first [SEP] (second [SEP])` (or the pieces alone without special tokens)."""
        parts = [(first, 0)] + ([] if second is None else [(second, 1)])
        row = collections.defaultdict(list)
        for index, (pieces, sequence) in enumerate(parts):
            before = [special.cls] if add_special_tokens and index == 0 else []
            after = [special.sep] if add_special_tokens else []
            for marks, where in ((before, "before"), (list(zip(*pieces[:2])), "pieces"), (after, "after")):
                is_special = where != "pieces"
                row["ids"] += [token_id for token_id, _ in marks]
                row["tokens"] += [token for _, token in marks]
                row["type_ids"] += [sequence] * len(marks)
                row["offsets"] += [(0, 0)] * len(marks) if is_special else list(pieces.offsets)
                row["word_ids"] += [None] * len(marks) if is_special else list(pieces.words)
                row["sequence_ids"] += [None if is_special else sequence] * len(marks)
                row["special_tokens_mask"] += [int(is_special)] * len(marks)
        return cls(row["ids"], row["type_ids"], row["tokens"], row["offsets"], row["word_ids"],
                   row["sequence_ids"], row["special_tokens_mask"], len(parts))

    def pad(self, length, pad, side):
        """This row padded to `length` tokens on `side` with the `pad` `(id, token)`."""
        fill = lambda values, value: pad_row(values, length, value, side)  # noqa: E731
        padded = Encoding(fill(self.ids, pad[0]), fill(self.type_ids, 0), fill(self.tokens, pad[1]),
                          fill(self.offsets, (0, 0)), fill(self.word_ids, None), fill(self.sequence_ids, None),
                          fill(self.special_tokens_mask, 1), self.n_sequences)
        padded.attention_mask = fill(self.attention_mask, 0)
        return padded

    def _range(self, sequence):
        return [index for index, value in enumerate(self.sequence_ids) if value == sequence]

    def token_to_sequence(self, token):
        return self.sequence_ids[token]

    def token_to_word(self, token):
        return self.word_ids[token]

    def token_to_chars(self, token):
        return None if self.sequence_ids[token] is None else CharSpan(*self.offsets[token])

    def word_to_tokens(self, word, sequence=0):
        tokens = [index for index in self._range(sequence) if self.word_ids[index] == word]
        return TokenSpan(tokens[0], tokens[-1] + 1) if tokens else None

    def word_to_chars(self, word, sequence=0):
        tokens = self.word_to_tokens(word, sequence)
        return None if tokens is None else CharSpan(self.offsets[tokens.start][0], self.offsets[tokens.end - 1][1])

    def char_to_token(self, char, sequence=0):
        return next((index for index in self._range(sequence)
                     if self.offsets[index][0] <= char < self.offsets[index][1]), None)

    def char_to_word(self, char, sequence=0):
        token = self.char_to_token(char, sequence)
        return None if token is None else self.word_ids[token]


def _row_method(name, sequence=False):
    """`BatchEncoding.<name>` in transformers' calling conventions, `(batch_index, index)` or `(index,)` (and
    `sequence_index` where it takes one), answered by that row's `Encoding.<name>`."""
    def method(self, batch_or_index, index=None, sequence_index=0):
        row, at = (0, batch_or_index) if index is None else (batch_or_index, index)
        encoding = self._encoding(name, row)
        return getattr(encoding, name)(*((at, sequence_index) if sequence else (at,)))
    method.__name__ = name
    return method


class BatchEncoding(dict):
    """A dict of `input_ids`, `token_type_ids`, `attention_mask` (and what else the call asked) that also
    reads them as attributes, and knows each row's `Encoding` (`encodings`, `word_ids(i)`, `sequence_ids(i)`,
    `tokens(i)`, `token_to_chars`, `char_to_token`, `token_to_word`, `word_to_tokens`, `word_to_chars`,
    `char_to_word`, `token_to_sequence`), as transformers' `BatchEncoding` of a fast tokenizer does.

    >>> batch = BatchEncoding(input_ids=[[2, 5, 3]], attention_mask=[[1, 1, 1]])
    >>> batch.input_ids, list(batch.keys()), batch.to_dict() == batch.data == dict(batch), batch.is_fast
    ([[2, 5, 3]], ['input_ids', 'attention_mask'], True, False)
    """

    encodings, n_sequences = None, None  # set for the answer of a tokenizer call

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"no {name!r} in this BatchEncoding (it holds {', '.join(self)})") from None

    def __getitem__(self, key):
        """A value by name, a row's `Encoding` by index, or every value's rows by slice (as transformers)."""
        if isinstance(key, int) and not isinstance(key, bool):
            return self._encoding("__getitem__", key)
        if isinstance(key, slice):
            return {name: value[key] for name, value in self.items()}
        return super().__getitem__(key)

    @property
    def data(self):
        """A plain `dict` of the same values (transformers' `BatchEncoding.data`)."""
        return dict(self)

    def to_dict(self):
        """A plain `dict` of the same values."""
        return dict(self)

    @property
    def is_fast(self):
        return self.encodings is not None

    def _encoding(self, method, batch_index):
        if self.encodings is None:
            raise ValueError(f"{method}() is not available here: this BatchEncoding was not made by a tokenizer "
                             "call on text (tokenizer.pad and Keras give plain values)")
        return self.encodings[batch_index]

    def tokens(self, batch_index=0):
        return self._encoding("tokens", batch_index).tokens

    def word_ids(self, batch_index=0):
        return self._encoding("word_ids", batch_index).word_ids

    def sequence_ids(self, batch_index=0):
        return self._encoding("sequence_ids", batch_index).sequence_ids

    token_to_sequence, token_to_word, token_to_chars = (
        _row_method(name) for name in ("token_to_sequence", "token_to_word", "token_to_chars"))
    word_to_tokens, word_to_chars, char_to_token, char_to_word = (
        _row_method(name, sequence=True) for name in ("word_to_tokens", "word_to_chars", "char_to_token",
                                                      "char_to_word"))


# To Keras's nested-structure functions a dict subclass is one leaf, not a dict: registered, a BatchEncoding
# goes into `model(batch)`, `fit`, `predict` as a dict does (keys sorted, as a dict's are).
register_keras_tree_node(
    BatchEncoding, lambda batch: ([dict.__getitem__(batch, key) for key in sorted(batch)], sorted(batch),
                                  sorted(batch)),
    lambda keys, values: BatchEncoding(zip(keys, values)))


def strategies(padding, truncation, max_length, model_max_length, stride=0, pad_to_multiple_of=None,
               padding_side="right"):
    """transformers' `(padding, truncation, max_length)`: names for `padding`/`truncation` (True, False,
    strings), truncation "longest_first" when only `max_length` is given, and `max_length` defaulting to
    `model_max_length` when padding to it or truncating; the other arguments checked."""
    if max_length is not None and padding is False and truncation is None:
        truncation = True
    if not isinstance(padding, (bool, str)) or padding not in PADDING:
        raise ValueError(f"padding={padding!r}: not one of True, False, "
                         f"{', '.join(repr(name) for name in PADDING if isinstance(name, str))}")
    if not isinstance(truncation, (bool, str, type(None))) or truncation not in TRUNCATION:
        raise ValueError(f"truncation={truncation!r}: not one of True, False, "
                         f"{', '.join(repr(name) for name in TRUNCATION if isinstance(name, str))}")
    for name, value in (("max_length", max_length), ("stride", stride), ("pad_to_multiple_of", pad_to_multiple_of)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise ValueError(f"{name}={value!r}: not a count of tokens (an int >= 0)")
    check_padding_side(padding_side)
    padding, truncation = PADDING[padding], TRUNCATION[truncation]
    if max_length is None and (padding == "max_length" or truncation != "do_not_truncate"):
        max_length = model_max_length
    return padding, truncation, max_length


def check_padding_side(padding_side):
    if padding_side not in PADDING_SIDES:
        raise ValueError(f"Unknown `direction`: `{padding_side}`. Use one of `left` or `right`")


def kept_lengths(first, second, budget, strategy):
    """How many tokens of `first` and `second` (lengths; `second` `None` for one text) a budget keeps, as the
    `tokenizers` library cuts them ("longest_first": the shorter whole if the longer can take the cut, else each
    half, the odd token to the longer or `second`)."""
    total = first + (second or 0)
    if budget == 0 or total <= budget:
        return (0, None if second is None else 0) if budget == 0 else (first, second)
    if strategy == "longest_first":
        if second is None:
            return budget, None
        shorter, longer = sorted((first, second))
        longer = shorter if shorter > budget else max(shorter, budget - shorter)
        if shorter + longer > budget:
            shorter = budget // 2
            longer = shorter + budget % 2
        return (longer, shorter) if first > second else (shorter, longer)
    if strategy == "only_second" and second is None:
        raise ValueError("Truncation error: Second sequence not provided")
    cut = first if strategy == "only_first" else second
    if cut <= total - budget:
        raise ValueError("Truncation error: Sequence to truncate too short to respect the provided max_length")
    kept = cut - (total - budget)
    return (kept, second) if strategy == "only_first" else (first, kept)


def windows(pieces, kept, stride):
    """`pieces` cut to `kept` tokens, then the rest in windows of `kept` that repeat the last `stride` tokens
    of the one before (the first is the row, the others overflow)."""
    if kept >= len(pieces.ids):
        return [pieces]
    if kept == 0:
        return [pieces.window(0, 0), pieces]
    if stride >= kept:
        raise ValueError(f"`stride` must be strictly less than `max_len={kept}` (note that `max_len` may be shorter "
                         "than the max length of the original model, as it subtracts the number of special "
                         "characters")
    starts = range(0, len(pieces.ids), kept - stride)
    stops = [min(start + kept, len(pieces.ids)) for start in starts]
    count = next(index for index, stop in enumerate(stops) if stop == len(pieces.ids)) + 1
    return [pieces.window(start, stop) for start, stop in zip(starts[:count], stops[:count])]


def rows_of(first, second, special, add_special_tokens, truncation, max_length, stride):
    """The rows of one text (or pair), the first the call's, the others its overflow (pairs of windows in
    the order of the `tokenizers` library: each later first window with every second one, then the first
    window with the later second ones)."""
    added = (2 if second is None else 3) if add_special_tokens else 0
    if truncation != "do_not_truncate" and max_length >= 2 and stride > max_length - 2:
        raise ValueError(f"tokenizer stride set to {stride}, which is greater than or equal to its effective max "
                         f"length of {max_length - 2} (= {max_length} original max length - 2 added special "
                         "tokens), ")
    if truncation == "do_not_truncate" or max_length < added:
        pairs = [(first, second)]
    else:
        kept_first, kept_second = kept_lengths(len(first.ids), None if second is None else len(second.ids),
                                               max_length - added, truncation)
        firsts = windows(first, kept_first, stride)
        seconds = [None] if second is None else windows(second, kept_second, stride)
        pairs = [(firsts[0], seconds[0])] + [(a, b) for a in firsts[1:] for b in seconds] + [
            (firsts[0], b) for b in seconds[1:]]
    return [Encoding.pack(a, b, special, add_special_tokens) for a, b in pairs]


def encode_batch(sequences, special, *, add_special_tokens=True, padding=False, truncation=None, max_length=None,
                 stride=0, pad_to_multiple_of=None, padding_side="right", model_max_length=512, return_tensors=None,
                 return_token_type_ids=None, return_attention_mask=None, return_overflowing_tokens=False,
                 return_special_tokens_mask=False, return_offsets_mapping=False, return_length=False,
                 single=False):
    """A `BatchEncoding` of `(first, second or None)` `Pieces` per example, as `BertTokenizerFast(...)` gives
    it (see `ElectraTokenizer.__call__` for the arguments). `single`: the call had one text, so without
    `return_tensors` (and without overflow) each value is that row's, not a batch."""
    padding, truncation, max_length = strategies(padding, truncation, max_length, model_max_length, stride,
                                                 pad_to_multiple_of, padding_side)
    check_return_tensors(return_tensors)
    rows, samples = [], []
    for sample, (first, second) in enumerate(sequences):
        example = rows_of(first, second, special, add_special_tokens, truncation, max_length, stride)
        kept = example if return_overflowing_tokens else example[:1]
        rows += kept
        samples += [sample] * len(kept)
    if padding != "do_not_pad":
        length = max_length if padding == "max_length" else max(len(row.ids) for row in rows)
        length = round_up(length, pad_to_multiple_of)
        rows = [row.pad(length, special.pad, padding_side) for row in rows]
    columns = {"input_ids": [row.ids for row in rows]}
    if return_token_type_ids is not False:
        columns["token_type_ids"] = [row.type_ids for row in rows]
    if return_attention_mask is not False:
        columns["attention_mask"] = [row.attention_mask for row in rows]
    if return_special_tokens_mask:
        columns["special_tokens_mask"] = [row.special_tokens_mask for row in rows]
    if return_offsets_mapping:
        columns["offset_mapping"] = [row.offsets for row in rows]
    if return_length:
        columns["length"] = [len(row.ids) for row in rows]
    if return_overflowing_tokens:
        columns["overflow_to_sample_mapping"] = samples
    if single and return_tensors is None and not return_overflowing_tokens:
        columns = {name: value[0] if isinstance(value[0], list) else value for name, value in columns.items()}
    batch = BatchEncoding(as_tensors(columns, return_tensors))
    batch.encodings, batch.n_sequences = rows, rows[0].n_sequences if rows else None
    return batch


def round_up(length, multiple):
    """`length` rounded up to a multiple of `multiple` (None or 0: as it is)."""
    return length if not multiple or length % multiple == 0 else (length // multiple + 1) * multiple


def pad_row(values, length, fill, side):
    """The list `values` padded with `fill` to `length` on `side` ("right" or "left")."""
    padding = [fill] * (length - len(values))
    return padding + list(values) if side == "left" else list(values) + padding


def check_return_tensors(return_tensors):
    if return_tensors not in (None, "np", "tf"):
        raise ValueError(f"return_tensors={return_tensors!r}: electra_tf gives 'tf' (int32), 'np' (int64) or "
                         "None (lists)")


def as_tensors(columns, return_tensors):
    """`columns` (name → a batch's rows) as lists (`None`), int32 TensorFlow or int64 NumPy tensors."""
    if return_tensors is None:
        return columns
    tensors = {}
    for name, rows in columns.items():
        if len({len(row) if isinstance(row, (list, tuple)) else None for row in rows}) > 1:
            raise ValueError(f"return_tensors={return_tensors!r}: the rows of {name} have different lengths; pass "
                             "padding=True (and truncation=True) to have batched tensors of one length")
        tensors[name] = tf.constant(rows, tf.int32) if return_tensors == "tf" else np.array(rows, np.int64)
    return tensors


def pad(features, pad_id, *, padding=True, max_length=None, pad_to_multiple_of=None, padding_side="right",
        return_attention_mask=None, return_tensors=None, model_max_length=512):
    """transformers' `tokenizer.pad`: features (a dict of lists, or a list of dicts as a data collator holds
    them) padded to one length: `input_ids` with `pad_id`, `token_type_ids` 0, `attention_mask` 0 (made if
    absent), `special_tokens_mask` 1; other keys kept as they are."""
    if isinstance(features, (list, tuple)) and features and isinstance(features[0], dict):
        features = {key: [feature[key] for feature in features] for key in features[0]}
    if not isinstance(features, dict) or "input_ids" not in features:
        provided = list(features) if isinstance(features, dict) else type(features).__name__
        raise ValueError("You should supply an encoding or a list of encodings to this method that includes "
                         f"input_ids, but you provided {provided}")
    padding, _, max_length = strategies(padding, False, max_length, model_max_length, 0, pad_to_multiple_of,
                                        padding_side)
    features = {key: as_lists(value) for key, value in features.items()}
    ids = features["input_ids"]
    single = not ids or not isinstance(ids[0], list)
    examples = [features] if single else [{key: value[i] for key, value in features.items()} for i in range(len(ids))]
    if padding == "longest" and not single:
        padding, max_length = "max_length", max(len(example["input_ids"]) for example in examples)
    padded = [_pad_example(example, pad_id, padding, max_length, pad_to_multiple_of, padding_side,
                           return_attention_mask is not False) for example in examples]
    columns = padded[0] if single else {key: [example[key] for example in padded] for key in padded[0]}
    check_return_tensors(return_tensors)
    return BatchEncoding(as_tensors(columns, return_tensors))


def as_lists(value):
    """A feature's value as Python lists and numbers (features may hold arrays, tensors or tuples)."""
    if isinstance(value, (tf.Tensor, np.ndarray, np.generic)):
        return np.asarray(value).tolist()
    return list(value) if isinstance(value, tuple) else value


def _pad_example(example, pad_id, padding, max_length, pad_to_multiple_of, side, with_attention_mask):
    """One example's values padded as transformers' `_pad` does (its quirks too: a given `attention_mask`
    is left as it is when `return_attention_mask=False`)."""
    example, length = dict(example), len(example["input_ids"])
    if padding == "longest":
        max_length = length
    max_length = max_length if max_length is None else round_up(max_length, pad_to_multiple_of)
    if with_attention_mask and "attention_mask" not in example:
        example["attention_mask"] = [1] * length
    if padding == "do_not_pad" or length == max_length:
        return example
    for key, fill in {"input_ids": pad_id, **PADDED_WITH}.items():
        if key in example and (key != "attention_mask" or with_attention_mask):
            example[key] = pad_row(example[key], max_length, fill, side)
    return example
