"""WordPiece vocabulary files (`vocab.txt`): validated, read, written atomically, and fingerprinted.

A vocabulary is one token a line (id = line index) and holds at least the
special tokens [PAD] [UNK] [CLS] [SEP] [MASK]. The released BERT/ELECTRA
vocabulary (30,522 entries, [PAD]=0, [UNK]=100, [CLS]=101, [SEP]=102,
[MASK]=103) is accepted as is; vocabularies built here put the special tokens
first.

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
import hashlib

from electra_tf.atomic import write_text

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
VOCAB_FILE = "vocab.txt"


def validate_vocabulary(vocabulary, source="vocabulary"):
    """Raises a ValueError naming what is wrong: empty, duplicates, missing special tokens, blank lines."""
    if not vocabulary:
        raise ValueError(f"{source}: the vocabulary is empty")
    duplicates = [token for token, n in collections.Counter(vocabulary).items() if n > 1]
    if duplicates:
        raise ValueError(f"{source}: {len(duplicates)} duplicate token(s), e.g. {duplicates[:5]}")
    missing = [token for token in SPECIAL_TOKENS if token not in set(vocabulary)]
    if missing:
        raise ValueError(f"{source}: missing special token(s) {missing}; an ELECTRA vocabulary "
                         f"needs all of {list(SPECIAL_TOKENS)}")
    blank = [i for i, token in enumerate(vocabulary) if not token.strip()]
    if blank:
        raise ValueError(f"{source}: blank token(s) at line(s) {[i + 1 for i in blank[:5]]}")


def load_vocabulary(path):
    """Reads and validates a `vocab.txt`; returns the list of tokens (id = line index)."""
    try:
        with open(path, encoding="utf-8") as f:
            vocabulary = [line.rstrip("\r\n") for line in f]
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: a vocabulary file must be UTF-8 ({e})") from None
    except IsADirectoryError:
        raise ValueError(f"{path}: a folder, not a vocab.txt file") from None
    validate_vocabulary(vocabulary, source=path)
    return vocabulary


def save_vocabulary(vocabulary, path):
    """Writes `vocab.txt` atomically (a temporary file renamed into place)."""
    vocabulary = list(vocabulary)
    validate_vocabulary(vocabulary, source=path)
    write_text(path, "".join(token + "\n" for token in vocabulary))


def vocabulary_hash(vocabulary):
    """SHA-256 of a vocabulary (a `vocab.txt` path or a list of tokens) as its file's bytes: the fingerprint
    shard manifests and saved models record, so that a vocabulary meeting other data is caught."""
    if isinstance(vocabulary, str):
        with open(vocabulary, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    return hashlib.sha256("".join(token + "\n" for token in vocabulary).encode("utf-8")).hexdigest()
