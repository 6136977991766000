"""Stateless random numbers keyed by (seed, step, example): same draws on any replica count.

Each example's masking and sampling noise depends only on the run seed, a step
counter and the example's index in the global batch, never on how the batch
was split across replicas or workers. So a 2-replica step draws exactly what a
1-replica step draws on the same global batch, and a resumed run redraws what
the interrupted one would have drawn.
"""

import tensorflow as tf

# Independent streams drawn from the same (seed, step, example) key.
MASKING, SAMPLING = 0, 1
_NUM_STREAMS = 2


def global_row_ids(local_batch_size):
    """Indices of this replica's examples in the global batch, `[batch]` int64.

    Keras splits a global batch across replicas in order, so replica `r` holds
    rows `r * local_batch_size + i`.
    """
    context = tf.distribute.get_replica_context()
    replica = 0 if context is None else context.replica_id_in_sync_group
    start = tf.cast(replica, tf.int64) * tf.cast(local_batch_size, tf.int64)
    return start + tf.range(tf.cast(local_batch_size, tf.int64), dtype=tf.int64)


def row_seeds(seed, counter, row_ids, stream):
    """`[batch, 2]` int64 stateless seeds, one per example and stream.

    Example:
    >>> seeds = row_seeds(0, tf.constant(3, tf.int64), tf.range(2, dtype=tf.int64), MASKING)
    >>> seeds.shape
    TensorShape([2, 2])
    """
    key = tf.random.stateless_uniform(
        [2], seed=tf.stack([tf.constant(seed, tf.int64), tf.cast(counter, tf.int64)]),
        minval=None, maxval=None, dtype=tf.int64)
    second = key[1] + tf.cast(row_ids, tf.int64) * _NUM_STREAMS + stream
    return tf.stack([tf.fill(tf.shape(second), key[0]), second], axis=1)


def per_row_uniform(seeds, shape):
    """`[batch, *shape]` float32 uniforms in [0, 1), row `b` drawn from `seeds[b]`."""
    return tf.map_fn(lambda s: tf.random.stateless_uniform(shape, seed=s),
                     seeds, fn_output_signature=tf.float32)
