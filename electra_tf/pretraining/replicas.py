"""Global counts across the replicas in sync, which the losses are normalised by, so a step on R replicas has
exactly the gradient of one device.

Example:
>>> import tensorflow as tf
>>> from electra_tf.pretraining.masking import MaskedBatch
>>> masked = MaskedBatch(None, None, tf.constant([[1.0, 1.0, 0.0]]), None)
>>> {name: float(count) for name, count in denominators(masked, tf.ones([1, 8], tf.int32)).items()}
{'predictions': 2.0, 'tokens': 8.0}
"""

import tensorflow as tf


def num_replicas():
    """Replicas in sync (1 outside a replica context)."""
    context = tf.distribute.get_replica_context()
    return 1 if context is None else context.num_replicas_in_sync


def denominators(masked, attention_mask):
    """Global counts of predictions and real tokens: `{"predictions", "tokens"}`, in one all-reduce (two
    independent collectives may run in another order on each replica and deadlock)."""
    counts = tf.stack([tf.reduce_sum(masked.weights), tf.reduce_sum(tf.cast(attention_mask, tf.float32))])
    if num_replicas() > 1:
        counts = tf.distribute.get_replica_context().all_reduce(tf.distribute.ReduceOp.SUM, counts)
    return {"predictions": counts[0], "tokens": counts[1]}
