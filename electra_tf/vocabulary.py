"""WordPiece vocabulary files (`vocab.txt`): validated, read, written atomically, and fingerprinted.

A vocabulary is one token a line (id = line index) and holds at least the
special tokens [PAD] [UNK] [CLS] [SEP] [MASK]. The released BERT/ELECTRA
vocabulary (30,522 entries, [PAD]=0, [UNK]=100, [CLS]=101, [SEP]=102,
[MASK]=103) is accepted as is; vocabularies built here put the special tokens
first.

A file saved by an editor is read as the user expects: a UTF-8 byte-order mark
and Windows line endings (`\r\n`) are ignored, and spaces around a token
(which the tokenizer could never match: it splits text at spaces) are stripped
with a warning. The fingerprint (`vocabulary_hash`) is of the tokens, not the
bytes, so such a copy of a vocabulary is the same vocabulary.

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
import logging

from electra_tf.atomic import write_text

logger = logging.getLogger("electra_tf")

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
    """Reads and validates a `vocab.txt`; returns the list of tokens (id = line index). A byte-order mark and
    `\r\n` line endings are ignored; spaces around tokens are stripped, with a warning."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            lines = [line.rstrip("\n").removesuffix("\r") for line in f]
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: a vocabulary file must be UTF-8 ({e})") from None
    except IsADirectoryError:
        raise ValueError(f"{path}: a folder, not a vocab.txt file") from None
    vocabulary = [line.strip() or line for line in lines]  # a blank line stays blank, and is refused below
    padded = [i for i, (line, token) in enumerate(zip(lines, vocabulary)) if line != token]
    if padded:
        logger.warning("%s: %d token(s) had spaces around them, which the tokenizer could never match; stripped "
                       "(line %d: %r)", path, len(padded), padded[0] + 1, lines[padded[0]])
    validate_vocabulary(vocabulary, source=path)
    return vocabulary


def save_vocabulary(vocabulary, path):
    """Writes `vocab.txt` atomically (a temporary file renamed into place)."""
    vocabulary = list(vocabulary)
    validate_vocabulary(vocabulary, source=path)
    write_text(path, "".join(token + "\n" for token in vocabulary))


def vocabulary_hash(vocabulary):
    """SHA-256 of a vocabulary's tokens (a `vocab.txt` path, read by `load_vocabulary`, or a list), as the
    bytes of the file `save_vocabulary` writes: the fingerprint shard manifests record, so that a vocabulary
    meeting other data is caught. A copy with a byte-order mark or `\r\n` line endings has the same hash."""
    if isinstance(vocabulary, str):
        vocabulary = load_vocabulary(vocabulary)
    return hashlib.sha256("".join(token + "\n" for token in vocabulary).encode("utf-8")).hexdigest()
