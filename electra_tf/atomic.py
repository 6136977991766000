"""Files that appear whole or not at all, and JSON read with one clear error.

A file is written beside its path as `<path>.tmp-<pid>`, then renamed: a
crash (or kill -9) leaves at most a `.tmp-` file, never a truncated `path`,
and an existing `path` stays as it was until the new one is complete. Any
TensorFlow filesystem works (local paths, `gs://`, ...); a local path is
handled without importing TensorFlow, so the tools read their configs while
parsing flags without it.

Example:
>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "notes.json")
>>> write_json(path, {"one": 1})
>>> with atomic_open(path) as f:
...     _ = f.write('{"two": 2}')
>>> read_json(path), sorted(os.listdir(os.path.dirname(path)))
({'two': 2}, ['notes.json'])
>>> write_text(path, "{not json")
>>> read_json(path)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: ...notes.json: not valid JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))
"""

import contextlib
import json
import os


def _is_remote(path):
    return "://" in str(path)


def _gfile():
    import tensorflow as tf  # only for a remote path: local files need no TensorFlow (see the docstring)

    return tf.io.gfile


def _open(path, mode):
    return _gfile().GFile(path, mode) if _is_remote(path) else open(path, mode, **(
        {} if "b" in mode else {"encoding": "utf-8"}))


@contextlib.contextmanager
def atomic_open(path, mode="w"):
    """A file opened for writing whose content replaces `path` when the block ends without an error."""
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with _open(tmp, mode) as f:
            yield f
        if _is_remote(path):
            _gfile().rename(tmp, path, overwrite=True)
        else:
            os.replace(tmp, path)
    finally:
        if _is_remote(tmp) and _gfile().exists(tmp):
            _gfile().remove(tmp)
        elif not _is_remote(tmp) and os.path.lexists(tmp):
            os.remove(tmp)


def write_text(path, text):
    """Writes `text` (UTF-8) to `path` atomically."""
    with atomic_open(path) as f:
        f.write(text)


def write_json(path, values):
    """Writes `values` as indented JSON (keys sorted), atomically."""
    write_text(path, json.dumps(values, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def read_json(path, expect=None):
    """The JSON value in `path`; a ValueError naming the file when it is empty, not UTF-8 JSON, or not of
    type `expect` (e.g. `dict`)."""
    try:
        with _open(path, "rb") as f:
            text = f.read().decode("utf-8")
        if not text.strip():
            raise ValueError(f"{path}: the file is empty")
        values = json.loads(text)
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 ({e.reason} at byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON ({e})") from None
    if expect is not None and not isinstance(values, expect):
        raise ValueError(f"{path}: expected a JSON {'object' if expect is dict else expect.__name__}, "
                         f"got {type(values).__name__}")
    return values
