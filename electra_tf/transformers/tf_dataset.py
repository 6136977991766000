"""transformers 4.x's `model.prepare_tf_dataset(dataset, batch_size=8, shuffle=True, tokenizer=None, ...)`: a
`tf.data.Dataset` for `model.fit` of `(features, labels)` batches, from a 🤗 `datasets.Dataset` (optional) or plain
Python rows, only the columns the model takes, collated by `collate_fn` (default: a padding collator given a
tokenizer, else `DefaultDataCollator`).

Example:
>>> from electra_tf import ElectraConfig
>>> from electra_tf.transformers.names import TFElectraForSequenceClassification
>>> model = TFElectraForSequenceClassification(ElectraConfig(vocab_size=30, embedding_size=8, hidden_size=16,
...                                                          num_layers=1, num_heads=2, intermediate_size=32))
>>> from electra_tf.transformers.tokenizer import ElectraTokenizer
>>> tokenizer = ElectraTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox", "ran"])
>>> rows = [{"input_ids": [2, 5, 3], "label": 1, "text": "a b"}, {"input_ids": [2, 6, 7, 3], "label": 0, "text": "c"}]
>>> dataset = prepare_tf_dataset(model, rows, batch_size=2, shuffle=False, tokenizer=tokenizer)
>>> features, labels = next(iter(dataset))
>>> sorted(features), features["input_ids"].numpy().tolist(), labels.numpy().tolist()
(['attention_mask', 'input_ids'], [[2, 5, 3, 0], [2, 6, 7, 3]], [1, 0])
"""

from collections.abc import Mapping, Sequence

import numpy as np
import tensorflow as tf

from electra_tf.transformers.calls import LABEL_NAMES
from electra_tf.transformers.collators import DataCollatorWithPadding, DefaultDataCollator

RENAMED_LABELS = ("label", "label_ids")  # the collators give these as `labels`


def model_input_names(model):
    """The names of the inputs a Keras model takes (its functional inputs)."""
    inputs = model.input
    if isinstance(inputs, Mapping):
        return list(inputs)
    return [tensor.name for tensor in tf.nest.flatten(inputs)]


def _is_hf_dataset(dataset):
    return hasattr(dataset, "column_names") and hasattr(dataset, "select_columns")


def _rows_of_columns(columns):
    """A list of row dicts from a dict of equally long columns."""
    lengths = {name: len(values) for name, values in columns.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"dataset: its columns differ in length ({lengths})")
    names = list(columns)
    return [dict(zip(names, values)) for values in zip(*columns.values())]


def row_reader(dataset, kept):
    """`(number of rows, read(indices) → list of row dicts)` holding only the columns in `kept`."""
    if _is_hf_dataset(dataset):
        dataset = dataset.select_columns([name for name in dataset.column_names if name in kept])
        return len(dataset), lambda indices: _rows_of_columns(dataset[list(indices)])
    if isinstance(dataset, Mapping):
        dataset = _rows_of_columns(dataset)
    if not isinstance(dataset, Sequence) or isinstance(dataset, str) or not all(
            isinstance(row, Mapping) for row in dataset):
        raise TypeError("dataset: a datasets.Dataset, a list of dicts (one per example) or a dict of columns is "
                        f"needed, got {type(dataset).__name__}")
    rows = [{name: value for name, value in row.items() if name in kept} for row in dataset]
    return len(rows), lambda indices: [rows[index] for index in indices]


def prepare_tf_dataset(model, dataset, batch_size=8, shuffle=True, tokenizer=None, collate_fn=None,
                       collate_fn_args=None, drop_remainder=None, prefetch=True):
    """transformers' `TFPreTrainedModel.prepare_tf_dataset` for `model`."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size={batch_size!r}: a number of examples (an int >= 1) is needed")
    if collate_fn is None:
        collate_fn = (DefaultDataCollator(return_tensors="np") if tokenizer is None else
                      DataCollatorWithPadding(tokenizer, return_tensors="np"))
    collate_fn_args = collate_fn_args or {}
    inputs = model_input_names(model)
    size, read = row_reader(dataset, {*inputs, *LABEL_NAMES, *RENAMED_LABELS})
    if size == 0:
        raise ValueError("dataset: it has no rows")

    def collate(indices):
        batch = collate_fn(read(indices), **collate_fn_args)
        return {name: np.asarray(value) for name, value in batch.items()}

    probe = collate(range(min(batch_size, size)))
    names = list(probe)
    labels = [name for name in names if name in LABEL_NAMES]
    features = [name for name in names if name in inputs and name not in labels]

    def load(indices):
        batch = collate(indices.tolist())
        return [batch[name].astype(probe[name].dtype) for name in names]

    def structure(*values):
        for value, name in zip(values, names):
            value.set_shape([None] * probe[name].ndim)
        by_name = dict(zip(names, values))
        x = by_name[features[0]] if len(features) == 1 else {name: by_name[name] for name in features}
        if not labels:
            return x
        return x, (by_name[labels[0]] if len(labels) == 1 else {name: by_name[name] for name in labels})

    drop_remainder = shuffle if drop_remainder is None else drop_remainder
    indices = tf.data.Dataset.range(size)
    if shuffle:
        indices = indices.shuffle(size)
    batches = indices.batch(batch_size, drop_remainder=drop_remainder).map(
        lambda batch: structure(*tf.numpy_function(load, [batch], [tf.as_dtype(probe[name].dtype)
                                                                    for name in names])))
    return batches.prefetch(tf.data.AUTOTUNE) if prefetch else batches
