"""Dropout with counter-based masks, used by the embedding and transformer blocks.

Keras's dropout draws its masks with TensorFlow's stateless Philox, whose
numbers differ between TensorFlow's kernel and XLA's, so an XLA-compiled step
would drop other units than the plain one. These masks come from
`rng.seeded_bits` (SplitMix64: a few 64-bit integer operations, each draw cut
into four 16-bit uniforms), keyed by the same Keras seed generator, so a step
draws the same masks with and without XLA, and a resumed run redraws what the
interrupted one would have. They are also cheaper to draw than Philox's.

No library offers a dropout whose random bits XLA and TensorFlow compute
alike, hence this small module.
"""

import math

import keras
import tensorflow as tf

from electra_tf.util import rng

_RESOLUTION = 2 ** 16  # the rate is applied in steps of 1/65536


def counter_dropout(inputs, rate, seed):
    """Inverted dropout: zero each element with probability `rate`, scale the rest by `1 / (1 - rate)`.

    `seed` is a `[2]` integer tensor; the same seed gives the same mask.

    Example:
    >>> y = counter_dropout(tf.ones([4, 1000]), 0.1, tf.constant([1, 2]))
    >>> round(float(tf.reduce_mean(tf.cast(y == 0, tf.float32))), 1), round(float(tf.reduce_max(y)), 4)
    (0.1, 1.1111)
    """
    shape = tuple(inputs.shape) if inputs.shape.is_fully_defined() else tf.shape(inputs)
    keep = _keep_mask(tf.cast(seed, tf.int64), shape, round(rate * _RESOLUTION))
    return tf.where(keep, inputs * tf.cast(1.0 / (1.0 - rate), inputs.dtype), tf.zeros_like(inputs))


# One call node per dropout in a traced step (74 in ELECTRA-Small's) instead of some 80 integer ops and constants
# each: a shorter tracing. TensorFlow inlines the call when it instantiates the step's graph, XLA compiles through
# it, and the mask is the same (integer arithmetic). A static shape is a Python tuple: one trace per shape.
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
