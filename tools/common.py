"""What the absl tools share: expanding input globs and turning bad input into a clear exit."""

import functools
import glob
import os
import sys


def expand_globs(patterns):
    """Sorted files matching comma-separated globs (directories expand to the files in them).

    Raises a ValueError naming the patterns when nothing matches, or when a
    match is an empty file list.
    """
    files = set()
    for pattern in (p.strip() for p in patterns.split(",") if p.strip()):
        for match in glob.glob(os.path.expanduser(pattern)):
            if os.path.isdir(match):
                files.update(os.path.join(match, f) for f in os.listdir(match)
                             if os.path.isfile(os.path.join(match, f)))
            elif os.path.isfile(match):
                files.add(match)
    if not files:
        raise ValueError(f"no input files match {patterns!r}")
    return sorted(files)


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
