"""Runs that repeat bit for bit on one machine (the tools' `--deterministic`): TensorFlow's op determinism and
the seeds of Python, NumPy, TensorFlow and Keras, in one call.

Example:
>>> enable_determinism(seed=0)  # doctest: +SKIP
"""

import keras
import tensorflow as tf


def enable_determinism(seed=None):
    """Turns on TensorFlow's op determinism for the rest of the process and, given `seed`, seeds every generator."""
    tf.config.experimental.enable_op_determinism()
    if seed is not None:
        keras.utils.set_random_seed(seed)
