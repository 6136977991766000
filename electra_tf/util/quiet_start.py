"""TensorFlow's start-up notices, off for whoever asks: the tools, or a script that calls `quiet_tensorflow()`.

Some are printed before TensorFlow reads its log level, so TensorFlow is imported with file descriptor 2 on
/dev/null (`TF_CPP_MIN_LOG_LEVEL` defaulting to 3). `import electra_tf` alone leaves stderr and the environment be.

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
    """Whether TensorFlow's notices are asked for (`ELECTRA_TF_VERBOSE=1`, `TF_CPP_MIN_LOG_LEVEL=0`,
    `--verbosity` 0 or more)."""
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
    """Imports TensorFlow, tensorflow-text and Keras without their start-up notices, unless `argv` or the
    environment asks for them."""
    if "tensorflow" in sys.modules or wants_tensorflow_notices(argv, os.environ):
        quiet = contextlib.nullcontext()
    else:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        quiet = silenced_stderr()
    with quiet:
        import keras  # noqa: F401
        import tensorflow  # noqa: F401
        import tensorflow_text  # noqa: F401
