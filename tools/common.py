"""What the absl tools share: turning bad input into a clear exit, and refusing to overwrite."""

import functools
import os
import sys


def exits_cleanly_on_bad_input(main):
    """Wraps an absl `main`: bad input (or a non-finite loss) ends the run with `error: …` and exit code 2."""
    @functools.wraps(main)
    def wrapped(argv):
        try:
            return main(argv)
        except (ValueError, FileNotFoundError, FileExistsError, FloatingPointError) as e:
            print(f"error: {e}", file=sys.stderr)
            sys.exit(2)
    return wrapped


def ensure_new_output(path, overwrite):
    """Refuses to replace an existing output unless `--overwrite` was given."""
    if os.path.exists(path) and not overwrite:
        raise FileExistsError(f"{path} exists; pass --overwrite to replace it")
