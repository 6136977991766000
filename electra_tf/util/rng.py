"""Counter-based random numbers keyed by (seed, step, example): the same draws whatever the replica split, with
or without XLA, and again on a resumed run.

Written by hand because XLA's stateless Philox draws other numbers than TensorFlow's kernel: SplitMix64 (Steele
et al., 2014), element `i` of a row with key `k` being `mix(k + (i + 1) * 0x9E3779B97F4A7C15)`.
"""

import tensorflow as tf

# Independent streams drawn from the same (seed, step, example) key.
MASKING, SAMPLING = 0, 1
_NUM_STREAMS = 2
_GOLDEN = 0x9E3779B97F4A7C15
_MIX_1, _MIX_2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def _u64(value):
    return tf.constant(value, tf.uint64)


def _mix(x):
    """SplitMix64's finaliser on a uint64 tensor."""
    x = tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, _u64(30))) * _u64(_MIX_1)
    x = tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, _u64(27))) * _u64(_MIX_2)
    return tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, _u64(31)))


def _as_u64(x):
    return tf.bitcast(tf.cast(x, tf.int64), tf.uint64)


def _pair_key(first, second):
    """One uint64 key from two integers (a seed and a step, or a `[2]` seed's halves)."""
    return _mix(_as_u64(first) * _u64(_GOLDEN) + _mix(_as_u64(second) + _u64(_GOLDEN)))


def _draws(keys, count):
    """`[*keys.shape, count]` uint64."""
    limit = count + 1 if isinstance(count, int) else tf.cast(count, tf.int32) + 1
    index = tf.cast(tf.range(1, limit), tf.uint64)
    return _mix(keys[..., None] + index * _u64(_GOLDEN))


def global_row_ids(local_batch_size, micro_batch=0):
    """Indices of this replica's examples in the global batch, `[batch]` int64 (Keras splits a batch across
    replicas in order; micro-batch `m` of an accumulated update follows those of `0 .. m-1`)."""
    context = tf.distribute.get_replica_context()
    replicas = 1 if context is None else context.num_replicas_in_sync
    replica = 0 if context is None else context.replica_id_in_sync_group
    size = tf.cast(local_batch_size, tf.int64)
    start = (tf.cast(micro_batch, tf.int64) * replicas + tf.cast(replica, tf.int64)) * size
    return start + tf.range(size, dtype=tf.int64)


def row_keys(seed, counter, row_ids, stream):
    """`[batch]` uint64 keys, one per example and stream.

    Example:
    >>> keys = row_keys(0, tf.constant(3, tf.int64), tf.range(2, dtype=tf.int64), MASKING)
    >>> keys.shape, keys.dtype
    (TensorShape([2]), tf.uint64)
    """
    step_key = _pair_key(seed, counter)
    return _mix(step_key + _as_u64(tf.cast(row_ids, tf.int64) * _NUM_STREAMS + stream) * _u64(_MIX_1))


def per_row_uniform(keys, shape):
    """`[batch, *shape]` float32 uniforms in [0, 1) (24-bit resolution), row `b` from `keys[b]`.

    Example:
    >>> u = per_row_uniform(tf.constant([1, 2], tf.uint64), [3])
    >>> u.shape, bool(tf.reduce_all((u >= 0) & (u < 1)))
    (TensorShape([2, 3]), True)
    """
    shape = tf.convert_to_tensor(shape, tf.int32)
    bits = _draws(keys, tf.reduce_prod(shape))
    uniform = tf.cast(tf.bitwise.right_shift(bits, _u64(40)), tf.float32) * (2.0 ** -24)
    return tf.reshape(uniform, tf.concat([tf.shape(keys)[:1], shape], axis=0))


def seeded_bits(seed, count):
    """`[count]` uint64 draws keyed by a `[2]` integer seed (e.g. a Keras `SeedGenerator`'s next state).

    Example:
    >>> bits = seeded_bits(tf.constant([1, 2], tf.int64), 5)
    >>> bits.shape, bits.dtype
    (TensorShape([5]), tf.uint64)
    """
    first, second = tf.unstack(tf.cast(seed, tf.int64), num=2)  # one op, not two strided slices
    return _draws(_pair_key(first, second), count)
