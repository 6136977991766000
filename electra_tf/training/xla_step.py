"""Whether a pre-training step is XLA-compiled by default (`xla_pays`), and XLA:CPU calling oneDNN's matmuls.

In fp32 the XLA-compiled step with oneDNN's matmuls (`--xla_cpu_use_onednn=true`) is faster than the
`tf.function` step and its first step longer by the compilation; under `mixed_bfloat16` it is slower (XLA's own CPU
code ignores the bf16 instructions oneDNN's kernels use; figures in docs/results.md). So a run is compiled by XLA
in fp32 when it is long enough to earn the compilation back (`XLA_MIN_STEPS`, with a wide margin), and never under
mixed precision.
`electra-pretrain --jit_compile` / `--nojit_compile` overrides.

Example:
>>> xla_pays(mixed_precision=False, train_steps=1_000_000), xla_pays(mixed_precision=True, train_steps=1_000_000)
(True, False)
>>> xla_pays(mixed_precision=False, train_steps=10)  # a smoke run: not worth the compilation
False
"""

import os

XLA_MIN_STEPS = 1000
_ONEDNN_FLAG = "--xla_cpu_use_onednn"


def xla_pays(mixed_precision, train_steps):
    """Whether XLA's faster step outweighs its compilation (see the module's docstring)."""
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
