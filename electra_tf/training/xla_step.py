"""Whether a pre-training step is XLA-compiled by default (`xla_pays`), XLA's CPU backend calling oneDNN, and
XLA's compiled programs kept across runs (`cache_xla_compilations`: a run of the same shapes loads its step).

In fp32 XLA with oneDNN's matmuls makes the step faster once its compilation is paid; under mixed precision it
makes it slower (what it buys: docs/results.md, "What each speed mechanism buys"). `training.speed.StepSpeed`
chooses it; `electra-pretrain --jit_compile` / `--nojit_compile` overrides.

Example:
>>> xla_pays(mixed_precision=False, train_steps=1_000_000), xla_pays(mixed_precision=True, train_steps=1_000_000)
(True, False)
>>> xla_pays(mixed_precision=False, train_steps=10)  # a smoke run: not worth the compilation
False
"""

import os
from importlib import metadata

XLA_MIN_STEPS = 1000
_ONEDNN_FLAG = "--xla_cpu_use_onednn"
_CACHE_FLAG = "--tf_xla_persistent_cache_directory"


def xla_pays(mixed_precision, train_steps):
    """XLA in fp32 for a run long enough to earn its compilation back (`XLA_MIN_STEPS`), never under mixed
    precision."""
    return not mixed_precision and train_steps >= XLA_MIN_STEPS


def use_onednn_in_xla(environ=os.environ):
    """Lets XLA's CPU backend call oneDNN for its matmuls (`XLA_FLAGS`), unless `XLA_FLAGS` already decides.

    XLA reads its flags at its first compilation in the process, so call this before.

    >>> environ = {"XLA_FLAGS": "--xla_dump_to=/tmp/x"}
    >>> use_onednn_in_xla(environ)
    >>> environ["XLA_FLAGS"]
    '--xla_dump_to=/tmp/x --xla_cpu_use_onednn=true'
    """
    flags = environ.get("XLA_FLAGS", "")
    if _ONEDNN_FLAG not in flags:
        environ["XLA_FLAGS"] = f"{flags} {_ONEDNN_FLAG}=true".strip()


def cache_xla_compilations(environ=os.environ, directory=None):
    """Keeps XLA's compiled programs in `directory` (default: `~/.cache/electra_tf/xla/tf-<version>`, or under
    `$XDG_CACHE_HOME`), so that a later run of the same shapes loads its step instead of compiling it again
    (TensorFlow's persistent cache, `TF_XLA_FLAGS`), unless `TF_XLA_FLAGS` already names a cache.

    TensorFlow reads it at XLA's first compilation in the process, so call this before.

    >>> environ = {"XDG_CACHE_HOME": "/tmp/cache"}
    >>> cache_xla_compilations(environ)
    >>> environ["TF_XLA_FLAGS"]  # doctest: +ELLIPSIS
    '--tf_xla_persistent_cache_directory=/tmp/cache/electra_tf/xla/tf-...'
    """
    flags = environ.get("TF_XLA_FLAGS", "")
    if _CACHE_FLAG not in flags:
        base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        directory = directory or os.path.join(base, "electra_tf", "xla", f"tf-{metadata.version('tensorflow')}")
        environ["TF_XLA_FLAGS"] = f"{flags} {_CACHE_FLAG}={directory}".strip()
