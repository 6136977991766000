"""What the absl tools share: `--help` that shows the tool's flags, config fields as flags, quiet libraries,
bad input as a clear exit, no silent overwrites.

A tool is one module, `<tool>.py`: its docstring (the `--help` text) and flags at the top, importing nothing that
imports TensorFlow; `run(argv)`, absl's main wrapped in `exits_cleanly_on_bad_input`, which imports what the
work needs; and `main()`, the console script: `run_tool(run, __name__)` answers `--help` and parses the flags, then
imports TensorFlow without its start-up notices (`electra_tf.util.quiet_start`) and calls `run`.
"""

import csv
import dataclasses
import errno
import functools
import logging
import os
import sys
import textwrap
import warnings

from absl import app, flags

from electra_tf.config import field_help
from electra_tf.util.folder_lock import release_all
from electra_tf.util.quiet_start import quiet_tensorflow

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
            _FLAG_TYPES[field.type.split(" ")[0]](field.name, None, field_help(field),
                                                   module_name=module)
    _CONFIG_GROUPS[module] = (config_classes, defaults)


def define_corpus_flags():
    """The corpus and runner flags the data tools share (`--input_files`, `--tfds_dataset`, `--text_field`,
    `--tfds_data_dir`, `--runner`, `--beam_options`), defined in the calling tool's module."""
    module = sys._getframe(1).f_globals["__name__"]
    flags.DEFINE_string("input_files", None, "Comma-separated globs of corpus files (or folders): text (.gz "
                        "too), .jsonl, .parquet.", module_name=module)
    flags.DEFINE_string("tfds_dataset", None, "A TFDS dataset as <name>[:<split>], read after --input_files.",
                        module_name=module)
    flags.DEFINE_string("text_field", "text", "The JSONL field, Parquet column or TFDS feature holding the text.",
                        module_name=module)
    flags.DEFINE_string("tfds_data_dir", None, "Where TFDS datasets are prepared.", module_name=module)
    flags.DEFINE_enum("runner", "local", ["local", "beam"], "local: this machine's processes; beam: an Apache "
                      "Beam pipeline (pip install -e '.[beam]').", module_name=module)
    flags.DEFINE_string("beam_options", None, "With --runner=beam: Beam pipeline flags, e.g. "
                        "'--direct_num_workers=2 --direct_running_mode=multi_processing' or '--runner=DataflowRunner "
                        "--project=...' (default: the in-process DirectRunner).", module_name=module)


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
    """Library INFO noise off (absl's, TensorFlow's and Beam's loggers, Keras's and TensorFlow's warnings) unless
    `--verbosity` is given: the tools print their own progress and results."""
    if not flags.FLAGS["verbosity"].present:
        flags.FLAGS.verbosity = -1  # absl's app.run turns an unset verbosity into INFO; WARNING is its default
        logging.getLogger("tensorflow").setLevel(logging.ERROR)
        logging.getLogger("apache_beam").setLevel(logging.ERROR)  # --runner=beam: every worker's step
        warnings.filterwarnings("ignore", module="keras")
        warnings.filterwarnings("ignore", module="tensorflow")


def run_tool(main, flags_module):
    """Runs a tool's absl `main` once the flags of `flags_module` (a module name) are parsed and TensorFlow is
    imported without its start-up notices (unless asked for: `--verbosity`); `--help` prints the tool's own flags
    and the config fields with defaults, before any of that.

    A flag error (misspelt, missing, out of range: absl's validators) is bad input: one `error:` line, exit 2.
    A Ctrl-C before `main`'s own handling (`exits_cleanly_on_bad_input`) starts, while TensorFlow imports, is one
    line and exit 130.
    """
    if any(argument in HELP_FLAGS for argument in sys.argv[1:]):
        print(tool_help(flags_module, os.path.basename(sys.argv[0])))
        sys.exit(0)
    def started(argv):
        quiet_tensorflow(sys.argv)
        return main(argv)

    try:
        app.run(started, flags_parser=_parse_flags)
    except KeyboardInterrupt:
        print("\ninterrupted while starting up: nothing was done", file=sys.stderr)
        sys.exit(INTERRUPTED_EXIT_CODE)


def _parse_flags(argv):
    """absl's flag parsing, with its errors as the tools' other input errors: one line, exit 2."""
    try:
        return flags.FLAGS(argv)
    except flags.Error as error:
        print(f"error: {' '.join(str(error).split())} (--help lists the flags)", file=sys.stderr)
        sys.exit(2)


def config_overrides(config_class):
    """The fields of `config_class` given on the command line, as a dict."""
    return {f.name: flags.FLAGS[f.name].value for f in dataclasses.fields(config_class)
            if flags.FLAGS[f.name].present}


WRITE_FAILED_EXIT_CODE = 74  # sysexits' EX_IOERR
INTERRUPTED_EXIT_CODE = 130  # the shell's for Ctrl-C
PREEMPTED_EXIT_CODE = 75  # a pre-training stopped by SIGTERM or Ctrl-C, saved: a re-run resumes (sysexits' EX_TEMPFAIL)
# How a failed write (full disk, quota, file-size limit) reads in OSError and TensorFlow's errors.
_WRITE_FAILURES = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
_WRITE_FAILURE_TEXTS = ("No space left on device", "Disk quota exceeded", "File too large")


def _is_write_failure(error):
    if isinstance(error, OSError) and error.errno in _WRITE_FAILURES:
        return True
    return any(t in str(error) for t in _WRITE_FAILURE_TEXTS)  # TensorFlow's, h5py's, safetensors' errors


# TensorFlow's file errors (tf.io.gfile, tf.data, checkpoints) and safetensors' name a path that is missing,
# unreadable or of the wrong kind. Known by name: importing tensorflow here would slow down `--help`.
_TENSORFLOW_INPUT_ERRORS = ("NotFoundError", "PermissionDeniedError", "FailedPreconditionError",
                            "AlreadyExistsError", "UnimplementedError")
_OS_ERROR_HINTS = {PermissionError: "check its permissions, or choose another path",
                   NotADirectoryError: "a file stands where a folder is needed",
                   IsADirectoryError: "a folder stands where a file is needed",
                   FileNotFoundError: "it does not exist"}


def bad_input_message(error):
    """The one line that says what is wrong with the input behind `error`, or None for an error that is no
    bad input (a bug, which keeps its traceback).

    >>> bad_input_message(PermissionError(13, "Permission denied", "/data/out"))
    '/data/out: Permission denied (check its permissions, or choose another path)'
    >>> bad_input_message(KeyError("x")) is None
    True
    """
    if isinstance(error, OSError) and error.filename is not None:
        path = f"{error.filename}" + (f" → {error.filename2}" if error.filename2 is not None else "")
        hint = next((text for cls, text in _OS_ERROR_HINTS.items() if isinstance(error, cls)), None)
        return f"{path}: {error.strerror}" + (f" ({hint})" if hint else "")
    name = type(error).__name__
    if type(error).__module__.startswith("tensorflow") and name in _TENSORFLOW_INPUT_ERRORS:
        return (getattr(error, "message", None) or str(error)).strip().splitlines()[0]
    if isinstance(error, (ValueError, OSError, FloatingPointError, csv.Error)) or name == "SafetensorError":
        return str(error).strip() or name
    return None


def exits_cleanly_on_bad_input(main):
    """Wraps an absl `main`: bad input (or a non-finite loss) ends the run with one `error: …` line and exit
    code 2 (`bad_input_message`: our ValueErrors, and the file errors of the OS, csv, TensorFlow and
    safetensors, each naming its path); a write that fails for lack of space ends it with `error: …` and exit
    code 74.

    Every tool writes its outputs atomically, so what was complete before the failure is kept, and
    re-running the same command after freeing space continues from there.
    """
    @functools.wraps(main)
    def wrapped(argv):
        quiet_libraries()
        try:
            return main(argv)
        except KeyboardInterrupt as e:  # a tool may say what a re-run does (`KeyboardInterrupt("...")`)
            said = str(e) or "outputs completed before are kept; re-run the same command to continue"
            print(f"\ninterrupted: {said}", file=sys.stderr)
            sys.exit(INTERRUPTED_EXIT_CODE)
        except Exception as e:  # noqa: BLE001 (re-raised unless it is bad input or a failed write)
            if _is_write_failure(e):
                message = getattr(e, "message", None) or str(e)
                print(f"error: a write failed ({message.splitlines()[0]}). Outputs completed before it are kept; "
                      "free some space and re-run the same command to continue.", file=sys.stderr)
                sys.exit(WRITE_FAILED_EXIT_CODE)
            message = bad_input_message(e)
            if message is None:
                raise
            print(f"error: {message}", file=sys.stderr)
            sys.exit(2)
        finally:
            release_all()  # the folder locks `main` took (`electra_tf.util.folder_lock`)
    return wrapped


def resolve_checkpoint_flags(*names):
    """Gives each of these flags that holds a Hugging Face hub id (and is no local path) the model's local folder,
    from the cache or downloaded (`electra_tf.checkpoints.hub.resolve`), so a tool reads it like any folder and an
    id that does not resolve ends the run in one line before any work."""
    from electra_tf.checkpoints.hub import resolve  # (huggingface_hub's import, 0.8 s: not for --help)

    for name in names:
        if flags.FLAGS[name].value:
            flags.FLAGS[name].value = resolve(flags.FLAGS[name].value)


def ensure_new_output(path, overwrite):
    """Refuses to replace an existing output unless `--overwrite` was given."""
    if os.path.exists(path) and not overwrite:
        raise FileExistsError(f"{path} exists; pass --overwrite to replace it")


def define_hub_flags():
    """--push_to_hub and its options, for a tool whose output is a model folder or an export."""
    flags.DEFINE_string("push_to_hub", None, "Push the output to this Hugging Face hub repository (<owner>/<name>; "
                        "created if missing, with a README.md model card).")
    flags.DEFINE_string("hub_token", None, "--push_to_hub: a token with write access (default: HF_TOKEN or the "
                        "one `hf auth login` saved).")
    flags.DEFINE_bool("hub_private_repo", False, "--push_to_hub: create the repository private.")
    flags.DEFINE_string("hub_revision", None, "--push_to_hub: the branch to push to (created if missing; "
                        "default main).")


def check_hub_flags():
    """Refuses, before any work, a --push_to_hub that cannot happen (offline, not a repository id, no token or one
    the hub refuses): the repository is made first, as transformers' Trainer makes it."""
    from electra_tf.checkpoints.publish import create_repository  # (huggingface_hub's import: not for --help)

    for name in ("hub_token", "hub_private_repo", "hub_revision"):
        if flags.FLAGS[name].present and not flags.FLAGS.push_to_hub:
            raise ValueError(f"--{name} is an option of --push_to_hub, which was not given")
    if flags.FLAGS.push_to_hub:
        create_repository(flags.FLAGS.push_to_hub, flags.FLAGS.hub_token, flags.FLAGS.hub_private_repo or None,
                          flags.FLAGS.hub_revision)


def push_output(folder):
    """Pushes `folder` to --push_to_hub (when given) and says where it went."""
    from electra_tf.checkpoints.publish import push_to_hub

    if flags.FLAGS.push_to_hub:
        url = push_to_hub(folder, flags.FLAGS.push_to_hub, token=flags.FLAGS.hub_token,
                          private=flags.FLAGS.hub_private_repo or None, revision=flags.FLAGS.hub_revision)
        print(f"pushed {folder} to {flags.FLAGS.push_to_hub}: {url}", flush=True)


def command_line(program):
    """The command that ran, as the user typed its flags (for a model card; never the hub token)."""
    values = {name: flags.FLAGS[name].value for name in flags.FLAGS if flags.FLAGS[name].present}
    return " ".join([program, *(f"--{name}={','.join(map(str, value)) if isinstance(value, list) else value}"
                                for name, value in values.items() if name != "hub_token")])
