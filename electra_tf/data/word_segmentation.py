"""Word boundaries of CJK text for whole-word masking (docs/chinese.md), found by jieba when shards are built, in
worker processes that import jieba and nothing of TensorFlow. BERT makes every ideograph a token of its own, so
a line is cut into runs of ideographs and the text between (`word_runs`), whose tokens are the line's; a
character continues a word when jieba put it in the same all-ideograph word as the one before (as `chinese_ref`).

Example:
>>> word_runs("我们去Beijing看长城。", ["我们", "去", "Beijing", "看", "长城", "。"])
[('我们去', [0, 1, 0]), ('Beijing', None), ('看长城', [0, 0, 1]), ('。', None)]
>>> list(WordCutter(processes=1).runs_of_batches([("batch 0", ["我们去看长城", "ELECTRA"])]))
[('batch 0', [[('我们去看长城', [0, 1, 0, 0, 0, 1])], [('ELECTRA', None)]])]
"""

import builtins
import collections
import itertools
import json
import logging
import os
import queue
import re
import signal
import subprocess
import sys
import threading

from electra_tf.text.cjk import PYTHON_CJK_IDEOGRAPH

SEGMENTER = "jieba"
INSTALL_HINT = 'pip install jieba, or pip install ".[chinese]" in an electra_tf checkout'
# Batches given to the workers before the builder waits for the first of them, per worker process.
BATCHES_AHEAD = 2

_IDEOGRAPHS = re.compile(f"{PYTHON_CJK_IDEOGRAPH}+")


def has_cjk(text):
    """Whether `text` holds a CJK ideograph (as BERT's tokenizer counts them).

    >>> has_cjk("ELECTRA 中文"), has_cjk("ELECTRA")
    (True, False)
    """
    return _IDEOGRAPHS.search(text) is not None


def cjk_share(texts):
    """The share of CJK ideographs among the non-space characters of `texts` (0.0 for none).

    >>> cjk_share(["ab 中", "文"])
    0.5
    """
    characters = "".join("".join(text.split()) for text in texts)
    return sum(len(run) for run in _IDEOGRAPHS.findall(characters)) / len(characters) if characters else 0.0


def word_runs(text, words):
    """`text` as consecutive runs `(run, marks)`: a run of ideographs with its characters' marks (1: the
    character continues the word of the one before it, by `words`, the segmenter's words of `text`), or the
    text between two such runs with None."""
    continues = [0] * len(text)
    start = 0
    for word in words:
        if len(word) > 1 and _IDEOGRAPHS.fullmatch(word):
            continues[start + 1:start + len(word)] = [1] * (len(word) - 1)
        start += len(word)
    if start != len(text):
        raise ValueError(f"the word segmenter's words do not make up the text: {text[:50]!r}")
    runs, end = [], 0
    for match in _IDEOGRAPHS.finditer(text):
        if match.start() > end:
            runs.append((text[end:match.start()], None))
        runs.append((match.group(), continues[match.start():match.end()]))
        end = match.end()
    if end < len(text):
        runs.append((text[end:], None))
    return runs


def load_segmenter():
    """`(name, cut)`: the segmenter's name and version (what a manifest records) and its function from a text to
    its words; an ImportError saying how to install it when jieba is missing."""
    try:
        import jieba
    except ImportError:
        raise ImportError(f"Chinese whole-word masking needs the jieba word segmenter: {INSTALL_HINT}") from None
    jieba.setLogLevel(logging.WARNING)  # its dictionary loading is logged at DEBUG level to stderr
    return f"{SEGMENTER} {jieba.__version__}", jieba.Tokenizer().lcut


def available_cores():
    """The number of cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _runs(texts, cut):
    """Each text's `word_runs` by `cut`, or the text as one run when it holds no CJK ideograph."""
    return [word_runs(text, cut(text)) if has_cjk(text) else [(text, None)] for text in texts]


class WordCutter:
    """The `word_runs` of texts by jieba's words, found in `processes` worker processes (1: in this process)."""

    def __init__(self, processes=1):
        if processes < 1:
            raise ValueError(f"need processes >= 1, got {processes}")
        self.name, self.cut = load_segmenter()
        self.processes = processes

    def runs_of_batches(self, batches):
        """Yields `(payload, the runs of each text)` for each `(payload, texts)` of `batches`, in order. With
        worker processes (and more than one batch), up to `BATCHES_AHEAD` batches per worker are being cut while
        the caller works on those yielded."""
        batches = iter(batches)
        first = list(itertools.islice(batches, 2))
        if self.processes == 1 or len(first) < 2:
            for payload, texts in itertools.chain(first, batches):
                yield payload, _runs(texts, self.cut)
            return
        workers = [_Worker() for _ in range(self.processes)]
        try:
            waiting = collections.deque()
            for payload, texts in itertools.chain(first, batches):
                share = max(1, -(-len(texts) // self.processes))  # each worker a part of the batch
                waiting.append((payload, [worker.send(texts[start:start + share])
                                          for worker, start in zip(workers, range(0, len(texts), share))]))
                if len(waiting) > BATCHES_AHEAD * self.processes:
                    yield _collected(*waiting.popleft())
            while waiting:
                yield _collected(*waiting.popleft())
        except BaseException:  # an error, Ctrl-C, or the caller stopped early: what the workers cut is not needed
            for worker in workers:
                worker.process.kill()
            raise
        finally:
            for worker in workers:
                worker.close()


def _collected(payload, workers):
    return payload, [runs for worker in workers for runs in worker.receive()]


class _Worker:
    """`python -m electra_tf.data.word_segmentation`: batches of texts in, their runs out, a JSON line each through
    standard input and output; not multiprocessing's, which would import the caller's main script again."""

    def __init__(self):
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # finds electra_tf
        path = os.pathsep.join(filter(None, (root, os.environ.get("PYTHONPATH"))))
        self.process = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": path})
        self.outbox, self.results = queue.Queue(), queue.Queue()
        # Written and read by threads of their own, so that neither process waits on a full pipe.
        threading.Thread(target=self._write, daemon=True).start()
        threading.Thread(target=self._read, daemon=True).start()

    def _write(self):
        try:
            for texts in iter(self.outbox.get, None):
                self.process.stdin.write(_json_line(texts))
                self.process.stdin.flush()
            self.process.stdin.close()
        except OSError:  # the worker ended: `receive` says so
            pass

    def _read(self):
        try:
            for line in self.process.stdout:
                self.results.put(json.loads(line))
        except (OSError, ValueError):
            pass
        self.results.put(None)  # the worker ended

    def send(self, texts):
        self.outbox.put(texts)
        return self

    def receive(self):
        """The runs of the oldest batch sent and not yet received; its error, raised here."""
        result = self.results.get()
        if result is None:
            raise RuntimeError(f"a word segmenter worker process ended (exit code {self.process.wait()}); "
                               "its error is printed above")
        if "error" in result:
            name, message = result["error"]
            error = getattr(builtins, name, None)
            raise (error if isinstance(error, type) and issubclass(error, Exception) else RuntimeError)(
                f"in a word segmenter worker: {message}")
        return result["runs"]

    def close(self):
        """Ends the worker: its input is closed, and it exits."""
        self.outbox.put(None)
        self.process.wait()


def _serve():
    """A worker's loop: a JSON line of texts in, a JSON line of their runs (or the error) out."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the builder's: it ends us by closing our input
    os.nice(5)  # the builder, which tokenizes what we cut, runs first: with a core per worker, it would wait
    cut = load_segmenter()[1]
    for line in sys.stdin.buffer:
        try:
            result = {"runs": _runs(json.loads(line), cut)}
        except Exception as error:  # sent to the builder, which raises it
            result = {"error": [type(error).__name__, str(error)]}
        try:
            sys.stdout.buffer.write(_json_line(result))
            sys.stdout.buffer.flush()
        except BrokenPipeError:  # the builder is gone: nothing to answer (and, as Python's docs advise, no
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # flush error at exit either)
            return



def _json_line(value):
    return json.dumps(value, ensure_ascii=False).encode("utf-8") + b"\n"


if __name__ == "__main__":
    _serve()
