"""Global counts across the replicas in sync, so a step on R replicas has exactly the gradient of one device.

Losses are normalised by the *global* number of predictions and real tokens (one small all-reduce); when every
replica holds the same counts this is the usual per-replica mean divided by `num_replicas_in_sync`.

Example:
>>> import tensorflow as tf
>>> from electra_tf.pretraining.masking import MaskedBatch
>>> masked = MaskedBatch(None, None, tf.constant([[1.0, 1.0, 0.0]]), None)
>>> {name: float(count) for name, count in denominators(masked, tf.ones([1, 8], tf.int32)).items()}
{'predictions': 2.0, 'tokens': 8.0}
"""

import tensorflow as tf


def global_sum(value):
    """Sum over all replicas in sync (the value itself on one replica)."""
    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync == 1:
        return value
    return context.all_reduce(tf.distribute.ReduceOp.SUM, value)


def num_replicas():
    """Replicas in sync (1 outside a replica context)."""
    context = tf.distribute.get_replica_context()
    return 1 if context is None else context.num_replicas_in_sync


def denominators(masked, attention_mask):
    """Global counts of predictions and real tokens: `{"predictions", "tokens"}`.

    One all-reduce for both: two independent collectives may run in a different order on each replica and
    deadlock.
    """
    counts = global_sum(tf.stack([tf.reduce_sum(masked.weights),
                                  tf.reduce_sum(tf.cast(attention_mask, tf.float32))]))
    return {"predictions": counts[0], "tokens": counts[1]}
