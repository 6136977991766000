"""Sampling replacement tokens: Gumbel-max from generator logits, or from the corpus unigram distribution.

The original (and Model Garden) build a `[batch, P, vocab]` one-hot of the
sample; the argmax of `logits / T + Gumbel noise` is the sample itself.
The paper's "unigram generator" (§3.2, Figure 3) has no network: it draws
each replacement from the corpus's token frequencies, by inverting their
cumulative distribution at a counter-based uniform.
"""

import tensorflow as tf

from electra_tf import rng


def sample_replacements(logits, labels, keys, temperature=1.0, disallow_correct=False):
    """One token per prediction slot, drawn from `softmax(logits / temperature)`.

    No gradient flows through the sample. With `disallow_correct`, the
    original token gets `-1000` added to its logit (as the original code),
    so it is (almost) never drawn.

    Args:
        logits: `[batch, P, vocab]` generator logits.
        labels: `[batch, P]` original ids (used by `disallow_correct`).
        keys: `[batch]` uint64 random keys, one per example (`rng.row_keys`).

    Returns:
        `[batch, P]` int32 sampled ids.

    Example:
    >>> logits = tf.constant([[[0.0, 50.0, 0.0]]])
    >>> sample_replacements(logits, tf.constant([[0]]), tf.constant([1], tf.uint64)).numpy()
    array([[1]], dtype=int32)
    """
    logits = tf.stop_gradient(tf.cast(logits, tf.float32)) / temperature
    if disallow_correct:
        batch, slots = tf.shape(labels)[0], tf.shape(labels)[1]
        b, p = tf.meshgrid(tf.range(batch), tf.range(slots), indexing="ij")
        index = tf.stack([b, p, tf.cast(labels, tf.int32)], axis=-1)
        logits = tf.tensor_scatter_nd_add(logits, index, tf.fill(tf.shape(labels), -1000.0))
    uniform = rng.per_row_uniform(keys, tf.shape(logits)[1:])
    gumbel = -tf.math.log(-tf.math.log(uniform + 1e-9) + 1e-9)
    return tf.argmax(logits + gumbel, axis=-1, output_type=tf.int32)


def sample_unigram(counts, shape_like, keys):
    """One token per prediction slot, drawn with probability proportional to `counts`.

    Args:
        counts: `[vocab]` non-negative token counts (special tokens at 0).
        shape_like: a `[batch, P]` tensor giving the shape of the draw.
        keys: `[batch]` uint64 random keys, one per example (`rng.row_keys`).

    Returns:
        `[batch, P]` int32 sampled ids.

    Example:
    >>> sample_unigram(tf.constant([0.0, 0.0, 5.0, 0.0]), tf.zeros([2, 3]), tf.constant([1, 2], tf.uint64)).numpy()
    array([[2, 2, 2],
           [2, 2, 2]], dtype=int32)
    """
    cumulative = tf.cumsum(tf.cast(counts, tf.float32))
    uniform = rng.per_row_uniform(keys, tf.shape(shape_like)[1:]) * cumulative[-1]
    ids = tf.searchsorted(cumulative[None, :], tf.reshape(uniform, [1, -1]), side="right")
    return tf.reshape(tf.minimum(ids, tf.size(counts, tf.int32) - 1), tf.shape(uniform))
