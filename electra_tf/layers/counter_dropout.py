"""Dropout whose masks come from counter-based bits (`rng.seeded_bits`) keyed by the Keras seed generator: the same
masks with and without XLA (Keras's stateless Philox differs between the two), redrawn alike on resume, and cheaper.
"""

import math

import keras
import tensorflow as tf

from electra_tf.util import rng

_RESOLUTION = 2 ** 16  # the rate is applied in steps of 1/65536


def counter_dropout(inputs, rate, seed):
    """Inverted dropout with the mask of `seed` (a `[2]` integer tensor).

    Example:
    >>> y = counter_dropout(tf.ones([4, 1000]), 0.1, tf.constant([1, 2]))
    >>> round(float(tf.reduce_mean(tf.cast(y == 0, tf.float32))), 1), round(float(tf.reduce_max(y)), 4)
    (0.1, 1.1111)
    """
    shape = tuple(inputs.shape) if inputs.shape.is_fully_defined() else tf.shape(inputs)
    keep = _keep_mask(tf.cast(seed, tf.int64), shape, round(rate * _RESOLUTION))
    return tf.where(keep, inputs * tf.cast(1.0 / (1.0 - rate), inputs.dtype), tf.zeros_like(inputs))


# One call node per dropout in a traced step instead of some 80 ops each: a shorter tracing (docs/results.md).
@tf.function(autograph=False)
def _keep_mask(seed, shape, threshold):
    """Booleans of `shape`, each false with probability `threshold / 2**16`, from the `[2]` int64 `seed`."""
    static = isinstance(shape, tuple)
    size = math.prod(shape) if static else tf.reduce_prod(shape)
    bits = rng.seeded_bits(seed, (size + 3) // 4)
    draws = tf.reshape(tf.bitcast(bits, tf.uint16), [-1])  # four 16-bit uniforms per draw
    if not static or size % 4:
        draws = draws[:size]
    return tf.reshape(draws >= tf.constant(threshold, tf.uint16), shape)


class CounterDropout(keras.layers.Dropout):
    """`keras.layers.Dropout` drawing `counter_dropout`'s masks from its own seed generator.

    Example:
    >>> layer = CounterDropout(0.5, seed=1)
    >>> bool(tf.reduce_any(layer(tf.ones([100]), training=True) == 0)), float(layer(tf.ones([2]))[0])
    (True, 1.0)
    """

    def call(self, inputs, training=False):
        if training and self.rate > 0:
            return counter_dropout(inputs, self.rate, self.seed_generator.next())
        return inputs
