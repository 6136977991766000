"""The corpus unigram distribution for the paper's "unigram generator" (Clark et al., 2020, §3.2, Figure 3).

Counted once from the training data (every real token of a pass over the
pre-training batches) and kept with the run, so a resumed run samples from the
same distribution even if the shards were rebuilt.

Example:
>>> import numpy as np, tensorflow as tf
>>> batch = {"input_ids": np.array([[2, 7, 7, 3, 0]]), "attention_mask": np.array([[1, 1, 1, 1, 0]])}
>>> count_tokens(tf.data.Dataset.from_tensors(batch), vocab_size=8)
[0, 0, 1, 1, 0, 0, 0, 2]
"""

import tensorflow as tf


def count_tokens(dataset, vocab_size):
    """Occurrences of each id among the real tokens of `dataset`'s batches (`input_ids`, `attention_mask`)."""
    counts = tf.zeros([vocab_size], tf.int64)
    for batch in dataset:
        ids = tf.boolean_mask(tf.cast(batch["input_ids"], tf.int32), tf.cast(batch["attention_mask"], tf.bool))
        counts += tf.math.bincount(ids, minlength=vocab_size, maxlength=vocab_size, dtype=tf.int64)
    return [int(c) for c in counts.numpy()]
