"""The pre-training step's speed mechanisms, each a named switch, chosen here in one place; the step computes the
same under every choice (what each buys: docs/results.md, "What each speed mechanism buys").

Example:
>>> from electra_tf import ElectraConfig, ElectraModel
>>> encoder = ElectraModel(ElectraConfig(vocab_size=100, embedding_size=16, hidden_size=32, num_layers=2,
...                                      num_heads=2, intermediate_size=64))
>>> speed = StepSpeed().resolved(mixed_precision=False, train_steps=10)
>>> speed.jit_compile  # a short run does not earn XLA's compilation back
False
>>> xla_pays(mixed_precision=False, train_steps=1_000_000), xla_pays(mixed_precision=True, train_steps=1_000_000)
(True, False)
>>> with speed.running():  # Grappler off, as on every pre-training step by default
...     speed.apply(encoder)  # the networks whose blocks now share a trace
1
"""

import contextlib
import dataclasses
import os
from importlib import metadata

import tensorflow as tf

from electra_tf.training.shared_trace import share_traces

XLA_MIN_STEPS = 1000


def xla_pays(mixed_precision, train_steps):
    """XLA in fp32 for a run long enough to earn its compilation back (`XLA_MIN_STEPS`), never under mixed
    precision."""
    return not mixed_precision and train_steps >= XLA_MIN_STEPS


def use_onednn_in_xla(environ=os.environ):
    """Lets XLA's CPU backend call oneDNN for its matmuls, unless `XLA_FLAGS` already decides (call it before
    XLA's first compilation, which reads the flags).

    >>> environ = {"XLA_FLAGS": "--xla_dump_to=/tmp/x"}
    >>> use_onednn_in_xla(environ)
    >>> environ["XLA_FLAGS"]
    '--xla_dump_to=/tmp/x --xla_cpu_use_onednn=true'
    """
    _add_flag(environ, "XLA_FLAGS", "--xla_cpu_use_onednn", "true")


def cache_xla_compilations(environ=os.environ):
    """Keeps XLA's compiled programs in `~/.cache/electra_tf/xla/tf-<version>` (or under `$XDG_CACHE_HOME`), so a
    later run of the same shapes loads its step, unless `TF_XLA_FLAGS` already names a cache (call it before XLA's
    first compilation).

    >>> environ = {"XDG_CACHE_HOME": "/tmp/cache"}
    >>> cache_xla_compilations(environ)
    >>> environ["TF_XLA_FLAGS"]  # doctest: +ELLIPSIS
    '--tf_xla_persistent_cache_directory=/tmp/cache/electra_tf/xla/tf-...'
    """
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    directory = os.path.join(base, "electra_tf", "xla", f"tf-{metadata.version('tensorflow')}")
    _add_flag(environ, "TF_XLA_FLAGS", "--tf_xla_persistent_cache_directory", directory)


def _add_flag(environ, variable, flag, value):
    flags = environ.get(variable, "")
    if flag not in flags:
        environ[variable] = f"{flags} {flag}={value}".strip()


@contextlib.contextmanager
def graph_optimizer(enabled):
    """Grappler on or off for the functions first run inside the block (process-wide: the previous setting comes
    back on exit).

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
    """The switches, with the pre-training step's defaults: `shared_trace` (`shared_trace.SharedTrace`),
    `jit_compile` (XLA with oneDNN's matmuls; None: where it pays, `xla_pays`), `graph_optimizer` (Grappler)."""

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
        """The process-wide switches while the `with` block runs: XLA's flags and Grappler."""
        if self.jit_compile:
            use_onednn_in_xla()
            cache_xla_compilations()
        with graph_optimizer(self.graph_optimizer):
            yield
