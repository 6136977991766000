"""TensorFlow's graph optimizer (Grappler) on or off while a block of code runs, and where it pays.

On the ELECTRA-Small pre-training step (CPU, `tf.function`, 2026-12-01, in one process, alternating steps) Grappler
took about 18 of the first step's 38–56 s; in fp32 the steady step was as fast without it (1.00×: oneDNN's own
graph rewrite, which is not a Grappler pass, still runs), under `mixed_bfloat16` 4.7 % slower (its fusions pay
for themselves after some 70 steps). `tools/run_pretraining.py` therefore trains fp32 without it by default
(`--graph_optimizer` decides). The switch is process-wide (`tf.config.optimizer.set_experimental_options`), so
the previous setting comes back on exit.

Example:
>>> with graph_optimizer(False):
...     tf.config.optimizer.get_experimental_options()["disable_meta_optimizer"]
True
>>> tf.config.optimizer.get_experimental_options().get("disable_meta_optimizer", False)
False
>>> grappler_pays(mixed_precision=False), grappler_pays(mixed_precision=True)
(False, True)
"""

import contextlib

import tensorflow as tf


def grappler_pays(mixed_precision):
    """Whether Grappler's saving on a pre-training step outweighs its cost on the first step (measured, above)."""
    return bool(mixed_precision)


@contextlib.contextmanager
def graph_optimizer(enabled):
    """Functions first run inside the block are optimised by Grappler only if `enabled`."""
    before = tf.config.optimizer.get_experimental_options().get("disable_meta_optimizer", False)
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": not enabled})
    try:
        yield
    finally:
        tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": before})
