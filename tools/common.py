"""What the absl tools share: config fields as flags, bad input as a clear exit, no silent overwrites."""

import dataclasses
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
