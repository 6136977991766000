"""What the absl tools share: config fields as flags, bad input as a clear exit, no silent overwrites."""

import dataclasses
import errno
import functools
import os
import sys

from absl import flags

_FLAG_TYPES = {"int": flags.DEFINE_integer, "float": flags.DEFINE_float, "bool": flags.DEFINE_bool,
               "str": flags.DEFINE_string}


def define_config_flags(*config_classes):
    """One flag per field of each config dataclass, unset by default (the config's value stands)."""
    for cls in config_classes:
        for field in dataclasses.fields(cls):
            _FLAG_TYPES[field.type.split(" ")[0]](field.name, None, f"Overrides {cls.__name__}.{field.name}.")


def config_overrides(config_class):
    """The fields of `config_class` given on the command line, as a dict."""
    return {f.name: flags.FLAGS[f.name].value for f in dataclasses.fields(config_class)
            if flags.FLAGS[f.name].present}


WRITE_FAILED_EXIT_CODE = 74  # sysexits' EX_IOERR
# How a failed write (full disk, quota, file-size limit) reads in OSError and TensorFlow's errors.
_WRITE_FAILURES = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
_WRITE_FAILURE_TEXTS = ("No space left on device", "Disk quota exceeded", "File too large")


def _is_write_failure(error):
    if isinstance(error, OSError) and error.errno in _WRITE_FAILURES:
        return True
    return type(error).__module__.startswith("tensorflow") and any(t in str(error) for t in _WRITE_FAILURE_TEXTS)


def exits_cleanly_on_bad_input(main):
    """Wraps an absl `main`: bad input (or a non-finite loss) ends the run with `error: …` and exit code 2;
    a write that fails for lack of space ends it with `error: …` and exit code 74.

    Every tool writes its outputs atomically, so what was complete before the failure is kept, and
    re-running the same command after freeing space continues from there.
    """
    @functools.wraps(main)
    def wrapped(argv):
        try:
            return main(argv)
        except (ValueError, FileNotFoundError, FileExistsError, FloatingPointError) as e:
            print(f"error: {e}", file=sys.stderr)
            sys.exit(2)
        except Exception as e:  # noqa: BLE001 (re-raised unless it is a failed write)
            if not _is_write_failure(e):
                raise
            message = getattr(e, "message", None) or str(e)
            print(f"error: a write failed ({message.splitlines()[0]}). Outputs completed before it are kept; "
                  "free some space and re-run the same command to continue.", file=sys.stderr)
            sys.exit(WRITE_FAILED_EXIT_CODE)
    return wrapped


def ensure_new_output(path, overwrite):
    """Refuses to replace an existing output unless `--overwrite` was given."""
    if os.path.exists(path) and not overwrite:
        raise FileExistsError(f"{path} exists; pass --overwrite to replace it")
