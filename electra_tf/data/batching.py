"""Length-aware batches (docs/finetuning.md): examples of similar length together, each batch padded only to
its longest; `batch_examples` is the one place every task's datasets are batched.

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
    inverse = np.argsort(order)
    return values[inverse] if isinstance(values, np.ndarray) else [values[position] for position in inverse]


# Training shuffles over `min(examples, SHUFFLE_BUFFER)` examples (all of them on every task's usual size).
SHUFFLE_BUFFER = 10_000


def _shuffled(dataset, count, seed):
    return dataset.shuffle(min(count, SHUFFLE_BUFFER), seed=seed, reshuffle_each_iteration=True)


def batch_examples(dataset, batch_size, shuffle=False, seed=0, keys=None):
    """`dataset`'s examples in `ragged_batch`es: for training (`shuffle=True`) shuffled on every pass, the last
    partial batch dropped and, with length bucket `keys`, endless and grouped by bucket; for evaluation in order,
    every example kept."""
    if shuffle and keys is not None:
        keyed = tf.data.Dataset.zip((dataset, tf.data.Dataset.from_tensor_slices(np.asarray(keys, np.int64))))
        keyed = _shuffled(keyed, len(keys), seed).repeat()
        grouped = keyed.group_by_window(
            key_func=lambda _, key: key, window_size=batch_size,
            reduce_func=lambda _, window: window.ragged_batch(batch_size, drop_remainder=True))
        return grouped.map(lambda example, _: example)
    if shuffle:
        dataset = _shuffled(dataset, int(dataset.cardinality()), seed)
    return dataset.ragged_batch(batch_size, drop_remainder=shuffle)


def to_longest(inputs):
    """A batch of fixed-length inputs (a dict with `attention_mask`) cut to its longest row, rounded up as
    `featurize.padded_length` rounds."""
    mask = inputs["attention_mask"]
    lengths = tf.reduce_sum(tf.reshape(tf.cast(mask, tf.int32), [-1, tf.shape(mask)[-1]]), axis=-1)
    length = padded_length(lengths, tf.shape(mask)[-1])
    return {name: value[..., :length] if value.shape.rank == mask.shape.rank else value
            for name, value in inputs.items()}
