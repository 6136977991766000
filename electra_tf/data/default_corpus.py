"""The embedded default corpus: English prose every Python installation already has.

The docstrings of the standard library's modules, classes and functions, read
with `ast` (nothing is imported or run), plus the language reference topics of
`pydoc_data` (the text behind `help("for")`). About 2 MB of real English, so
the demo and the tests need no download.

Each docstring (or topic) is a document; its prose paragraphs are split into
sentences, and doctest and code lines are dropped. The text format is the one
the pre-training data tools read: one sentence a line, a blank line between
documents.

Example:
>>> documents = default_corpus_documents(max_documents=3)
>>> len(documents), all(isinstance(s, str) for doc in documents for s in doc)
(3, True)
"""

import ast
import os
import re
import sysconfig

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'])")
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


def _docstrings(path):
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename=path)
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            text = ast.get_docstring(node)
            if text and len(text) >= _MIN_DOCUMENT_CHARS:
                yield text


def _pydoc_topics(path):
    """The `topics` dict literal of `pydoc_data/topics.py`, read without importing it."""
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename=path)
    except (OSError, SyntaxError):
        return
    for node in tree.body:
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
        sentences.extend(s.strip() for s in _SENTENCE_END.split(prose) if s.strip())
    return sentences


def default_corpus_documents(max_documents=None):
    """Documents (lists of sentences) in a fixed order: stdlib docstrings, then pydoc topics."""
    stdlib = sysconfig.get_paths()["stdlib"]
    texts = [text for path in _stdlib_sources() for text in _docstrings(path)]
    texts += list(_pydoc_topics(os.path.join(stdlib, "pydoc_data", "topics.py")))
    documents = []
    for text in texts:
        sentences = to_sentences(text)
        if sentences:
            documents.append(sentences)
            if max_documents is not None and len(documents) >= max_documents:
                break
    return documents


def write_default_corpus(path, max_documents=None):
    """Writes the corpus as text (a sentence a line, blank lines between documents).

    Returns the number of documents written. The file appears atomically.
    """
    documents = default_corpus_documents(max_documents)
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        for sentences in documents:
            f.writelines(sentence + "\n" for sentence in sentences)
            f.write("\n")
    os.replace(tmp, path)
    return len(documents)
