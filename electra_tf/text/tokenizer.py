"""The in-graph ELECTRA/BERT WordPiece tokenizer: BERT's pre-tokenization, then tensorflow-text's
`FastWordpieceTokenizer`. transformers' tokenizer API is the subclass
`electra_tf.transformers.tokenizer.ElectraTokenizer`.

Example:
>>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox", "##es", "."]
>>> tokenizer = WordPieceTokenizer(vocab)
>>> tokenizer.tokenize("The foxes.").numpy().tolist()
[5, 6, 7, 8]
>>> tokenizer(["The foxes.", "the fox"]).to_list()
[[5, 6, 7, 8], [5, 6]]
>>> batch = tokenizer.encode(["The fox."], sequence_length=6)
>>> batch["input_ids"].numpy().tolist(), batch["attention_mask"].numpy().tolist()
([[2, 5, 6, 8, 3, 0]], [[1, 1, 1, 1, 1, 0]])
"""

import os

import keras
import tensorflow as tf
import tensorflow_text as tf_text

from electra_tf.text import featurize
from electra_tf.util.library_internals import uninlined_function
from electra_tf.text.normalization import ASCII_TEXT, UNASSIGNED, bert_normalize, bert_pretokenize
from electra_tf.text.vocabulary import is_unreachable, load_vocabulary, validate_vocabulary

MAX_CHARS_PER_WORD = 100
SUFFIX_INDICATOR, UNKNOWN_TOKEN = "##", "[UNK]"
# Options of keras-hub's tokenizer, which the tokenizer's configs (in `.keras` files) held before it was our own
# layer: read back at these values (the only ones it ever ran with), refused at others.
LEGACY_OPTIONS = {"config_file": "tokenizer.json", "split": True, "split_on_cjk": True,
                  "suffix_indicator": SUFFIX_INDICATOR, "oov_token": UNKNOWN_TOKEN, "special_tokens": None,
                  "special_tokens_in_strings": False}
# The special tokens' attributes (`cls_token`, `cls_token_id`, ...); start/end as keras-hub's tokenizers name them.
SPECIAL_TOKEN_ATTRIBUTES = {"cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]",
                            "mask_token": "[MASK]", "start_token": "[CLS]", "end_token": "[SEP]"}
VOCABULARY_ASSET = "vocabulary.txt"  # in a `.keras` file's assets (as keras-hub's tokenizers write it)


@keras.saving.register_keras_serializable(package="electra_tf")
class WordPieceTokenizer(keras.layers.Layer):
    """BERT/ELECTRA WordPiece tokenizer, a Keras layer that always runs in-graph: its ids equal Hugging Face's
    `BertTokenizerFast` on the same `vocab.txt` wherever it runs (eagerly, in `tf.data`, in a SavedModel).

    `vocabulary` is a list of tokens or a `vocab.txt` path; `strip_accents` follows `lowercase` when `None`
    (as BERT's); with `sequence_length`, `tokenize` pads and cuts its ids to a dense tensor.
    """

    def __init__(self, vocabulary=None, lowercase=True, strip_accents=None, sequence_length=None, **kwargs):
        for name, expected in LEGACY_OPTIONS.items():
            if kwargs.pop(name, expected) != expected:
                raise ValueError(f"{type(self).__name__}: {name} can only be {expected!r}")
        super().__init__(**{"dtype": "int32", **kwargs})
        self.lowercase = lowercase
        self.strip_accents = lowercase if strip_accents is None else strip_accents
        self.sequence_length = sequence_length
        self.suffix_indicator, self.oov_token, self.unk_token = SUFFIX_INDICATOR, UNKNOWN_TOKEN, UNKNOWN_TOKEN
        for name, token in SPECIAL_TOKEN_ATTRIBUTES.items():
            setattr(self, name, token)
        self.set_vocabulary(load_vocabulary(vocabulary) if isinstance(vocabulary, str) else vocabulary)
        self.built = True  # no weights: the vocabulary is all its state

    def set_vocabulary(self, vocabulary):
        """Takes a list of tokens (id = index; `None`: none yet) and builds the tensorflow-text ops on it."""
        self.__dict__.pop("_graphs", None)  # traced on the previous vocabulary's ops
        if vocabulary is None:
            self.vocabulary, self._wordpiece, self._fused_wordpiece, self._token_ids = None, None, None, None
        else:
            vocabulary = list(vocabulary)
            validate_vocabulary(vocabulary)
            self.vocabulary = vocabulary
            self._token_ids = {token: index for index, token in enumerate(vocabulary)}
            self._build_ops(vocabulary)
        for name, token in {**SPECIAL_TOKEN_ATTRIBUTES, "unk_token": UNKNOWN_TOKEN}.items():
            setattr(self, f"{name}_id", None if vocabulary is None else self._token_ids[token])

    def _build_ops(self, vocabulary):
        # WordPiece on words (longer words are mapped to [UNK] in `tokenize_by_rules`); also detokenizes.
        self._wordpiece = tf_text.FastWordpieceTokenizer(
            vocab=vocabulary, token_out_type=self.compute_dtype, suffix_indicator=SUFFIX_INDICATOR,
            unknown_token=UNKNOWN_TOKEN, max_bytes_per_word=4 * MAX_CHARS_PER_WORD,
            no_pretokenization=True, support_detokenization=True)
        # The same op end-to-end (it splits words itself; its limit counts bytes). An entry holding whitespace
        # (BERT-Chinese's U+2028) would match across a space: it gets an entry no text reaches.
        unreachable = [f"\x01{index}" if is_unreachable(token) else token for index, token in enumerate(vocabulary)]
        self._fused_wordpiece = tf_text.FastWordpieceTokenizer(
            vocab=unreachable, token_out_type=self.compute_dtype, suffix_indicator=SUFFIX_INDICATOR,
            unknown_token=UNKNOWN_TOKEN, max_bytes_per_word=MAX_CHARS_PER_WORD, no_pretokenization=False)

    def get_vocabulary(self):
        """The tokens, in id order."""
        if self.vocabulary is None:
            raise ValueError(f"No vocabulary has been set for {type(self).__name__}. Make sure to pass a `vocabulary` "
                             "argument when creating the layer.")
        return self.vocabulary

    def vocabulary_size(self):
        """The number of tokens."""
        return len(self.get_vocabulary())

    def id_to_token(self, id):
        """The token of an id."""
        if not 0 <= id < self.vocabulary_size():
            raise ValueError(f"`id` must be in range [0, {self.vocabulary_size() - 1}]. Received: {id}")
        return self.vocabulary[id]

    def token_to_id(self, token):
        """The id of a token of the vocabulary."""
        self.get_vocabulary()
        if token not in self._token_ids:
            raise ValueError(f"Token '{token}' is not in the vocabulary.")
        return self._token_ids[token]

    @property
    def special_tokens(self):
        """The special tokens [CLS] [SEP] [PAD] [MASK]."""
        return sorted(set(SPECIAL_TOKEN_ATTRIBUTES.values()))

    @property
    def special_token_ids(self):
        return sorted(self.token_to_id(token) for token in self.special_tokens)

    def save_assets(self, dir_path):
        """Keras's saving hook: the vocabulary into a `.keras` file's assets."""
        with open(os.path.join(dir_path, VOCABULARY_ASSET), "w", encoding="utf-8") as file:
            file.writelines(f"{token}\n" for token in self.get_vocabulary())

    def load_assets(self, dir_path):
        """Keras's loading hook: the vocabulary from a `.keras` file's assets, read as a `vocab.txt`."""
        self.set_vocabulary(load_vocabulary(os.path.join(dir_path, VOCABULARY_ASSET)))

    def tokenize(self, inputs):
        """Token ids (no special tokens) of a string (1-D) or a `[batch]` of strings (ragged `[batch, (tokens)]`),
        always those of `tokenize_by_rules`: an ASCII batch runs only lower-casing and the fused op, any other
        `tokenize_mixed`, as a graph function never inlined (so an ASCII batch does not walk its ops)."""
        self.get_vocabulary()  # an error when no vocabulary is set; with one, `set_vocabulary` built the ops
        inputs = tf.convert_to_tensor(inputs, tf.string)
        scalar = inputs.shape.rank == 0
        texts = inputs[None] if scalar else inputs
        all_ascii = tf.reduce_all(tf.strings.regex_full_match(texts, ASCII_TEXT))
        tokens = tf.cond(all_ascii, lambda: self._ascii_tokens(texts), lambda: self._graph("mixed")(texts))
        if self.sequence_length:
            tokens = tokens.to_tensor(shape=[None, self.sequence_length])
        return tokens[0] if scalar else tokens

    def detokenize(self, ids):
        """The text of token ids (a `[batch, (tokens)]` tensor, or one sequence), pieces joined with spaces and
        "##" pieces to the one before, as tensorflow-text's `FastWordpieceTokenizer.detokenize` gives it."""
        self.get_vocabulary()
        ids = ids if isinstance(ids, tf.RaggedTensor) else tf.ragged.constant(ids) if isinstance(
            ids, list) else tf.convert_to_tensor(ids)
        single = ids.shape.rank == 1
        text = self._wordpiece.detokenize(ids[None] if single else ids)
        return text[0] if single else text

    def _graph(self, name):
        """`tokenize_mixed` ("mixed") or `tokenize_by_rules` ("rules") as a graph function kept as one op in other
        graphs; the method is looked up when the function is traced."""
        method = {"mixed": "tokenize_mixed", "rules": "tokenize_by_rules"}[name]
        return self.traced(name, lambda: uninlined_function(lambda texts: getattr(self, method)(texts),
                                                             [tf.TensorSpec([None], tf.string)]))

    def traced(self, key, make):
        """The graph function kept under `key`, made by `make()` on first use (a new vocabulary drops them all): what
        featurizes with this tokenizer is traced once, however many datasets and calls run it."""
        graphs = self.__dict__.setdefault("_graphs", {})  # plain dict: not state Keras tracks or saves
        if key not in graphs:
            graphs[key] = make()
        return graphs[key]

    def tokenize_mixed(self, texts):
        """Token ids of a `[batch]` of strings not all ASCII: the others by the fused op on `bert_normalize`d
        text, redone by `tokenize_by_rules` where the op can differ from BERT's rules (a row with an unknown
        token: its word limit counts bytes; a row with a code point unassigned in TensorFlow's tables)."""
        ascii_rows = tf.strings.regex_full_match(texts, ASCII_TEXT)
        plain, other = tf.where(ascii_rows)[:, 0], tf.where(~ascii_rows)[:, 0]
        other_texts = tf.gather(texts, other)
        tokens = self._fused_wordpiece.tokenize(bert_normalize(other_texts, self.lowercase, self.strip_accents))
        unknown = tf.cast(tokens.flat_values == self.unk_token_id, tf.int32)
        has_unknown = tf.math.unsorted_segment_max(unknown, tokens.value_rowids(), tokens.nrows()) > 0
        redo = has_unknown | tf.strings.regex_full_match(other_texts, f"(?s).*{UNASSIGNED}.*")
        tokens = tf.cond(tf.reduce_any(redo), lambda: self._replace_rows(tokens, redo, other_texts), lambda: tokens)
        return _interleave(self._ascii_tokens(tf.gather(texts, plain)), plain, tokens, other)

    def _ascii_tokens(self, texts):
        """Token ids of printable-ASCII texts: only lower-casing before the fused op."""
        return self._fused_wordpiece.tokenize(tf.strings.lower(texts) if self.lowercase else texts)

    def _replace_rows(self, tokens, redo, texts):
        """`tokens` with the rows where `redo` holds tokenized by `tokenize_by_rules` instead."""
        kept, redone = tf.where(~redo)[:, 0], tf.where(redo)[:, 0]
        return _interleave(tf.gather(tokens, kept), kept, self._graph("rules")(tf.gather(texts, redone)), redone)

    def tokenize_by_rules(self, texts):
        """Token ids of a `[batch]` of strings by BERT's rules written out as TF string ops
        (`bert_pretokenize`, then WordPiece on each word): `tokenize`'s reference and fallback."""
        words = bert_pretokenize(texts, self.lowercase, self.strip_accents)
        words = tf.ragged.map_flat_values(
            lambda w: tf.where(tf.strings.length(w, unit="UTF8_CHAR") > MAX_CHARS_PER_WORD, self.oov_token, w),
            words)
        return self._wordpiece.tokenize(words).merge_dims(-2, -1)

    def encode(self, texts, pairs=None, sequence_length=128):
        """The model's int32 `[batch, sequence_length]` `input_ids`, `attention_mask` and `token_type_ids` of
        `[CLS] A [SEP] (B [SEP])` (`featurize.encode`; the longer of a pair is cut first).

        >>> tokenizer = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox"])
        >>> tokenizer.encode(["the fox"], sequence_length=5)["input_ids"].numpy().tolist()
        [[2, 5, 6, 3, 0]]
        >>> tokenizer.encode("the", "fox", sequence_length=6)["token_type_ids"].numpy().tolist()
        [[0, 0, 0, 1, 1, 0]]
        """
        if isinstance(texts, str):
            texts, pairs = [texts], None if pairs is None else [pairs]
        texts = tf.convert_to_tensor(texts, tf.string)
        pairs = None if pairs is None else tf.convert_to_tensor(pairs, tf.string)
        if tf.executing_eagerly() and texts.shape.rank == 1:
            # One graph call instead of ~100 eager ops.
            return self.encode_function(sequence_length, pairs is not None)(texts, *([] if pairs is None else [pairs]))
        return featurize.encode(self, sequence_length, texts, pairs)

    def encode_function(self, sequence_length, with_pairs=False, pad_to_max_length=True):
        """`featurize.encode` as a graph function of `[batch]` texts (and pairs), traced once for this tokenizer and
        these arguments however many calls and datasets run it."""
        return self.traced(("encode", sequence_length, with_pairs, pad_to_max_length), lambda: tf.function(
            lambda texts, pairs=None: featurize.encode(self, sequence_length, texts, pairs, pad_to_max_length),
            input_signature=[tf.TensorSpec([None], tf.string)] * (2 if with_pairs else 1), autograph=False))

    def __call__(self, inputs, *args, **kwargs):
        """The Keras layer call: `tokenize`'s ids (Python strings made string tensors, where Keras makes int32)."""
        if not isinstance(inputs, (tf.Tensor, tf.RaggedTensor, keras.KerasTensor)):
            inputs = tf.convert_to_tensor(inputs, tf.string)
        return super().__call__(inputs, *args, **kwargs)

    def call(self, inputs):
        return self.tokenize(inputs)

    def get_config(self):
        return {**super().get_config(), "lowercase": self.lowercase, "strip_accents": self.strip_accents,
                "sequence_length": self.sequence_length}


def _interleave(first, first_rows, second, second_rows):
    """The rows of two ragged tensors, at `first_rows` and `second_rows` of one batch, in that batch's order."""
    rows = tf.concat([first, second], axis=0)
    return tf.gather(rows, tf.argsort(tf.concat([first_rows, second_rows], axis=0)))
