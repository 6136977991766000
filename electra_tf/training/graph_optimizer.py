"""TensorFlow's graph optimizer (Grappler) on or off while a block of code runs.

`electra-pretrain` runs its step without Grappler (`--graph_optimizer` turns it on). On the ELECTRA-Small
pre-training step (CPU, `tf.function`, in one process, alternating steps) Grappler's fusions buy nothing
measurable, while it costs the first step many seconds: fp32 1.002× with ÷ without (2026-11, the optimisation
phase 16.5 → 6.1 s); `mixed_bfloat16` 0.955× on a busy machine (load 5–7, an earlier step graph) but **1.013× and
0.965×** near idle on today's step (2026-12-01, two A/Bs of 8 and 10 rounds), its first call 10.3–10.7 s against
4.7–5.2 s without (oneDNN's own graph rewrite, which is not a Grappler pass, runs either way). The switch is
process-wide (`tf.config.optimizer.set_experimental_options`), so the previous setting comes back on exit.

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
