"""One writer per output folder: an exclusive lock a run holds while it writes there.

The lock is the file `.<name>.lock` beside the folder (a folder replaced whole would take a lock inside it along),
held with `fcntl.flock`, which the kernel drops when its holder dies: a dead run's lock is taken over, a live one's
refused naming its pid. Re-entrant within a process; local folders only (`gs://…` is not locked).

Example:
>>> import os, tempfile
>>> folder = os.path.join(tempfile.mkdtemp(), "run")
>>> with lock_folder(folder) as lock:
...     holder(folder)["pid"] == os.getpid()
True
>>> holder(folder) is None  # released: the lock file is gone
True
"""

import contextlib
import datetime
import errno
import fcntl
import json
import os
import socket

_HELD = {}  # lock file path → the FolderLock this process holds on it


class FolderBusyError(FileExistsError):
    """Another live process holds the folder's lock."""


def lock_path(folder):
    """The lock file of `folder`: `.<name>.lock` beside it."""
    folder = os.path.abspath(os.fspath(folder)).rstrip(os.sep)
    return os.path.join(os.path.dirname(folder), f".{os.path.basename(folder)}.lock")


def holder(folder):
    """What the lock file of `folder` says of its holder (`pid`, `host`, `since`), or None without one."""
    with contextlib.suppress(OSError, ValueError):
        with open(lock_path(folder), encoding="utf-8") as f:
            return json.load(f)
    return None


class FolderLock:
    """The lock on one folder, held by this process."""

    def __init__(self, folder, path, fd, created=()):
        self.folder, self.path, self._fd, self._depth = folder, path, fd, 1
        self._created = created  # the folders lock_folder made for the lock file, deepest first

    def release(self):
        self._depth -= 1
        if self._depth > 0 or self._fd is None:
            return
        del _HELD[self.path]
        with contextlib.suppress(FileNotFoundError):
            os.remove(self.path)  # while still locked: a waiting run then finds the file gone and retries
        os.close(self._fd)
        self._fd = None
        for folder in self._created:  # a refused run leaves no empty folder behind; a filled one stays
            with contextlib.suppress(OSError):
                os.rmdir(folder)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.release()
        return False


def lock_folder(folder):
    """The `FolderLock` on `folder` (which need not exist: the folders made for the lock file go on release if
    empty); `FolderBusyError` when a live process holds it."""
    folder = os.fspath(folder)
    if "://" in folder:
        return contextlib.nullcontext()
    path = lock_path(folder)
    if path in _HELD:
        _HELD[path]._depth += 1
        return _HELD[path]
    created = _missing_folders(os.path.dirname(path))
    while True:
        os.makedirs(os.path.dirname(path), exist_ok=True)  # again if another run's release removed it
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except FileNotFoundError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            os.close(fd)
            if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
            raise FolderBusyError(_busy_message(folder)) from None
        try:
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)  # the holder removed the file as we took it: lock the new one
    os.ftruncate(fd, 0)
    os.write(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                             "since": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
                             }).encode())
    _HELD[path] = FolderLock(folder, path, fd, created)
    return _HELD[path]


def _missing_folders(folder):
    missing = []
    while folder and not os.path.exists(folder):
        missing.append(folder)
        folder = os.path.dirname(folder)
    return missing


def _busy_message(folder):
    who = holder(folder) or {}
    where = f" on {who['host']}" if who.get("host") and who.get("host") != socket.gethostname() else ""
    since = f", since {who['since']}" if who.get("since") else ""
    return (f"{folder} is being written by another run (pid {who.get('pid', '?')}{where}{since}); wait for it "
            "to end, or use another folder")


def release_all():
    """Releases every folder lock this process holds."""
    for lock in list(_HELD.values()):
        lock._depth = 1
        lock.release()
