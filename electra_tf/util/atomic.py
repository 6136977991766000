"""Files and folders that appear whole or not at all, and JSON read with one clear error.

A file is written as `<path>.tmp-<pid>` and renamed over `path`; a folder is filled as `.<name>.tmp-<pid>` and
swapped in whole, so one that exists is complete. Local paths need no TensorFlow; others go through `tf.io.gfile`.

Example:
>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "notes.json")
>>> write_json(path, {"one": 1})
>>> with atomic_open(path) as f:
...     _ = f.write('{"two": 2}')
>>> read_json(path), sorted(os.listdir(os.path.dirname(path)))
({'two': 2}, ['notes.json'])
>>> folder = os.path.join(os.path.dirname(path), "model")
>>> with atomic_folder(folder) as tmp:
...     write_text(os.path.join(tmp, "a.txt"), "new")
>>> sorted(os.listdir(os.path.dirname(path)))
['model', 'notes.json']
>>> write_text(path, "{not json")
>>> read_json(path)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: ...notes.json: not valid JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))
"""

import contextlib
import ctypes
import errno
import json
import os
import re
import shutil


def _is_remote(path):
    return "://" in str(path)


def _gfile():
    import tensorflow as tf  # only for a remote path: local files need no TensorFlow (see the docstring)

    return tf.io.gfile


def _open(path, mode):
    return _gfile().GFile(path, mode) if _is_remote(path) else open(path, mode, **(
        {} if "b" in mode else {"encoding": "utf-8"}))

_LIBC = ctypes.CDLL(None, use_errno=True)
_AT_FDCWD, _RENAME_EXCHANGE = -100, 2  # <fcntl.h>, <linux/fs.h>


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


@contextlib.contextmanager
def atomic_folder(path):
    """A new empty folder to fill, which replaces the folder `path` whole (Linux `renameat2(RENAME_EXCHANGE)`,
    elsewhere two renames) when the block ends without an error; a kill at any point leaves `path` old or new."""
    path = os.path.abspath(os.fspath(path)).rstrip(os.sep)
    parent, name = os.path.split(path)
    os.makedirs(parent, exist_ok=True)
    remove_leftovers(path)
    tmp = os.path.join(parent, f".{name}.tmp-{os.getpid()}")
    old = os.path.join(parent, f".{name}.old-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    try:
        yield tmp
        if not os.path.lexists(path):
            os.rename(tmp, path)
        elif _exchange(tmp, path):
            _remove(tmp)  # what was at `path`
        else:
            os.rename(path, old)
            os.rename(tmp, path)
            _remove(old)
    finally:
        _remove(tmp)


def _remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)


def _exchange(a, b):
    """Swaps two paths atomically (Linux `renameat2`); False where the system or file system cannot."""
    renameat2 = getattr(_LIBC, "renameat2", None)
    if renameat2 is None:
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), b)


def _is_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def remove_leftovers(path):
    """Removes what dead writers left beside `path` (temporaries; an old folder set aside is put back when `path`
    is missing). This process's own pid counts as dead: a writer killed in an earlier container had it."""
    path = os.path.abspath(os.fspath(path)).rstrip(os.sep)
    parent, name = os.path.split(path)
    if not os.path.isdir(parent):
        return
    pattern = re.compile(rf"(\.{re.escape(name)}\.(?:tmp|old)|{re.escape(name)}\.tmp)-(\d+)")
    for entry in sorted(os.listdir(parent)):
        match = pattern.fullmatch(entry)
        if not match or (int(match.group(2)) != os.getpid() and _is_alive(int(match.group(2)))):
            continue
        leftover = os.path.join(parent, entry)
        if match.group(1).endswith(".old") and not os.path.lexists(path):
            os.rename(leftover, path)
        else:
            _remove(leftover)


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
