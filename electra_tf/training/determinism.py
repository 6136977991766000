"""Runs that repeat: TensorFlow's op determinism and the seeds of Python, NumPy, TensorFlow and Keras, in one call.

With both, two runs of the same command on the same machine give the same weights, bit for bit (the
tools' `--deterministic`). Without, TensorFlow may pick kernels and reduction orders that differ from run
to run, and `tf.data` may hand out parallel work's results as they come.

Example:
>>> enable_determinism(seed=0)  # doctest: +SKIP
"""

import keras
import tensorflow as tf


def enable_determinism(seed=None):
    """Turns on `tf.config.experimental.enable_op_determinism()` (for the rest of the process) and, given
    `seed`, seeds every generator (`keras.utils.set_random_seed`)."""
    tf.config.experimental.enable_op_determinism()
    if seed is not None:
        keras.utils.set_random_seed(seed)
