"""transformers 4.x's data collators: a list of feature dicts (what a tokenizer call gives per example) → one padded
batch, as `tf` tensors or `np` arrays, with transformers' dtypes (docs/migrating_from_transformers.md). Randomness is
numpy's: `seed=` gives a collator its own generator, else numpy's global one.

Example:
>>> from electra_tf.transformers.tokenizer import ElectraTokenizer
>>> tokenizer = ElectraTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox", "ran"])
>>> collator = DataCollatorWithPadding(tokenizer, return_tensors="np")
>>> batch = collator([{"input_ids": [2, 5, 6, 3], "label": 1}, {"input_ids": [2, 7, 3], "label": 0}])
>>> batch["input_ids"].tolist(), batch["attention_mask"].tolist(), batch["labels"].tolist()
([[2, 5, 6, 3], [2, 7, 3, 0]], [[1, 1, 1, 1], [1, 1, 1, 0]], [1, 0])
"""

import dataclasses
import warnings
from collections.abc import Mapping

import numpy as np
import tensorflow as tf

from electra_tf.transformers.batch_encoding import BatchEncoding, as_lists, pad_row, round_up
from electra_tf.transformers.losses import IGNORE_INDEX

RETURN_TENSORS = ("tf", "np")
WORD_CONTINUATION = "##"  # WordPiece's mark of a piece that continues a word
NEVER_WORDS = ("[CLS]", "[SEP]")  # tokens BERT's whole-word masking never chooses


def _check_return_tensors(return_tensors):
    if return_tensors not in RETURN_TENSORS:
        raise ValueError(f"return_tensors={return_tensors!r}: electra_tf's collators give 'tf' or 'np'")


def pad(features, tokenizer, padding=True, max_length=None, pad_to_multiple_of=None):
    """A dict of lists: `features` (a non-empty list of dicts) padded by `tokenizer.pad`."""
    if not isinstance(features, (list, tuple)) or not features or not all(
            isinstance(feature, Mapping) for feature in features):
        raise ValueError("features: a non-empty list of dicts (one per example) is needed")
    return dict(tokenizer.pad([dict(feature) for feature in features], padding=padding, max_length=max_length,
                              pad_to_multiple_of=pad_to_multiple_of))


def to_tensors(batch, return_tensors, dtype=None):
    """A `BatchEncoding` of `batch`'s values as `tf` tensors (Python ints → int32, as `tf.constant`) or `np`
    arrays (int64), all of `dtype` if given."""
    if return_tensors == "tf":
        return BatchEncoding({key: tf.constant(value, dtype) for key, value in batch.items()})
    return BatchEncoding({key: np.array(value, dtype) for key, value in batch.items()})


def _rename_labels(batch):
    for name in ("label", "label_ids"):
        if name in batch:
            batch["labels"] = batch.pop(name)
    return batch


@dataclasses.dataclass
class _CollatorWithReturnTensors:
    """A collator whose call may name its `return_tensors` (transformers' `DataCollatorMixin`)."""

    def __post_init__(self):
        _check_return_tensors(self.return_tensors)

    def __call__(self, features, return_tensors=None):
        return_tensors = return_tensors or self.return_tensors
        _check_return_tensors(return_tensors)
        return self.collate(features, return_tensors)


@dataclasses.dataclass
class _PaddingCollator(_CollatorWithReturnTensors):
    """A collator that pads with its tokenizer: to the longest (`padding=True`), to `max_length`
    ("max_length") or not (False), rounded up to `pad_to_multiple_of`."""

    tokenizer: object
    padding: object = True
    max_length: int = None
    pad_to_multiple_of: int = None
    return_tensors: str = "tf"

    def pad(self, features):
        return pad(features, self.tokenizer, self.padding, self.max_length, self.pad_to_multiple_of)


@dataclasses.dataclass
class DataCollatorWithPadding(_PaddingCollator):
    """transformers' `DataCollatorWithPadding`: the features padded by `tokenizer.pad`, `label`/`label_ids` as
    `labels`."""

    def collate(self, features, return_tensors):
        return to_tensors(_rename_labels(self.pad(features)), return_tensors)


@dataclasses.dataclass
class DataCollatorForTokenClassification(_PaddingCollator):
    """transformers' `DataCollatorForTokenClassification`: padding, `labels` padded with `label_pad_token_id`.

    >>> from electra_tf.transformers.tokenizer import ElectraTokenizer
    >>> tokenizer = ElectraTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox", "ran"])
    >>> batch = DataCollatorForTokenClassification(tokenizer)([{"input_ids": [2, 5, 6, 3], "labels": [-100, 1, 2, -100]},
    ...                                                        {"input_ids": [2, 7, 3], "labels": [-100, 0, -100]}])
    >>> batch["labels"].numpy().tolist(), batch["labels"].dtype.name
    ([[-100, 1, 2, -100], [-100, 0, -100, -100]], 'int64')
    """

    label_pad_token_id: int = IGNORE_INDEX

    def collate(self, features, return_tensors):
        label_name = "label" if "label" in features[0] else "labels"
        if label_name not in features[0]:
            return to_tensors(self.pad(features), return_tensors)
        batch = self.pad([{key: value for key, value in feature.items() if key != label_name} for feature in features])
        length = len(batch["input_ids"][0])
        side = self.tokenizer.padding_side
        batch["labels"] = [pad_row(as_lists(feature[label_name]), length, self.label_pad_token_id, side)
                           for feature in features]
        return to_tensors(batch, return_tensors, "int64")


@dataclasses.dataclass
class DataCollatorForMultipleChoice(_PaddingCollator):
    """transformers' `DataCollatorForMultipleChoice`: each feature holds one row per choice; all choices are
    padded to one length, `[batch, choices, length]`, and `labels` (int64) hold the right choices.

    >>> from electra_tf.transformers.tokenizer import ElectraTokenizer
    >>> tokenizer = ElectraTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox", "ran"])
    >>> batch = DataCollatorForMultipleChoice(tokenizer)([{"input_ids": [[2, 5, 3], [2, 6, 7, 3]], "label": 1}])
    >>> batch["input_ids"].numpy().tolist(), batch["labels"].numpy().tolist()
    ([[[2, 5, 3, 0], [2, 6, 7, 3]]], [1])
    """

    def collate(self, features, return_tensors):
        label_name = "label" if "label" in features[0] else "labels"
        inputs = [{key: value for key, value in feature.items() if key != label_name} for feature in features]
        choices = len(inputs[0]["input_ids"])
        if any(len(row) != choices for feature in inputs for row in feature.values()):
            raise ValueError(f"features: every example needs the same number of choices in every key ({choices} "
                             "in the first)")
        flat = [{key: rows[choice] for key, rows in feature.items()} for feature in inputs for choice in range(choices)]
        batch = to_tensors(self.pad(flat), return_tensors)
        reshape = tf.reshape if return_tensors == "tf" else np.reshape
        batch = BatchEncoding({key: reshape(value, (len(features), choices, -1)) for key, value in batch.items()})
        if label_name in features[0]:
            batch.update(to_tensors({"labels": [as_lists(feature[label_name]) for feature in features]},
                                    return_tensors, "int64"))
        return batch


@dataclasses.dataclass
class DefaultDataCollator(_CollatorWithReturnTensors):
    """transformers' `DefaultDataCollator`: stacks each key (features already of one length); `label` or
    `label_ids` become `labels` (int64 for ints, float32 otherwise); strings and `None` are left out.

    >>> batch = DefaultDataCollator(return_tensors="np")([{"input_ids": [2, 5, 3], "label": 0.5, "text": "a"},
    ...                                                   {"input_ids": [2, 6, 3], "label": 1.0, "text": "b"}])
    >>> sorted(batch), batch["labels"].dtype.name, batch["input_ids"].dtype.name
    (['input_ids', 'labels'], 'float32', 'int64')
    """

    return_tensors: str = "tf"

    def collate(self, features, return_tensors):
        first = features[0]
        batch = {}
        label_name = next((name for name in ("label", "label_ids", "labels") if first.get(name) is not None), None)
        if label_name is not None:
            labels = [as_lists(feature[label_name]) for feature in features]
            integer = np.issubdtype(np.asarray(labels).dtype, np.integer)
            batch.update(to_tensors({"labels": labels}, return_tensors, "int64" if integer else "float32"))
        for key, value in first.items():
            if key not in ("label", "label_ids", "labels") and value is not None and not isinstance(value, str):
                if len({np.shape(feature[key]) for feature in features}) > 1:
                    raise ValueError(f"features: the {key!r} of the examples differ in length; DefaultDataCollator "
                                     "stacks only what is of one length (pad with DataCollatorWithPadding, or "
                                     "prepare_tf_dataset(..., tokenizer=))")
                values = [feature[key] for feature in features]  # (arrays keep their dtype; lists as tf.constant's)
                values = np.stack(values) if isinstance(value, (np.ndarray, tf.Tensor)) else values
                batch.update(to_tensors({key: values}, return_tensors))
        return BatchEncoding(batch)


def collate_ids(rows, tokenizer, pad_to_multiple_of=None, fill=None):
    """Rows of ids (lists, arrays) as one `[batch, length]` int64 array, padded with `fill` (default the pad id)
    on the tokenizer's padding side."""
    rows = [list(as_lists(row)) for row in rows]
    length = round_up(max(map(len, rows)), pad_to_multiple_of)
    fill = tokenizer.pad_token_id if fill is None else fill
    side = tokenizer.padding_side
    return np.array([pad_row(row, length, fill, side) for row in rows], np.int64)


@dataclasses.dataclass
class DataCollatorForLanguageModeling(_CollatorWithReturnTensors):
    """transformers' `DataCollatorForLanguageModeling`: BERT's masked LM (`mlm_probability`, then `[MASK]`, a random
    token or kept by `mask_replace_prob`/`random_replace_prob`; labels -100 elsewhere); `mlm=False`: the ids as
    labels; `whole_word_mask=True`: words from `offset_mapping`, as transformers 4.5x.

    >>> from electra_tf.transformers.tokenizer import ElectraTokenizer
    >>> tokenizer = ElectraTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox", "ran"])
    >>> collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=1.0, mask_replace_prob=1.0,
    ...                                            random_replace_prob=0.0)
    >>> batch = collator([[2, 5, 6, 3], [2, 7, 3]])
    >>> batch["input_ids"].numpy().tolist(), batch["labels"].numpy().tolist()
    ([[2, 4, 4, 3], [2, 4, 3, 0]], [[-100, 5, 6, -100], [-100, 7, -100, -100]])
    """

    tokenizer: object
    mlm: bool = True
    whole_word_mask: bool = False
    mlm_probability: float = 0.15
    mask_replace_prob: float = 0.8
    random_replace_prob: float = 0.1
    pad_to_multiple_of: int = None
    return_tensors: str = "tf"
    seed: int = None

    def __post_init__(self):
        super().__post_init__()
        for name in ("mlm_probability", "mask_replace_prob", "random_replace_prob"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise ValueError(f"{name}={value!r}: a probability between 0 and 1 is needed")
        if self.mask_replace_prob + self.random_replace_prob > 1:
            raise ValueError(f"mask_replace_prob + random_replace_prob = "
                             f"{self.mask_replace_prob + self.random_replace_prob}: they must not exceed 1")
        if self.whole_word_mask and not self.mlm:
            raise ValueError("whole_word_mask=True needs mlm=True (whole words are masked for masked LM only)")
        if self.whole_word_mask and self.mask_replace_prob < 1:
            warnings.warn("whole_word_mask=True replaces every chosen token by [MASK] (mask_replace_prob=1), as "
                          "transformers does", UserWarning, stacklevel=3)
            self.mask_replace_prob, self.random_replace_prob = 1.0, 0.0
        self._generator = None if self.seed is None else np.random.default_rng(self.seed)

    # === randomness: the collator's own generator (seed=), else numpy's global one ===
    def _uniform(self, shape):
        return (self._generator or np.random).random(shape)

    def _integers(self, high, shape):
        return self._generator.integers(0, high, shape) if self._generator else np.random.randint(0, high, shape)

    def _permutation(self, count):
        return (self._generator or np.random).permutation(count)

    def collate(self, examples, return_tensors):
        if isinstance(examples[0], Mapping):
            batch = pad(examples, self.tokenizer, pad_to_multiple_of=self.pad_to_multiple_of)
        else:
            batch = {"input_ids": collate_ids(examples, self.tokenizer, self.pad_to_multiple_of)}
        padded = batch.pop("input_ids")  # lists (int32 as `tf`), or collated ids (int64)
        ids = np.array(padded, np.int64)
        special = batch.pop("special_tokens_mask", None)
        special = np.isin(ids, self.tokenizer.all_special_ids) if special is None else np.array(special, bool)
        offsets = batch.pop("offset_mapping", None)
        if not self.mlm:  # (ids and labels keep the padded batch's dtype, as transformers')
            labels = np.where(ids == self.tokenizer.pad_token_id, IGNORE_INDEX, ids)
            batch.update(input_ids=padded, labels=labels.tolist() if isinstance(padded, list) else labels)
            return to_tensors(batch, return_tensors)
        if self.whole_word_mask:
            if offsets is None:
                raise ValueError("whole_word_mask=True: the features need 'offset_mapping' (tokenizer(..., "
                                 "return_offsets_mapping=True)) to find the words")
            masked, labels = self.mask_tokens(ids, self._word_choice(np.array(offsets, np.int64), special))
        else:
            masked, labels = self.mask_tokens(ids, self._uniform(ids.shape) < self.mlm_probability, special)
        output = to_tensors(batch, return_tensors)
        output.update(to_tensors({"input_ids": masked, "labels": labels}, return_tensors, "int64"))
        return output

    def _word_choice(self, offsets, special):
        """Whole words chosen with `mlm_probability` each (`offset_words`)."""
        words, word_start = offset_words(offsets, special)
        chosen_words = np.where(word_start & (self._uniform(words.shape) < self.mlm_probability), words, -1)
        return (words[:, :, None] == chosen_words[:, None, :]).any(axis=2) & (words != -1)

    def mask_tokens(self, ids, chosen, special=None):
        """`(inputs, labels)` for the positions `chosen` (special ones never): labels their ids (-100 elsewhere);
        inputs `[MASK]` at `mask_replace_prob` of them, a random token at `random_replace_prob`, else kept."""
        if special is not None:
            chosen = chosen & ~special
        labels = np.where(chosen, ids, IGNORE_INDEX)
        replaced = chosen & (self._uniform(ids.shape) < self.mask_replace_prob)
        inputs = np.where(replaced, self.tokenizer.mask_token_id, ids)
        kept_share = 1 - self.mask_replace_prob
        if self.random_replace_prob == 0 or kept_share == 0:
            return inputs, labels
        randomized = chosen & ~replaced & (self._uniform(ids.shape) < self.random_replace_prob / kept_share)
        return np.where(randomized, self._integers(len(self.tokenizer), ids.shape), inputs), labels


@dataclasses.dataclass
class DataCollatorForWholeWordMask(DataCollatorForLanguageModeling):
    """transformers' `DataCollatorForWholeWordMask`: BERT's whole-word masking, a word a token and its `##` pieces
    (or, for Chinese, the characters its `chinese_ref` positions continue), taken while they fit in
    `round(len(ids) * mlm_probability)` tokens (below: 2 of 6, "the" and "ran", or "fox ##es").

    >>> from electra_tf.transformers.tokenizer import ElectraTokenizer
    >>> tokenizer = ElectraTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox", "##es", "ran"])
    >>> collator = DataCollatorForWholeWordMask(tokenizer, mlm_probability=0.4, mask_replace_prob=1.0,
    ...                                          random_replace_prob=0.0, seed=0)
    >>> [collator([[2, 5, 6, 7, 8, 3]])["input_ids"].numpy().tolist() for _ in range(3)]
    [[[2, 4, 6, 7, 4, 3]], [[2, 4, 6, 7, 4, 3]], [[2, 5, 4, 4, 8, 3]]]
    """

    max_predictions: int = 512

    def collate(self, examples, return_tensors):
        if not isinstance(examples[0], Mapping):
            examples = [{"input_ids": example} for example in examples]
        rows = [list(as_lists(example["input_ids"])) for example in examples]
        chosen = [self._chosen_positions(row, as_lists(example.get("chinese_ref", ())))
                  for row, example in zip(rows, examples)]
        ids = collate_ids(rows, self.tokenizer, self.pad_to_multiple_of)
        chosen = collate_ids(chosen, self.tokenizer, self.pad_to_multiple_of, fill=0).astype(bool)
        never = np.isin(ids, self.tokenizer.all_special_ids) | (ids == self.tokenizer.pad_token_id)
        masked, labels = self.mask_tokens(ids, chosen, never)
        return to_tensors({"input_ids": masked, "labels": labels}, return_tensors, "int64")

    def _chosen_positions(self, ids, chinese_ref):
        """1 at the positions of the words chosen in one example, else 0."""
        tokens = self.tokenizer.convert_ids_to_tokens(ids)
        words = word_positions(tokens, chinese_ref)
        budget = min(self.max_predictions, max(1, round(len(ids) * self.mlm_probability)))
        chosen = set(fill_with_words([words[i] for i in self._permutation(len(words))], budget))
        return [int(position in chosen) for position in range(len(ids))]


def offset_words(offsets, special):
    """`(word ids, word starts)` of a batch of `[batch, length, 2]` character offsets, as transformers finds words
    from them: a word is a run of tokens each starting where the one before ended; special tokens are in none
    (word id -1)."""
    starts, ends = offsets[..., 0], offsets[..., 1]
    previous_end = np.concatenate([np.full_like(ends[:, :1], -1), ends[:, :-1]], axis=1)
    previous_special = np.concatenate([np.zeros_like(special[:, :1]), special[:, :-1]], axis=1)
    word_start = ~special & ((starts != previous_end) | previous_special)
    return np.where(special, -1, np.cumsum(word_start, axis=1)), word_start


def word_positions(tokens, continuations=()):
    """The positions of each word of `tokens`, in order: a word is a token and the `##` pieces (or positions in
    `continuations`) right after it; [CLS] and [SEP] are no word."""
    continuations = set(continuations)
    words = []
    for position, token in enumerate(tokens):
        if token in NEVER_WORDS:
            continue
        if words and (token.startswith(WORD_CONTINUATION) or position in continuations):
            words[-1].append(position)
        else:
            words.append([position])
    return words


def fill_with_words(words, budget):
    """The positions of `words` taken in order, each while it fits in `budget` positions (a word that would
    overflow is skipped, a later shorter one may still fit)."""
    chosen = []
    for word in words:
        if len(chosen) >= budget:
            break
        if len(chosen) + len(word) <= budget:
            chosen.extend(word)
    return chosen
