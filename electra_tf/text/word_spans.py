"""BERT's words of a Python string with where each came from (what a fast tokenizer's offsets are made of):
`electra_tf.text.normalization`'s rules run per character in Python; special tokens written in the text are
kept whole, as `BertTokenizerFast` keeps them.

Example:
>>> [(text[start:end], origins) for text in ["Héllo, [MASK]!"]
...  for start, end, origins in split_words(text, lowercase=True, strip_accents=True, special_tokens=["[MASK]"])]
[('Héllo', [0, 1, 2, 3, 4]), (',', [5]), ('[MASK]', None), ('!', [13])]
"""

import functools
import re
import unicodedata

from electra_tf.text.cjk import PYTHON_CJK_IDEOGRAPH

_CJK_IDEOGRAPH = re.compile(PYTHON_CJK_IDEOGRAPH)
REMOVED_CATEGORIES = ("Cc", "Cf", "Co", "Cs")  # `normalization.CONTROL` (tab, newline, return are whitespace)
SPACE, CJK = "space", "cjk"  # `_character_kind`'s answers for a word boundary and an ideograph


def split_words(text, lowercase, strip_accents, special_tokens=()):
    """`[(start, end, origins)]`: each word's span in `text` and the index in `text` of each character of the
    normalised word (`None` for a special token)."""
    strip_accents = lowercase if strip_accents is None else strip_accents
    words, position = [], 0
    pattern = "|".join(re.escape(token) for token in sorted(special_tokens, key=len, reverse=True))
    for match in re.finditer(pattern, text) if pattern else ():
        words += _plain_words(text, position, match.start(), lowercase, strip_accents)
        words.append((match.start(), match.end(), None))
        position = match.end()
    return words + _plain_words(text, position, len(text), lowercase, strip_accents)


def _plain_words(text, start, end, lowercase, strip_accents):
    words, current = [], []

    def end_word(*alone):  # the word so far ends (and `alone`, a one-character word, follows it)
        words.extend(word for word in (current[:], list(alone)) if word)
        current.clear()

    for index in range(start, end):
        kind = _character_kind(text[index], lowercase, strip_accents)
        if kind == SPACE:
            end_word()
        elif kind == CJK:
            end_word(index)
        else:  # the normalised characters, each with whether it is punctuation (removed characters: none)
            for is_punctuation in kind:
                if is_punctuation:
                    end_word(index)
                else:
                    current.append(index)
    end_word()
    return [(origins[0], origins[-1] + 1, origins) for origins in words]


@functools.lru_cache(maxsize=1 << 16)
def _character_kind(character, lowercase, strip_accents):
    """`SPACE`, `CJK`, or per normalised character (none for a removed one) whether it is punctuation."""
    if character in "\t\n\r" or unicodedata.category(character).startswith("Z"):
        return SPACE
    if character == "\ufffd" or unicodedata.category(character) in REMOVED_CATEGORIES:
        return ()
    if _CJK_IDEOGRAPH.fullmatch(character):
        return CJK
    if strip_accents:
        character = "".join(c for c in unicodedata.normalize("NFD", character) if unicodedata.category(c) != "Mn")
    return tuple(_is_punctuation(c) for c in (character.lower() if lowercase else character))


def _is_punctuation(character):
    """ASCII punctuation and symbols (33-47, 58-64, 91-96, 123-126) and Unicode `P*`, as BERT's."""
    code = ord(character)
    return 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126 or \
        unicodedata.category(character).startswith("P")
