"""TensorFlow's start-up notices, off for whoever asks: the console scripts, or a script of yours.

TensorFlow prints notices when it is imported (oneDNN, CPU features, CUDA
drivers) and when it first looks for devices ("failed call to cuInit" on a
machine without a GPU). They read like failures and say nothing a user of this
package can act on. Some are printed before TensorFlow reads its log level, so
`TF_CPP_MIN_LOG_LEVEL` alone cannot hide them: `quiet_tensorflow()` imports
TensorFlow with file descriptor 2 pointed at /dev/null (an import that fails
still raises its Python error) and the C++ log level defaulting to fatal errors
only (a `TF_CPP_MIN_LOG_LEVEL` you set is kept).

Importing `electra_tf` does none of this (a library leaves its host's stderr and
environment alone): the tools call `quiet_tensorflow(sys.argv)` once their flags
are parsed, and a script that wants quiet calls `quiet_tensorflow()` before it
imports TensorFlow or Keras.

Asking for the notices: `ELECTRA_TF_VERBOSE=1`, `TF_CPP_MIN_LOG_LEVEL=0`, or a
tool's `--verbosity=0` (absl's INFO) or higher.

Example:
>>> wants_tensorflow_notices(["electra-pretrain", "--verbosity=1"], {})
True
>>> wants_tensorflow_notices(["electra-pretrain"], {})
False
"""

import contextlib
import os
import sys


def wants_tensorflow_notices(argv, environ):
    """Whether the user asked for TensorFlow's notices (see the module docstring)."""
    if environ.get("TF_CPP_MIN_LOG_LEVEL") == "0" or environ.get("ELECTRA_TF_VERBOSE", "") not in ("", "0"):
        return True
    for i, argument in enumerate(argv):
        value = argument.split("=", 1)[1] if argument.startswith("--verbosity=") else \
            argv[i + 1] if argument in ("--verbosity", "-v") and i + 1 < len(argv) else None
        if value is not None:
            try:
                return int(value) >= 0
            except ValueError:
                return value.lower() in ("info", "debug")
    return False


@contextlib.contextmanager
def silenced_stderr():
    """File descriptor 2 (what C++ writes to) goes to /dev/null inside the block."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def quiet_tensorflow(argv=()):
    """Imports TensorFlow (and tensorflow-text and Keras) without its start-up notices, unless the command line
    `argv` or the environment asks for them (`wants_tensorflow_notices`); nothing to do once TensorFlow is in."""
    if "tensorflow" in sys.modules or wants_tensorflow_notices(argv, os.environ):
        quiet = contextlib.nullcontext()
    else:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        quiet = silenced_stderr()
    with quiet:
        import keras  # noqa: F401
        import tensorflow  # noqa: F401
        import tensorflow_text  # noqa: F401
