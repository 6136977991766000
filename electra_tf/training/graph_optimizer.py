"""TensorFlow's graph optimizer (Grappler) on or off while a block of code runs (`--graph_optimizer`; off by
default on the pre-training step: docs/results.md, "What each speed mechanism buys"). The switch is process-wide,
so the previous setting comes back on exit.

Example:
>>> with graph_optimizer(False):
...     tf.config.optimizer.get_experimental_options()["disable_meta_optimizer"]
True
>>> tf.config.optimizer.get_experimental_options().get("disable_meta_optimizer", False)
False
"""

import contextlib

import tensorflow as tf


@contextlib.contextmanager
def graph_optimizer(enabled):
    """Functions first run inside the block are optimised by Grappler only if `enabled`."""
    before = tf.config.optimizer.get_experimental_options().get("disable_meta_optimizer", False)
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": not enabled})
    try:
        yield
    finally:
        tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": before})
