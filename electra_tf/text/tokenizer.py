"""The in-graph ELECTRA/BERT WordPiece tokenizer: BERT's pre-tokenization, then tensorflow-text's
`FastWordpieceTokenizer`.

A vocabulary is a `vocab.txt` with the special tokens [PAD] [UNK] [CLS] [SEP]
[MASK] (see `electra_tf.text.vocabulary`); the released BERT/ELECTRA one works as
is.

Example:
>>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox", "##es", "."]
>>> tokenizer = ElectraTokenizer(vocab)
>>> tokenizer.tokenize("The foxes.").numpy().tolist()
[5, 6, 7, 8]
>>> batch = tokenizer.encode(["The fox."], sequence_length=6)
>>> batch["input_ids"].numpy().tolist(), batch["attention_mask"].numpy().tolist()
([[2, 5, 6, 8, 3, 0]], [[1, 1, 1, 1, 1, 0]])

Called on Python text it answers as transformers' `BertTokenizerFast` does:
>>> tokens = tokenizer(["The foxes.", "the fox"], padding=True)
>>> tokens.input_ids, tokens.attention_mask
([[2, 5, 6, 7, 8, 3], [2, 5, 6, 3, 0, 0]], [[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]])
>>> tokenizer.encode("The fox."), tokenizer.decode([2, 5, 6, 7, 8, 3], skip_special_tokens=True)
([2, 5, 6, 8, 3], 'the foxes.')
"""

import os

import keras
import numpy as np
import tensorflow as tf
import tensorflow_text as tf_text

import electra_tf.transformers.batch_encoding as batch_encoding
from electra_tf.text import featurize
from electra_tf.util.atomic import read_json
from electra_tf.checkpoints.tokenizer_files import TOKENIZER_CONFIG, tokenizer_arguments, write_tokenizer_files
from electra_tf.util.library_internals import uninlined_function
from electra_tf.text.normalization import ASCII_TEXT, UNASSIGNED, bert_normalize, bert_pretokenize
from electra_tf.text.vocabulary import is_unreachable, load_vocabulary, validate_vocabulary

# BERT maps a word of more than 100 characters (not bytes) to [UNK].
MAX_CHARS_PER_WORD = 100
# What `truncation=True` and `padding="max_length"` cut and pad to by default: ELECTRA's position embeddings
# (transformers, for a tokenizer whose files give no length, does not truncate at all).
DEFAULT_MODEL_MAX_LENGTH = 512
# The keyword arguments of transformers' call: given any, the call is transformers' (see `__call__`).
TRANSFORMERS_ARGUMENTS = frozenset({"text", "text_pair", "add_special_tokens", "padding", "truncation", "max_length",
                                    "return_tensors", "return_attention_mask", "return_token_type_ids"})
# transformers' order of a BERT tokenizer's special tokens (`all_special_tokens`).
SPECIAL_TOKEN_NAMES = ("unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
# How the `tokenizers` library's WordPiece decoder cleans each piece, and how transformers'
# `clean_up_tokenization` cleans the whole text (`clean_up_tokenization_spaces=True`).
PIECE_CLEAN_UP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"),
                  (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))
TEXT_CLEAN_UP = tuple(pair for pair in PIECE_CLEAN_UP if pair[0] != " do not")
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
class ElectraTokenizer(keras.layers.Layer):
    """BERT/ELECTRA WordPiece tokenizer that always runs in-graph (tensorflow-text).

    The ids equal Hugging Face's `BertTokenizerFast` on the same `vocab.txt`:
    the pre-tokenization is BERT's (`electra_tf.text.normalization`), the
    WordPiece tensorflow-text's `FastWordpieceTokenizer`.

    Args:
        vocabulary: a list of tokens or a `vocab.txt` path.
        lowercase: lower-case the text (the released uncased models).
        strip_accents: remove accents; follows `lowercase` when `None`, as
            BERT's `BasicTokenizer` does.
        model_max_length: what `truncation=True` and `padding="max_length"`
            cut and pad to when a call gives no `max_length`.
        sequence_length: if set, `tokenize` pads and cuts its ids to this
            many (a dense tensor).

    Tokenization runs the TensorFlow path everywhere (eagerly, in `tf.data`,
    in a SavedModel), so ids never depend on where the tokenizer runs.
    `tokenize` (and the Keras layer call on tensors) gives the ids without
    special tokens: a batch a ragged `[batch, (tokens)]` tensor, a single
    string a 1-D tensor. On Python text the tokenizer also speaks
    transformers' API (`tokenizer(text)`, `encode`, `decode`, `save_pretrained`;
    see `__call__`). It is a Keras layer: a model's preprocessor holds it, and a
    `.keras` file stores its vocabulary as an asset. keras-hub's own tokenizer
    for a keras-hub preset is made from it by `electra_tf.export.keras_hub`.
    """

    def __init__(self, vocabulary=None, lowercase=True, strip_accents=None,
                 model_max_length=DEFAULT_MODEL_MAX_LENGTH, sequence_length=None, **kwargs):
        for name, expected in LEGACY_OPTIONS.items():
            if kwargs.pop(name, expected) != expected:
                raise ValueError(f"ElectraTokenizer: {name} can only be {expected!r}")
        super().__init__(**{"dtype": "int32", **kwargs})
        self.lowercase = lowercase
        self.strip_accents = lowercase if strip_accents is None else strip_accents
        self.model_max_length = model_max_length
        self.sequence_length = sequence_length
        self.suffix_indicator, self.oov_token = SUFFIX_INDICATOR, UNKNOWN_TOKEN
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
        for name, token in SPECIAL_TOKEN_ATTRIBUTES.items():
            setattr(self, f"{name}_id", None if vocabulary is None else self._token_ids[token])

    def _build_ops(self, vocabulary):
        # WordPiece on words: room for 100 characters of up to 4 UTF-8 bytes (BERT's limit counts characters;
        # longer words are mapped to [UNK] in `tokenize_by_rules`). Also detokenizes.
        self._wordpiece = tf_text.FastWordpieceTokenizer(
            vocab=vocabulary, token_out_type=self.compute_dtype, suffix_indicator=SUFFIX_INDICATOR,
            unknown_token=UNKNOWN_TOKEN, max_bytes_per_word=4 * MAX_CHARS_PER_WORD,
            no_pretokenization=True, support_detokenization=True)
        # The same op in its end-to-end mode: it splits on whitespace, punctuation and CJK ideographs
        # itself. Its limit counts bytes, which equals BERT's on ASCII (see `tokenize`). An entry holding
        # whitespace (BERT-Chinese's U+2028 and "##" + U+2028) is never a piece by BERT's rules, but this op
        # would match it across a space: it gets an entry no text reaches (controls are removed before the op).
        unreachable = [f"\x01{index}" if is_unreachable(token) else token for index, token in enumerate(vocabulary)]
        self._fused_wordpiece = tf_text.FastWordpieceTokenizer(
            vocab=unreachable, token_out_type=self.compute_dtype, suffix_indicator=SUFFIX_INDICATOR,
            unknown_token=UNKNOWN_TOKEN, max_bytes_per_word=MAX_CHARS_PER_WORD, no_pretokenization=False)

    def get_vocabulary(self):
        """The tokens, in id order."""
        if self.vocabulary is None:
            raise ValueError("No vocabulary has been set for ElectraTokenizer. Make sure to pass a `vocabulary` "
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
        """Their ids."""
        return sorted(self.token_to_id(token) for token in self.special_tokens)

    def save_assets(self, dir_path):
        """Keras's saving hook: the vocabulary into a `.keras` file's assets."""
        with open(os.path.join(dir_path, VOCABULARY_ASSET), "w", encoding="utf-8") as file:
            file.writelines(f"{token}\n" for token in self.get_vocabulary())

    def load_assets(self, dir_path):
        """Keras's loading hook: the vocabulary from a `.keras` file's assets, read as a `vocab.txt` (so that
        U+2028 and "##" + U+2028 keep their ids)."""
        self.set_vocabulary(load_vocabulary(os.path.join(dir_path, VOCABULARY_ASSET)))

    @classmethod
    def from_pretrained(cls, path, lowercase=None, strip_accents=None, **hub_options):
        """The tokenizer beside a checkpoint in any format (its `vocab.txt`, or a Hugging Face
        `tokenizer.json`), or of a `vocab.txt`/`tokenizer.json` path, or of a Hugging Face hub id
        (`"google/electra-small-discriminator"`: from the cache or downloaded; `hub_options` are `revision`,
        `cache_dir`, `token`, `local_files_only`, `force_download`, see `electra_tf.checkpoints.hub`).

        `lowercase`/`strip_accents` left as `None` follow the checkpoint's tokenizer files
        (`tokenizer_config.json`'s `do_lower_case`, `tokenizer.json`'s normalizer), else lower-case;
        `model_max_length` is `tokenizer_config.json`'s beside a `vocab.txt`, else 512.
        """
        vocabulary, saved_lowercase, saved_strip_accents = tokenizer_arguments(path, **hub_options)
        if lowercase is None:
            lowercase = True if saved_lowercase is None else saved_lowercase
        if strip_accents is None:
            strip_accents = saved_strip_accents
        return cls(vocabulary, lowercase=lowercase, strip_accents=strip_accents,
                   model_max_length=_saved_model_max_length(vocabulary))

    def tokenize(self, inputs):
        """Token ids of a string or a `[batch]` of strings.

        A batch of printable ASCII (and tab, newline, carriage return) only
        needs lower-casing before tf-text's fused `FastWordpieceTokenizer`
        (end-to-end mode: it splits on whitespace and BERT's punctuation
        itself), which gives BERT's ids on such text. Any other batch runs
        `tokenize_mixed`: its ASCII rows as above, the others with fixes around
        the op and a per-row fallback to `tokenize_by_rules`. So the ids are
        always those of `tokenize_by_rules`.

        The non-ASCII path is a separate graph function that is never inlined
        (`_noinline`): inlined, its ~150 ops sat in the untaken branch of
        the `tf.cond`, and a graph still visits every op of an untaken branch
        (to pass on its dead inputs), which cost a batch of ASCII texts
        more than the fused op itself.
        """
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
        """`tokenize_mixed` ("mixed") or `tokenize_by_rules` ("rules") as a graph function on `[batch]` strings
        that calls inside other graphs keep as one op (`_noinline`, see `tokenize`). The method is looked up
        when the function is traced, not when it is made."""
        method = {"mixed": "tokenize_mixed", "rules": "tokenize_by_rules"}[name]
        return self._traced(name, lambda: uninlined_function(lambda texts: getattr(self, method)(texts),
                                                             [tf.TensorSpec([None], tf.string)]))

    def _traced(self, key, make):
        """The graph function kept under `key`, made by `make()` on first use (a new vocabulary drops them all)."""
        graphs = self.__dict__.setdefault("_graphs", {})  # plain dict: not state Keras tracks or saves
        if key not in graphs:
            graphs[key] = make()
        return graphs[key]

    def tokenize_mixed(self, texts):
        """Token ids of a `[batch]` of strings that are not all ASCII: its ASCII rows as `tokenize` runs them,
        the others by the fused op on text normalised as `bert_normalize` does, and by `tokenize_by_rules`
        where the op can differ from BERT's rules:

        - a row with an unknown token: the op's 100-byte word limit
          is BERT's 100-character limit only on ASCII;
        - a row with a code point unassigned in TensorFlow's regex tables
          (ICU's newer tables may call it punctuation).

        Whitespace, controls and accents are handled before the op because
        its own rules differ: it keeps no-break spaces inside words, turns
        control characters into spaces rather than removing them, and (as
        `FastBertNormalizer`, not used for that reason) case-folds with NFKC
        (`ß` → `ss`, `ﬁ` → `fi`). "[SEP]" in the text is punctuation and
        letters on both paths.
        """
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
        """Token ids of printable-ASCII texts: only lower-casing before the fused op (see `tokenize`)."""
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

    def encode(self, texts, pairs=None, sequence_length=None, **options):
        """The model's packed input dict (a batch, or any call with `sequence_length`), or transformers' list
        of ids (one string without `sequence_length`).

        - `encode(texts, pairs=None, sequence_length=128)`: int32
          `[batch, sequence_length]` tensors `input_ids`, `attention_mask` and
          `token_type_ids` of `[CLS] A [SEP] (B [SEP])`, the featurization
          of training, evaluation and the exported serving graph
          (`electra_tf.text.featurize`); the longer of a pair is cut first, and
          the first text keeps the odd token (keras-hub's "round_robin").
        - `encode(text, pair=None, add_special_tokens=True, truncation=...,
          max_length=..., return_tensors=None)` on one `str` (the pair also
          as `text_pair=`): transformers' `encode`, `tokenizer(text, ...)["input_ids"]`.

        >>> tokenizer = ElectraTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox"])
        >>> tokenizer.encode("the fox"), tokenizer.encode("the", text_pair="fox", add_special_tokens=False)
        ([2, 5, 6, 3], [5, 6])
        >>> tokenizer.encode(["the fox"], sequence_length=5)["input_ids"].numpy().tolist()
        [[2, 5, 6, 3, 0]]
        """
        pairs = options.pop("text_pair", pairs)
        if isinstance(texts, str) and sequence_length is None:
            return self(texts, pairs, **options)["input_ids"]
        if options:
            raise TypeError(f"encode() of a batch (or with sequence_length) packs the model's inputs and takes no "
                            f"{', '.join(sorted(options))}: for transformers' options call tokenizer(texts, ...)")
        if isinstance(texts, str):
            texts, pairs = [texts], None if pairs is None else [pairs]
        texts = tf.convert_to_tensor(texts, tf.string)
        pairs = None if pairs is None else tf.convert_to_tensor(pairs, tf.string)
        sequence_length = 128 if sequence_length is None else sequence_length
        if tf.executing_eagerly() and texts.shape.rank == 1:
            # One graph call instead of ~100 eager ops (a request's featurization: about 0.6 ms, not 10).
            return self._encode_graph(sequence_length, pairs is not None)(texts, *([] if pairs is None else [pairs]))
        return featurize.encode(self, sequence_length, texts, pairs)

    def _encode_graph(self, sequence_length, with_pairs):
        """`featurize.encode` of `[batch]` strings (and pairs) at `sequence_length`, as a graph function."""
        return self._traced(("encode", sequence_length, with_pairs), lambda: tf.function(
            lambda texts, pairs=None: featurize.encode(self, sequence_length, texts, pairs),
            input_signature=[tf.TensorSpec([None], tf.string)] * (2 if with_pairs else 1)))

    def __call__(self, *args, **kwargs):
        """transformers' call on Python text, the Keras layer call (`tokenize`'s ids) on anything else.

        `tokenizer(text | [texts] | [(text, pair)], text_pair=None, add_special_tokens=True, padding=False,
        truncation=None, max_length=None, return_tensors=None, return_attention_mask=None,
        return_token_type_ids=None)` returns a `BatchEncoding` (`electra_tf.transformers.batch_encoding`) with the ids,
        types and mask `BertTokenizerFast` gives: `padding` True/"longest", "max_length" or False; truncation
        True/"longest_first", "only_first", "only_second" or False; `max_length` defaults to
        `model_max_length` where it is needed; `return_tensors` None (lists, flat for one text), "tf"
        (int32, what the models take) or "np" (int64, as transformers). A call with any of these keywords
        is transformers'.

        Tensors (`tf.data`, graphs, SavedModels, keras-hub's preprocessors) get the Keras layer call, as
        before: `tokenize`'s ids without special tokens. Python text in a traced graph is tokenized when
        the graph is traced, as transformers' tokenizer would be.

        >>> tokenizer = ElectraTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox", "ran"])
        >>> tokens = tokenizer("the fox", "ran", return_tensors="tf")
        >>> tokens.input_ids.numpy().tolist(), tokens["token_type_ids"].numpy().tolist()
        ([[2, 5, 6, 3, 7, 3]], [[0, 0, 0, 0, 1, 1]])
        >>> tokenizer(tf.constant(["the fox"])).to_list()
        [[5, 6]]
        """
        text = args[0] if args else kwargs.get("text")
        if _is_python_text(text) or not TRANSFORMERS_ARGUMENTS.isdisjoint(kwargs):
            return self._call_on_text(*args, **kwargs)
        if args and not isinstance(args[0], (tf.Tensor, tf.RaggedTensor, keras.KerasTensor)):
            args = (tf.convert_to_tensor(args[0], tf.string), *args[1:])  # (Keras would convert to int32)
        return super().__call__(*args, **kwargs)

    def call(self, inputs):
        return self.tokenize(inputs)

    def _call_on_text(self, text, text_pair=None, **options):
        texts, pairs = _text_batch(text, text_pair)
        with tf.init_scope():  # eager even while a graph is traced: Python text in, Python values out
            first = self.tokenize(tf.constant(texts, tf.string)).to_list()
            second = None if pairs is None else self.tokenize(tf.constant(pairs, tf.string)).to_list()
            return batch_encoding.from_ids(first, second, cls_id=self.cls_token_id, sep_id=self.sep_token_id,
                                           pad_id=self.pad_token_id, model_max_length=self.model_max_length,
                                           single=isinstance(text, str), **options)

    def decode(self, token_ids, skip_special_tokens=False, clean_up_tokenization_spaces=False):
        """The text of one sequence of ids (a list, an array or a tensor) as `BertTokenizerFast.decode` gives
        it: pieces joined with spaces, "##" pieces to the one before, no space before `.,!?`; with
        `clean_up_tokenization_spaces` also transformers' `clean_up_tokenization` (`it ' s` → `it's`; off by
        default, as transformers 5).

        >>> tokenizer = ElectraTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox", "##es", "!"])
        >>> tokenizer.decode([2, 5, 6, 7, 8, 3]), tokenizer.decode([2, 5, 6, 3], skip_special_tokens=True)
        ('[CLS] the foxes! [SEP]', 'the fox')
        """
        tokens = self.convert_ids_to_tokens(_id_list(token_ids, "token_ids"), skip_special_tokens)
        marker = self.suffix_indicator
        pieces = [token if index == 0 else token.replace(marker, "", 1) if token.startswith(marker) else " " + token
                  for index, token in enumerate(tokens)]
        text = "".join(_replace_all(piece, PIECE_CLEAN_UP) for piece in pieces)
        return _replace_all(text, TEXT_CLEAN_UP) if clean_up_tokenization_spaces else text

    def batch_decode(self, sequences, skip_special_tokens=False, clean_up_tokenization_spaces=False):
        """`decode` of each sequence of a batch (lists, a `[batch, length]` array or tensor)."""
        return [self.decode(ids, skip_special_tokens, clean_up_tokenization_spaces) for ids in sequences]

    def convert_ids_to_tokens(self, ids, skip_special_tokens=False):
        """The token of an id, or the tokens of a sequence of ids (special ones left out if asked)."""
        vocabulary = self.get_vocabulary()
        single = np.ndim(ids) == 0
        tokens = []
        for index in _id_list(ids, "ids"):
            if not 0 <= index < len(vocabulary):
                raise ValueError(f"ids: {index} is not a token id of this vocabulary (0..{len(vocabulary) - 1})")
            tokens.append(vocabulary[index])
        if single:
            return tokens[0]
        special = set(self.all_special_tokens) if skip_special_tokens else ()
        return [token for token in tokens if token not in special]

    def convert_tokens_to_ids(self, tokens):
        """The id of a token, or the ids of a list of tokens; `unk_token_id` for a token not in the vocabulary."""
        index = {token: i for i, token in enumerate(self.get_vocabulary())}
        unknown = index[self.oov_token]
        return index.get(tokens, unknown) if isinstance(tokens, str) else [index.get(t, unknown) for t in tokens]

    def save_pretrained(self, save_directory):
        """Writes `vocab.txt` and `tokenizer_config.json` (casing, `model_max_length`), which
        `ElectraTokenizer.from_pretrained` and transformers' `AutoTokenizer` read; returns their paths."""
        write_tokenizer_files(save_directory, self.get_vocabulary(), lowercase=bool(self.lowercase),
                              strip_accents=self.strip_accents, model_max_length=self.model_max_length)
        return tuple(os.path.join(save_directory, name) for name in (TOKENIZER_CONFIG, "vocab.txt"))

    @property
    def vocab_size(self):
        """The number of tokens in the vocabulary (transformers' name for `vocabulary_size()`)."""
        return self.vocabulary_size()

    def __len__(self):
        return self.vocabulary_size()

    def __bool__(self):
        return True  # a tokenizer is one, even before its vocabulary is loaded (`len` would raise)

    @property
    def unk_token(self):
        return self.oov_token

    @property
    def unk_token_id(self):
        return self.token_to_id(UNKNOWN_TOKEN)

    @property
    def all_special_tokens(self):
        """The special tokens, in transformers' order."""
        return [getattr(self, name) for name in SPECIAL_TOKEN_NAMES]

    @property
    def all_special_ids(self):
        """The special tokens' ids, in transformers' order."""
        return [self.token_to_id(token) for token in self.all_special_tokens]

    def get_config(self):
        config = {**super().get_config(), "lowercase": self.lowercase, "strip_accents": self.strip_accents,
                  "sequence_length": self.sequence_length}
        if self.model_max_length != DEFAULT_MODEL_MAX_LENGTH:  # so that a default tokenizer's config is as before
            config["model_max_length"] = self.model_max_length
        return config


def _saved_model_max_length(vocabulary):
    """`model_max_length` of the `tokenizer_config.json` beside a `vocab.txt` path when it gives one (not
    transformers' 10**30 for "unbounded"), else `DEFAULT_MODEL_MAX_LENGTH`."""
    config = os.path.join(os.path.dirname(vocabulary), TOKENIZER_CONFIG) if isinstance(vocabulary, str) else ""
    value = read_json(config, expect=dict).get("model_max_length") if os.path.isfile(config) else None
    unbounded = not isinstance(value, int) or isinstance(value, bool) or not 0 < value < 10**9
    return DEFAULT_MODEL_MAX_LENGTH if unbounded else value


def _is_python_text(value):
    """Whether `value` is text as transformers takes it: a `str`, or a list/tuple of `str` or of `(text, pair)`."""
    if isinstance(value, str):
        return True
    return isinstance(value, (list, tuple)) and all(
        isinstance(item, str) or isinstance(item, (list, tuple)) and len(item) == 2
        and all(isinstance(part, str) for part in item) for item in value)


def _text_batch(text, text_pair):
    """`(texts, pairs or None)` as lists of strings, from transformers' `text` and `text_pair`."""
    if not _is_python_text(text) or isinstance(text, str) and text_pair is not None and not isinstance(
            text_pair, str):
        raise ValueError(f"text: a str, a list of str or a list of (text, pair) for a transformers-style call, "
                         f"not {type(text).__name__}" + ("" if _is_python_text(text) else
                                                          " (tensors: call tokenizer.tokenize)"))
    if isinstance(text, str):  # an empty pair is none, as transformers takes it
        return [text], [text_pair] if text_pair else None
    if not text:
        raise ValueError("text: an empty batch (no text to tokenize)")
    if all(isinstance(item, str) for item in text):
        if text_pair is not None and not (_is_python_text(text_pair) and not isinstance(text_pair, str) and all(
                isinstance(item, str) for item in text_pair) and len(text_pair) == len(text)):
            raise ValueError(f"text_pair: a list of {len(text)} str, one per text")
        return list(text), None if text_pair is None else list(text_pair)
    if text_pair is not None or any(isinstance(item, str) for item in text):
        raise ValueError("text: either texts or (text, pair) tuples, with no text_pair")
    return [item[0] for item in text], [item[1] for item in text]


def _id_list(ids, name):
    """A sequence of ids (one id, a list, an array or a tensor) as a list of Python ints."""
    values = np.asarray(ids)
    if values.ndim > 1 or values.size and values.dtype.kind not in "iu":
        raise ValueError(f"{name}: one sequence of int token ids, not shape {values.shape} of {values.dtype}")
    return [int(value) for value in values.reshape(-1)]


def _replace_all(text, replacements):
    for old, new in replacements:
        text = text.replace(old, new)
    return text


def _interleave(first, first_rows, second, second_rows):
    """The rows of two ragged tensors, whose row indices in one batch are `first_rows` and `second_rows`, in
    that batch's order."""
    rows = tf.concat([first, second], axis=0)
    return tf.gather(rows, tf.argsort(tf.concat([first_rows, second_rows], axis=0)))
