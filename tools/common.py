"""What the absl tools share: `--help` that shows the tool's flags, config fields as flags, quiet libraries,
bad input as a clear exit, no silent overwrites.

Each tool calls `run_tool(main)`; `main` is wrapped in `exits_cleanly_on_bad_input`.
"""

import dataclasses
import errno
import functools
import logging
import os
import sys
import textwrap
import warnings

from absl import app, flags

_FLAG_TYPES = {"int": flags.DEFINE_integer, "float": flags.DEFINE_float, "bool": flags.DEFINE_bool,
               "str": flags.DEFINE_string}
HELP_FLAGS = ("--help", "-h", "-?", "--helpshort")
# The config dataclasses whose fields each tool module offers as flags, with where their defaults come from.
_CONFIG_GROUPS = {}


def define_config_flags(*config_classes, defaults=None):
    """One flag per field of each config dataclass, unset by default (the config's value stands).

    `defaults` (a callable returning config instances, e.g. the shipped `--config` file's) says in `--help`
    what an unset flag gives."""
    module = sys._getframe(1).f_globals["__name__"]
    for cls in config_classes:
        for field in dataclasses.fields(cls):
            _FLAG_TYPES[field.type.split(" ")[0]](field.name, None, cls.FIELD_HELP[field.name],
                                                   module_name=module)
    _CONFIG_GROUPS[module] = (config_classes, defaults)


def _is_required(flag):
    return any("must have a value other than None" in getattr(validator, "message", "")
               for validator in flag.validators)


def _flag_line(flag, default_text=None):
    default = default_text if default_text is not None else repr(flag.default)
    choices = getattr(flag.parser, "enum_values", None)
    head = f"  --{flag.name}" + (f" <{'|'.join(choices)}>" if choices else "")
    help_text = (flag.help or "").split(": ", 1)[-1] if choices else (flag.help or "")
    help_text = help_text.rstrip(".") + (" (required)" if _is_required(flag) else f" (default: {default})")
    return head + "\n" + textwrap.fill(help_text, 100, initial_indent=" " * 6, subsequent_indent=" " * 6)


def tool_help(module_name, program):
    """The text of `--help`: what the tool does and an example, its own flags, then the config fields."""
    module = sys.modules[module_name]
    lines = [f"{program}: {(module.__doc__ or '').strip()}", "", "Flags:"]
    own = flags.FLAGS.get_flags_for_module(module_name)  # in the order the tool defines them
    config_names = {field.name for classes in [_CONFIG_GROUPS.get(module_name, ((), None))[0]]
                    for cls in classes for field in dataclasses.fields(cls)}
    lines += [_flag_line(flag) for flag in own if flag.name not in config_names]
    classes, defaults = _CONFIG_GROUPS.get(module_name, ((), None))
    instances = defaults() if defaults else [cls() for cls in classes]
    for cls, instance in zip(classes, instances):
        source = "the --config file's value" if defaults else "the default"
        lines += ["", f"{cls.__name__} fields (unset, each keeps {source}, shown):"]
        for field in dataclasses.fields(cls):
            value = getattr(instance, field.name)
            unset = getattr(cls, "UNSET_DEFAULTS", {}).get(field.name, "the task's")  # what None stands for
            lines.append(_flag_line(flags.FLAGS[field.name], unset if value is None else repr(value)))
    lines += ["", "Library flags (logging, ...): --helpfull."]
    return "\n".join(lines)


def quiet_libraries():
    """Library INFO noise off (absl's and TensorFlow's loggers, Keras's and TensorFlow's warnings) unless
    `--verbosity` is given: the tools print their own progress and results."""
    if not flags.FLAGS["verbosity"].present:
        flags.FLAGS.verbosity = -1  # absl's app.run turns an unset verbosity into INFO; WARNING is its default
        logging.getLogger("tensorflow").setLevel(logging.ERROR)
        warnings.filterwarnings("ignore", module="keras")
        warnings.filterwarnings("ignore", module="tensorflow")


def run_tool(main):
    """Runs a tool's absl `main`; `--help` prints the tool's own flags and the config fields with defaults."""
    if any(argument in HELP_FLAGS for argument in sys.argv[1:]):
        print(tool_help(main.__module__, os.path.basename(sys.argv[0])))
        sys.exit(0)
    app.run(main)


def config_overrides(config_class):
    """The fields of `config_class` given on the command line, as a dict."""
    return {f.name: flags.FLAGS[f.name].value for f in dataclasses.fields(config_class)
            if flags.FLAGS[f.name].present}


WRITE_FAILED_EXIT_CODE = 74  # sysexits' EX_IOERR
INTERRUPTED_EXIT_CODE = 130  # the shell's for Ctrl-C
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
        quiet_libraries()
        try:
            return main(argv)
        except (ValueError, FileNotFoundError, FileExistsError, FloatingPointError) as e:
            print(f"error: {e}", file=sys.stderr)
            sys.exit(2)
        except KeyboardInterrupt:
            print("\ninterrupted: outputs completed before are kept; re-run the same command to continue",
                  file=sys.stderr)
            sys.exit(INTERRUPTED_EXIT_CODE)
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
