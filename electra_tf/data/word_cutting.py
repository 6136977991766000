"""jieba's words of many texts, cut in worker processes that import jieba and nothing else (no TensorFlow).

Segmenting Chinese text is most of the time of a shard build with whole-word masking (jieba is pure Python; the
tokenizer is TensorFlow's), and each text is cut on its own: `WordCutter(processes=n).cut_batches(batches)` cuts
the batches in `n` worker processes, a few batches ahead, while the builder tokenizes and packs the batches it was
given, so the build uses every core. The workers are started by multiprocessing's "spawn" method (TensorFlow,
loaded in the builder, is not fork-safe) and import only this module, which imports nothing of TensorFlow or
electra_tf: each starts in about the time jieba loads its dictionary. A corpus of one batch starts none. The words
are the same whatever the number of processes.

jieba is an optional extra (`pip install ".[chinese]"` in an electra_tf checkout), imported only when a
`WordCutter` is made (`load_segmenter`).

Example:
>>> cutter = WordCutter(processes=1)  # in this process
>>> list(cutter.cut_batches([("batch 0", ["我们去看长城"])]))
[('batch 0', [['我们', '去', '看', '长城']])]
"""

import collections
import itertools
import logging
import multiprocessing
import os

SEGMENTER = "jieba"
INSTALL_HINT = 'pip install jieba, or pip install ".[chinese]" in an electra_tf checkout'
# Batches given to the workers before the builder waits for the first of them, per worker process.
BATCHES_AHEAD = 2


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


_worker_cut = None  # a worker process's jieba, loaded by `_start_worker`


def _start_worker():
    global _worker_cut
    _worker_cut = load_segmenter()[1]


def _cut_texts(texts):
    return [_worker_cut(text) for text in texts]


class WordCutter:
    """jieba's words of texts, cut in `processes` worker processes (1: in this process).

    `name`: jieba's name and version; `cut`: its function from a text to its words, in this process.
    """

    def __init__(self, processes=1):
        if processes < 1:
            raise ValueError(f"need processes >= 1, got {processes}")
        self.name, self.cut = load_segmenter()
        self.processes = processes

    def cut_batches(self, batches):
        """Yields `(payload, the words of each text)` for each `(payload, texts)` of `batches`, in order. With
        worker processes (and more than one batch), up to `BATCHES_AHEAD` batches per worker are being cut while
        the caller works on those yielded."""
        batches = iter(batches)
        first = list(itertools.islice(batches, 2))
        if self.processes == 1 or len(first) < 2:
            for payload, texts in itertools.chain(first, batches):
                yield payload, [self.cut(text) for text in texts]
            return
        with multiprocessing.get_context("spawn").Pool(self.processes, initializer=_start_worker) as pool:
            waiting = collections.deque()
            for payload, texts in itertools.chain(first, batches):
                share = max(1, -(-len(texts) // self.processes))  # each worker a part of the batch
                waiting.append((payload, [pool.apply_async(_cut_texts, (texts[start:start + share],))
                                          for start in range(0, len(texts), share)]))
                if len(waiting) > BATCHES_AHEAD * self.processes:
                    yield _collected(*waiting.popleft())
            while waiting:
                yield _collected(*waiting.popleft())


def _collected(payload, parts):
    return payload, [words for part in parts for words in part.get()]
