"""WordPiece vocabularies and the in-graph ELECTRA/BERT tokenizer (keras-hub on tensorflow-text).

A vocabulary is a `vocab.txt`, one token a line, holding at least the special
tokens [PAD] [UNK] [CLS] [SEP] [MASK]. The released BERT/ELECTRA vocabulary
(30,522 entries, [PAD]=0, [UNK]=100, [CLS]=101, [SEP]=102, [MASK]=103) is
accepted as is; vocabularies built here put the special tokens first.

Example:
>>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox", "##es", "."]
>>> tokenizer = ElectraTokenizer(vocab)
>>> tokenizer("The foxes.").numpy().tolist()
[5, 6, 7, 8]
>>> batch = tokenizer.encode(["The fox."], sequence_length=6)
>>> batch["input_ids"].numpy().tolist(), batch["attention_mask"].numpy().tolist()
([[2, 5, 6, 8, 3, 0]], [[1, 1, 1, 1, 1, 0]])
"""

import collections
import os

import keras
import keras_hub
import tensorflow as tf

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def validate_vocabulary(vocabulary, source="vocabulary"):
    """Raises a ValueError naming what is wrong: empty, duplicates, missing special tokens."""
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
    validate_vocabulary(vocabulary, source=path)
    return vocabulary


def save_vocabulary(vocabulary, path):
    """Writes `vocab.txt` atomically (a temporary file renamed into place)."""
    validate_vocabulary(vocabulary, source=path)
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.writelines(token + "\n" for token in vocabulary)
    os.replace(tmp, path)


def build_vocabulary(data, vocab_size, lowercase=True, strip_accents=True):
    """Learns a WordPiece vocabulary with tensorflow-text's learner (via keras-hub).

    Args:
        data: a list of text file paths, or a `tf.data.Dataset` of strings.
        vocab_size: the maximum size, special tokens included.

    Returns:
        The tokens, the five special tokens first; fewer than `vocab_size`
        when the corpus has fewer distinct pieces.
    """
    if vocab_size <= len(SPECIAL_TOKENS):
        raise ValueError(f"vocab_size must exceed the {len(SPECIAL_TOKENS)} special tokens, got {vocab_size}")
    vocabulary = keras_hub.tokenizers.compute_word_piece_vocabulary(
        data, vocab_size, lowercase=lowercase, strip_accents=strip_accents,
        reserved_tokens=list(SPECIAL_TOKENS))
    # The learner can keep exotic whitespace (e.g. U+2009) as a "word"; the
    # tokenizer splits on whitespace, so such an entry could never be used.
    vocabulary = [token for token in vocabulary if token.strip()]
    if len(vocabulary) <= len(SPECIAL_TOKENS):
        raise ValueError("the corpus yielded no word pieces: is it empty?")
    return vocabulary


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraTokenizer(keras_hub.tokenizers.ElectraTokenizer):
    """BERT/ELECTRA WordPiece tokenizer that always runs in-graph (tensorflow-text).

    Args:
        vocabulary: a list of tokens or a `vocab.txt` path.
        lowercase: lower-case the text (the released uncased models).
        strip_accents: remove accents; follows `lowercase` when `None`, as
            BERT's `BasicTokenizer` does.

    The eager call takes the same TensorFlow path that `tf.data` and a
    SavedModel take, so ids never depend on where the tokenizer runs.
    """

    def __init__(self, vocabulary=None, lowercase=True, strip_accents=None, **kwargs):
        if isinstance(vocabulary, str):
            vocabulary = load_vocabulary(vocabulary)
        elif vocabulary is not None:
            vocabulary = list(vocabulary)
            validate_vocabulary(vocabulary)
        kwargs.setdefault("_allow_python_workflow", False)
        super().__init__(vocabulary=vocabulary, lowercase=lowercase,
                         strip_accents=lowercase if strip_accents is None else strip_accents, **kwargs)

    def encode(self, texts, pairs=None, sequence_length=128):
        """Tokenizes and packs `[CLS] A [SEP] (B [SEP])` into the model's input dict.

        Returns int32 `[batch, sequence_length]` tensors `input_ids`,
        `attention_mask` and `token_type_ids`; the longer segment is truncated
        first when a pair does not fit.
        """
        packer = keras_hub.layers.MultiSegmentPacker(
            sequence_length, start_value=self.cls_token_id, end_value=self.sep_token_id,
            pad_value=self.pad_token_id, truncate="waterfall" if pairs is None else "round_robin",
            _allow_python_workflow=False)
        segments = [self(tf.convert_to_tensor(texts))]
        if pairs is not None:
            segments.append(self(tf.convert_to_tensor(pairs)))
        token_ids, segment_ids = packer(tuple(segments))
        return {"input_ids": tf.cast(token_ids, tf.int32),
                "attention_mask": tf.cast(token_ids != self.pad_token_id, tf.int32),
                "token_type_ids": tf.cast(segment_ids, tf.int32)}
