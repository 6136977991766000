"""BERT's basic-tokenizer rules (Hugging Face `BertNormalizer` + `BertPreTokenizer`) in TensorFlow string ops:
`bert_normalize` drops control characters, turns whitespace into spaces, spaces CJK ideographs apart, strips
accents (NFD) and lower-cases; `bert_pretokenize` then splits on spaces and around punctuation, keeping it.

Example:
>>> words = bert_pretokenize(tf.constant(["Héllo, World! 3$"]), lowercase=True, strip_accents=True)
>>> [w.decode() for w in words[0].numpy()]
['hello', ',', 'world', '!', '3', '$']
"""

import tensorflow as tf
import tensorflow_text as tf_text

from electra_tf.text.cjk import CJK_IDEOGRAPH

# What is dropped: Cc without \t \n \r (those are whitespace), Cf, Co, Cs, and U+FFFD.
CONTROL = r"[\x{0}-\x{8}\x{B}\x{C}\x{E}-\x{1F}\x{7F}-\x{9F}\p{Cf}\p{Co}\p{Cs}\x{FFFD}]"
BERT_WHITESPACE = r"[\t\n\r\p{Z}]"
# The punctuation (`\p{P}`) of the CJK Symbols and Punctuation, Vertical Forms, CJK Compatibility Forms, Small
# Form Variants and Halfwidth and Fullwidth Forms blocks: 。，、！？（）《》「」： and the like.
CJK_PUNCTUATION = (r"[\x{3001}-\x{3003}\x{3008}-\x{3011}\x{3014}-\x{301F}\x{3030}\x{303D}\x{FE10}-\x{FE19}"
                   r"\x{FE30}-\x{FE52}\x{FE54}-\x{FE61}\x{FE63}\x{FE68}\x{FE6A}\x{FE6B}\x{FF01}-\x{FF03}"
                   r"\x{FF05}-\x{FF0A}\x{FF0C}-\x{FF0F}\x{FF1A}\x{FF1B}\x{FF1F}\x{FF20}\x{FF3B}-\x{FF3D}\x{FF3F}"
                   r"\x{FF5B}\x{FF5D}\x{FF5F}-\x{FF65}]")
# What is split off: ASCII 33-47, 58-64, 91-96, 123-126, and Unicode punctuation.
PUNCTUATION = r"[!-/:-@\[-`{-~\p{P}]"
# Printable ASCII and BERT's ASCII whitespace: text that only needs lower-casing.
ASCII_TEXT = r"[\t\n\r -~]*"
# A code point of no category in RE2's tables (Cn is not a class RE2 knows).
UNASSIGNED = r"[^\p{L}\p{M}\p{N}\p{P}\p{S}\p{Z}\p{C}]"


def bert_normalize(text, lowercase=True, strip_accents=None):
    """BERT's normalization of a string tensor of any shape."""
    strip_accents = lowercase if strip_accents is None else strip_accents
    text = tf.strings.regex_replace(text, CONTROL, "")
    text = tf.strings.regex_replace(text, BERT_WHITESPACE, " ")
    text = tf.strings.regex_replace(text, CJK_IDEOGRAPH, r" \0 ")
    if strip_accents:
        text = tf_text.normalize_utf8(text, "NFD")
        text = tf.strings.regex_replace(text, r"\p{Mn}", "")
    if lowercase:
        text = tf.strings.lower(text, encoding="utf-8")
    return text


def bert_pretokenize(text, lowercase=True, strip_accents=None):
    """Words of a `[batch]` string tensor, as a `[batch, (words)]` ragged string tensor."""
    text = bert_normalize(text, lowercase, strip_accents)
    return tf_text.regex_split(text, delim_regex_pattern=f" +|{PUNCTUATION}",
                               keep_delim_regex_pattern=PUNCTUATION)
