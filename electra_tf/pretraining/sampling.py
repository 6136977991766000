"""Sampling replacement tokens from generator logits (by default an inverse CDF in two levels, one uniform per
slot; `sampler="gumbel"`, the original's Gumbel-max: docs/pretraining.md) or from the corpus's unigram counts.
"""

import math

import tensorflow as tf

from electra_tf.util import rng


def sample_replacements(logits, labels, keys, temperature=1.0, disallow_correct=False, sampler="inverse_cdf"):
    """`[batch, P]` int32: one token per slot of `logits` (`[batch, P, vocab]`) drawn from `softmax(logits /
    temperature)` with the `[batch]` `keys` (`rng.row_keys`), no gradient through it; `disallow_correct` adds
    -1000 to the logit of `labels` (as the original).

    Example:
    >>> logits = tf.constant([[[0.0, 50.0, 0.0]]])
    >>> [int(sample_replacements(logits, tf.constant([[0]]), tf.constant([1], tf.uint64), sampler=s)[0, 0])
    ...  for s in ("inverse_cdf", "gumbel")]
    [1, 1]
    """
    if sampler not in ("inverse_cdf", "gumbel"):
        raise ValueError(f"sample_replacements: sampler {sampler!r} is not 'inverse_cdf' or 'gumbel'")
    logits = tf.stop_gradient(tf.cast(logits, tf.float32)) / temperature
    if disallow_correct:
        batch, slots = tf.shape(labels)[0], tf.shape(labels)[1]
        b, p = tf.meshgrid(tf.range(batch), tf.range(slots), indexing="ij")
        index = tf.stack([b, p, tf.cast(labels, tf.int32)], axis=-1)
        logits = tf.tensor_scatter_nd_add(logits, index, tf.fill(tf.shape(labels), -1000.0))
    if sampler == "gumbel":
        uniform = rng.per_row_uniform(keys, tf.shape(logits)[1:])
        gumbel = -tf.math.log(-tf.math.log(uniform + 1e-9) + 1e-9)
        return tf.argmax(logits + gumbel, axis=-1, output_type=tf.int32)
    return _inverse_cdf(logits, rng.per_row_uniform(keys, tf.shape(logits)[1:2]))


def _first_reaching(cumulative, target):
    """Per row, the first index whose `cumulative` value exceeds `target`: the inverse of the distribution.
    Where rounding puts the target at or past the total, the last index of positive weight."""
    found = tf.searchsorted(cumulative, target[..., None], side="right")[..., 0]
    last = tf.searchsorted(cumulative, cumulative[..., -1:], side="left")[..., 0]
    return tf.minimum(found, last)


def _inverse_cdf(logits, uniform):
    """`[batch, P]` ids drawn from `softmax(logits)` at `uniform`: the block sums of ~√vocab weights are cumulated,
    then the chosen block's (a `cumsum` over the whole vocabulary alone takes longer than this draw)."""
    vocab = logits.shape[-1]
    block = 2 ** math.ceil(math.log2(math.sqrt(vocab)))
    blocks = -(-vocab // block)
    weights = tf.exp(logits - tf.reduce_max(logits, axis=-1, keepdims=True))  # the largest is 1: no sum is 0
    weights = tf.pad(weights, [[0, 0], [0, 0], [0, blocks * block - vocab]])
    weights = tf.reshape(weights, tf.concat([tf.shape(logits)[:2], [blocks, block]], axis=0))
    sums = tf.reduce_sum(weights, axis=-1)
    cumulative = tf.cumsum(sums, axis=-1)
    target = uniform * cumulative[..., -1]
    chosen = _first_reaching(cumulative, target)
    before = tf.gather(tf.pad(cumulative[..., :-1], [[0, 0], [0, 0], [1, 0]]), chosen, batch_dims=2)
    within = tf.cumsum(tf.gather(weights, chosen, batch_dims=2), axis=-1)
    return chosen * block + _first_reaching(within, target - before)


def sample_unigram(counts, shape_like, keys):
    """`[batch, P]` int32 (the shape of `shape_like`): tokens drawn in proportion to `counts` (`[vocab]`) with the
    `[batch]` `keys`.

    Example:
    >>> sample_unigram(tf.constant([0.0, 0.0, 5.0, 0.0]), tf.zeros([2, 3]), tf.constant([1, 2], tf.uint64)).numpy()
    array([[2, 2, 2],
           [2, 2, 2]], dtype=int32)
    """
    cumulative = tf.cumsum(tf.cast(counts, tf.float32))
    uniform = rng.per_row_uniform(keys, tf.shape(shape_like)[1:]) * cumulative[-1]
    ids = tf.searchsorted(cumulative[None, :], tf.reshape(uniform, [1, -1]), side="right")
    return tf.reshape(tf.minimum(ids, tf.size(counts, tf.int32) - 1), tf.shape(uniform))
