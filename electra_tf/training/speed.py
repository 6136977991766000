"""The pre-training step's speed mechanisms, each a named switch, chosen here in one place (as transformers picks
an attention implementation by name). The step computes the same under every choice; what each switch buys, and
the command that measures it: docs/results.md, "What each speed mechanism buys".

Example:
>>> from electra_tf import ElectraConfig, ElectraModel
>>> encoder = ElectraModel(ElectraConfig(vocab_size=100, embedding_size=16, hidden_size=32, num_layers=2,
...                                      num_heads=2, intermediate_size=64))
>>> speed = StepSpeed().resolved(mixed_precision=False, train_steps=10)
>>> speed.jit_compile  # a short run does not earn XLA's compilation back
False
>>> with speed.running():  # Grappler off, as on every pre-training step by default
...     speed.apply(encoder)  # the networks whose blocks now share a trace
1
"""

import contextlib
import dataclasses

import tensorflow as tf

from electra_tf.training.shared_trace import share_traces
from electra_tf.training.xla_step import cache_xla_compilations, use_onednn_in_xla, xla_pays


@contextlib.contextmanager
def graph_optimizer(enabled):
    """TensorFlow's graph optimizer (Grappler) on or off for the functions first run inside the block; the switch
    is process-wide, so the previous setting comes back on exit.

    >>> with graph_optimizer(False):
    ...     tf.config.optimizer.get_experimental_options()["disable_meta_optimizer"]
    True
    >>> tf.config.optimizer.get_experimental_options().get("disable_meta_optimizer", False)
    False
    """
    before = tf.config.optimizer.get_experimental_options().get("disable_meta_optimizer", False)
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": not enabled})
    try:
        yield
    finally:
        tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": before})


@dataclasses.dataclass(frozen=True)
class StepSpeed:
    """The switches, with the pre-training step's defaults.

    shared_trace: each network's transformer blocks run their training calls through one traced call of its first
        block (`training.shared_trace.SharedTrace`), kept a call rather than inlined: a shorter first step.
    jit_compile: XLA with oneDNN's matmuls; None: where it pays (`xla_step.xla_pays`: fp32 runs of 1000 steps on).
    graph_optimizer: Grappler on the step (`graph_optimizer`).
    """

    shared_trace: bool = True
    jit_compile: bool | None = None
    graph_optimizer: bool = False

    def resolved(self, mixed_precision, train_steps):
        """These switches with `jit_compile` decided where it was left to the default (None)."""
        if self.jit_compile is not None:
            return self
        return dataclasses.replace(self, jit_compile=xla_pays(mixed_precision, train_steps))

    def apply(self, model):
        """Runs the blocks of `model` with the block switch; returns how many networks hold blocks."""
        return share_traces(model, self.shared_trace)

    @contextlib.contextmanager
    def running(self):
        """The process-wide switches while the `with` block runs: XLA's oneDNN flag and its compilation cache
        across runs (set before XLA's first compilation, which reads them) and Grappler."""
        if self.jit_compile:
            use_onednn_in_xla()
            cache_xla_compilations()
        with graph_optimizer(self.graph_optimizer):
            yield
