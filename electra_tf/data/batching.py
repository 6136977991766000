"""Length-aware batches: examples of similar length together, each batch padded only to its longest.

Texts are far shorter than `max_seq_length` on most tasks (an SST-2 sentence is ~25 tokens of 128), so a
batch padded to the maximum spends most of its compute on padding. Instead:

- training groups examples by their packed length into buckets of `featurize.PAD_MULTIPLE` tokens
  (`tf.data`'s `group_by_window` over the shuffled, repeated stream) and pads each batch to its bucket, so
  the step sees a handful of shapes; a batch's examples share a bucket, where fixed padding mixes all
  lengths (the only change to training: which examples meet in a batch);
- evaluation and prediction sort the examples by length (`length_order`), batch them in that order and
  put the outputs back in the input order (`restore_order`): the numbers equal fixed padding's up to float
  round-off (padding is masked).

`pad_to_max_length=True` (the tools' `--pad_to_max_length`) keeps fixed padding.

`batch_examples` is the one place the task datasets (classification, multiple choice, SQuAD, tagging) batch
their examples, so training and evaluation batches are made the same way for every task.

Example:
>>> order = length_order([30, 5, 17])
>>> order.tolist(), restore_order(np.array([50, 170, 300]), order).tolist()
([1, 2, 0], [300, 50, 170])
>>> bucket_keys([1, 16, 17, 40]).tolist()
[1, 1, 2, 3]
>>> [len(b) for b in batch_examples(tf.data.Dataset.range(5), batch_size=2).as_numpy_iterator()]
[2, 2, 1]
"""

import numpy as np
import tensorflow as tf

from electra_tf.text.featurize import PAD_MULTIPLE, padded_length


def bucket_keys(lengths):
    """The bucket of each packed length: `ceil(length / PAD_MULTIPLE)`."""
    return -(-np.asarray(lengths, np.int64) // PAD_MULTIPLE)


def length_order(lengths):
    """The indices that sort examples by length (stable: equal lengths keep their order)."""
    return np.argsort(np.asarray(lengths), kind="stable")


def restore_order(values, order):
    """`values` computed in `order` (an array, or a list), back in the input order."""
    if isinstance(values, np.ndarray):
        restored = np.empty_like(values)
        restored[order] = values
        return restored
    restored = [None] * len(values)
    for position, index in enumerate(order):
        restored[index] = values[position]
    return restored


SHUFFLE_BUFFER = 10_000
"""Training shuffles over `min(examples, SHUFFLE_BUFFER)` examples (all of them on every task's usual size)."""


def _shuffled(dataset, count, seed):
    return dataset.shuffle(min(count, SHUFFLE_BUFFER), seed=seed, reshuffle_each_iteration=True)


def batch_examples(dataset, batch_size, shuffle=False, seed=0, keys=None):
    """`dataset`'s examples (one element each) in batches, for training (`shuffle=True`) or evaluation.

    The settings, chosen once for every task:

    - training (`shuffle=True`) shuffles over `min(examples, SHUFFLE_BUFFER)` examples, reshuffled on every
      pass, and drops the last partial batch (every step sees `batch_size` examples); with `keys` (length
      buckets from `bucket_keys`, for `pad_to_max_length=False`) the batches are endless and grouped by bucket
      (`bucketed_batches`), else one pass;
    - evaluation (`shuffle=False`) keeps the input order and every example (the last batch may be short).

    Batches are `ragged_batch`es: components of one shape stay dense, variable-length ones (tagging's label
    ids) become ragged.
    """
    if shuffle and keys is not None:
        return bucketed_batches(dataset, keys, batch_size, seed)
    if shuffle:
        dataset = _shuffled(dataset, int(dataset.cardinality()), seed)
    return dataset.ragged_batch(batch_size, drop_remainder=shuffle)


def bucketed_batches(dataset, keys, batch_size, seed=0):
    """Endless training batches of `dataset`'s examples (one element each, in input order), shuffled and
    grouped so that a batch's examples share a bucket (`keys`, from `bucket_keys`)."""
    keyed = tf.data.Dataset.zip((dataset, tf.data.Dataset.from_tensor_slices(np.asarray(keys, np.int64))))
    keyed = _shuffled(keyed, len(keys), seed).repeat()
    grouped = keyed.group_by_window(key_func=lambda _, key: key,
                                    reduce_func=lambda _, window: window.ragged_batch(batch_size, drop_remainder=True),
                                    window_size=batch_size)
    return grouped.map(lambda example, _: example)


def to_longest(inputs):
    """A batch of fixed-length inputs (a dict with `attention_mask`) cut to its longest row, rounded up as
    `featurize.padded_length` rounds."""
    mask = inputs["attention_mask"]
    lengths = tf.reduce_sum(tf.reshape(tf.cast(mask, tf.int32), [-1, tf.shape(mask)[-1]]), axis=-1)
    length = padded_length(lengths, tf.shape(mask)[-1])
    return {name: value[..., :length] if value.shape.rank == mask.shape.rank else value
            for name, value in inputs.items()}
