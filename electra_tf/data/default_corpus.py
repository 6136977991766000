"""The embedded default corpus: the standard library's docstrings and `pydoc_data`'s topics (about 2 MB of
English prose every Python has, read with `ast`), so the demo and the tests need no download.

Example:
>>> documents = default_corpus_documents(max_documents=3)
>>> len(documents), all(isinstance(s, str) for doc in documents for s in doc)
(3, True)
"""

import ast
import hashlib
import itertools
import json
import os
import re
import sysconfig

from electra_tf.util.atomic import atomic_open, write_text
from electra_tf.data.sentences import split_sentences

_CODE_LINE = re.compile(r"^\s*(>>>|\.\.\.|\$ |#|[{}\[\]()]|def |class |import |from \S+ import)")
_SKIPPED_DIRS = {"test", "tests", "idle_test", "site-packages", "dist-packages", "__pycache__"}
_MIN_DOCUMENT_CHARS = 80


def _stdlib_sources():
    root = sysconfig.get_paths()["stdlib"]
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in _SKIPPED_DIRS)
        for name in sorted(files):
            if name.endswith(".py"):
                yield os.path.join(directory, name)


_KINDS = {ast.Module: "module", ast.ClassDef: "class", ast.FunctionDef: "function", ast.AsyncFunctionDef: "function"}


def _parsed(path):
    """The `ast` of a source file, or None when it cannot be read or parsed."""
    try:
        with open(path, encoding="utf-8") as f:
            return ast.parse(f.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return None


def _docstrings(path):
    """(kind, docstring) of the module, classes and functions of a source file."""
    tree = _parsed(path)
    for node in ast.walk(tree) if tree else ():
        if type(node) in _KINDS:
            text = ast.get_docstring(node)
            if text and len(text) >= _MIN_DOCUMENT_CHARS:
                yield _KINDS[type(node)], text


def _pydoc_topics(path):
    """The `topics` dict literal of `pydoc_data/topics.py`, read without importing it."""
    tree = _parsed(path)
    for node in tree.body if tree else ():
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            for value in node.value.values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    yield value.value


def to_sentences(text):
    """Prose sentences of a docstring: paragraphs re-joined, code lines dropped."""
    sentences = []
    for paragraph in re.split(r"\n\s*\n", text):
        lines = [line.strip() for line in paragraph.splitlines()]
        if not lines or any(_CODE_LINE.match(line) for line in lines):
            continue
        prose = " ".join(line for line in lines if line)
        if len(prose.split()) < 3:
            continue
        sentences.extend(split_sentences(prose))
    return sentences


def default_corpus_documents(max_documents=None):
    """Documents (lists of sentences) in a fixed order: stdlib docstrings, then pydoc topics (the sources read only
    as far as `max_documents` takes)."""
    stdlib = sysconfig.get_paths()["stdlib"]
    texts = itertools.chain((text for path in _stdlib_sources() for _, text in _docstrings(path)),
                            _pydoc_topics(os.path.join(stdlib, "pydoc_data", "topics.py")))
    documents = []
    for text in texts:
        sentences = to_sentences(text)
        if sentences:
            documents.append(sentences)
            if max_documents is not None and len(documents) >= max_documents:
                break
    return documents


def write_default_corpus(path, max_documents=None):
    """Writes the corpus atomically as text (a sentence a line, blank lines between documents); returns the
    number of documents."""
    documents = default_corpus_documents(max_documents)
    with atomic_open(path) as f:
        for sentences in documents:
            f.write("".join(sentence + "\n" for sentence in sentences) + "\n")
    return len(documents)


def docstring_kinds(max_per_kind=600):
    """A labelled task from the same corpus, `(text, kind)` pairs: what a docstring (its first two sentences)
    documents (module, class or function), at most `max_per_kind` per kind."""
    examples, counts = [], {}
    for path in _stdlib_sources():
        for kind, text in _docstrings(path):
            sentences = to_sentences(text)
            if sentences and counts.get(kind, 0) < max_per_kind:
                counts[kind] = counts.get(kind, 0) + 1
                examples.append((" ".join(sentences[:2]), kind))
    return examples


def write_docstring_kinds(folder, dev_fraction=0.2, max_per_kind=600):
    """Writes `docstring_kinds` as `train.jsonl` and `dev.jsonl` (fields `text`, `label`), split by a hash of
    the text; returns their paths."""
    os.makedirs(folder, exist_ok=True)
    splits = {"train": [], "dev": []}
    for text, kind in docstring_kinds(max_per_kind):
        bucket = int(hashlib.sha1(text.encode("utf-8")).hexdigest()[:8], 16) / 16**8
        splits["dev" if bucket < dev_fraction else "train"].append(json.dumps({"text": text, "label": kind}))
    paths = {}
    for split, rows in splits.items():
        paths[split] = os.path.join(folder, f"{split}.jsonl")
        write_text(paths[split], "\n".join(rows) + "\n")
    return paths
