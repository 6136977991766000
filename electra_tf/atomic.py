"""Files that appear whole or not at all: written beside their path as `<path>.tmp-<pid>`, then renamed.

A crash (or kill -9) leaves at most a `.tmp-` file, never a truncated
`path`, and an existing `path` stays as it was until the new one is complete.
Any TensorFlow filesystem works (local paths, `gs://`, ...).

Example:
>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "notes.txt")
>>> write_text(path, "one\\n")
>>> with atomic_open(path) as f:
...     _ = f.write("two\\n")
>>> open(path).read(), sorted(os.listdir(os.path.dirname(path)))
('two\\n', ['notes.txt'])
"""

import contextlib
import os

import tensorflow as tf


@contextlib.contextmanager
def atomic_open(path, mode="w"):
    """A file opened for writing whose content replaces `path` when the block ends without an error."""
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with tf.io.gfile.GFile(tmp, mode) as f:
            yield f
        tf.io.gfile.rename(tmp, path, overwrite=True)
    finally:
        if tf.io.gfile.exists(tmp):
            tf.io.gfile.remove(tmp)


def write_text(path, text):
    """Writes `text` (UTF-8) to `path` atomically."""
    with atomic_open(path) as f:
        f.write(text)
