r"""WordPiece vocabulary files (`vocab.txt`, one token a line, id = line index, holding the special tokens
[PAD] [UNK] [CLS] [SEP] [MASK] anywhere): validated, read as transformers reads them, written atomically, and
fingerprinted by their tokens (so a copy with a byte-order mark or `\r\n` line endings is the same vocabulary).

Example:
>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "vocab.txt")
>>> save_vocabulary(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the"], path)
>>> load_vocabulary(path)[-1], vocabulary_hash(path)[:12]
('the', 'fd4c97618db7')
>>> validate_vocabulary(["[PAD]", "the"], source="mine.txt")
Traceback (most recent call last):
...
ValueError: mine.txt: missing special token(s) ['[UNK]', '[CLS]', '[SEP]', '[MASK]']; an ELECTRA vocabulary
needs all of ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']
"""

import collections
import functools
import hashlib
import logging
import unicodedata

from electra_tf.util.atomic import write_text

logger = logging.getLogger("electra_tf")

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
VOCAB_FILE = "vocab.txt"
# What the tokenizer splits text at or removes: a token holding one is never produced.
_SPLIT_OR_REMOVED = {"Zs", "Zl", "Zp", "Cc", "Cf", "Co", "Cs"}


def is_unreachable(token):
    r"""Whether the tokenizer never produces `token`: empty, or holding whitespace or a removed character.

    >>> is_unreachable("\u2028"), is_unreachable("##\u2028"), is_unreachable("## "), is_unreachable("，")
    (True, True, True, False)
    """
    return not token or any(c.isspace() or c == "\ufffd" or unicodedata.category(c) in _SPLIT_OR_REMOVED
                            for c in token)


def validate_vocabulary(vocabulary, source="vocabulary"):
    """Raises a ValueError naming what is wrong: empty, duplicates, missing special tokens, a token holding a
    line break (a `vocab.txt` cannot store it: the ids after it would shift)."""
    if not vocabulary:
        raise ValueError(f"{source}: the vocabulary is empty")
    duplicates = [token for token, n in collections.Counter(vocabulary).items() if n > 1]
    if duplicates:
        raise ValueError(f"{source}: {len(duplicates)} duplicate token(s), e.g. {duplicates[:5]}")
    missing = [token for token in SPECIAL_TOKENS if token not in set(vocabulary)]
    if missing:
        raise ValueError(f"{source}: missing special token(s) {missing}; an ELECTRA vocabulary "
                         f"needs all of {list(SPECIAL_TOKENS)}")
    broken = [i for i, token in enumerate(vocabulary) if "\n" in token or token.endswith("\r")]
    if broken:
        raise ValueError(f"{source}: token(s) holding a line break at id(s) {broken[:5]} (e.g. "
                         f"{vocabulary[broken[0]]!r}): a vocab.txt holds one token a line")


@functools.cache
def _warn_once(message):
    """Logs `message` the first time only (tools read the same vocabulary several times)."""
    logger.warning(message)


def load_vocabulary(path):
    r"""Reads and validates a `vocab.txt`: one token per `\n`, as transformers reads it (U+2028 does not end a
    line); a byte-order mark and `\r` ignored, ASCII spaces around a token stripped with a warning unless the
    stripped token is in the file already; tokens never produced (`is_unreachable`) kept with a warning."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            text = f.read()
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: a vocabulary file must be UTF-8 ({e})") from None
    except IsADirectoryError:
        raise ValueError(f"{path}: a folder, not a vocab.txt file") from None
    lines = [line.removesuffix("\r") for line in text.removesuffix("\n").split("\n")] if text else []
    stripped = [line.strip(" \t") for line in lines]
    # A stripped token must not repeat another one: it keeps its spaces then (and is never produced).
    repeats = collections.Counter(stripped) + collections.Counter(set(lines))
    vocabulary = [token if token and repeats[token] == 1 else line for line, token in zip(lines, stripped)]
    padded = [i for i, (line, token) in enumerate(zip(lines, vocabulary)) if line != token]
    if padded:
        _warn_once(f"{path}: {len(padded)} token(s) had spaces around them, which the tokenizer could never "
                   f"match; stripped (line {padded[0] + 1}: {lines[padded[0]]!r})")
    validate_vocabulary(vocabulary, source=path)
    unreachable = [i for i, token in enumerate(vocabulary) if is_unreachable(token)]
    if unreachable:
        _warn_once(f"{path}: {len(unreachable)} token(s) the tokenizer never produces (empty, or holding "
                   f"whitespace or a control character) kept at their ids (line {unreachable[0] + 1}: "
                   f"{vocabulary[unreachable[0]]!r})")
    return vocabulary


def save_vocabulary(vocabulary, path):
    """Writes `vocab.txt` atomically."""
    vocabulary = list(vocabulary)
    validate_vocabulary(vocabulary, source=path)
    write_text(path, "".join(token + "\n" for token in vocabulary))


def vocabulary_hash(vocabulary):
    """SHA-256 of a vocabulary's tokens (a `vocab.txt` path or a list) as `save_vocabulary` writes them: the
    fingerprint shard manifests record, so that a vocabulary meeting other data is caught."""
    if isinstance(vocabulary, str):
        vocabulary = load_vocabulary(vocabulary)
    return hashlib.sha256("".join(token + "\n" for token in vocabulary).encode("utf-8")).hexdigest()
