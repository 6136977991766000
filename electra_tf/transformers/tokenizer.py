"""transformers' tokenizer on the in-graph WordPiece layer: `ElectraTokenizer` (= `ElectraTokenizerFast`) answers
transformers 4.x's tokenizer API as `BertTokenizerFast` does (ids, offsets, word ids; BERT's word rules run in
Python around the in-graph ids); tensors get the Keras layer's answer.

Example:
>>> tokenizer = ElectraTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox", "##es", "."])
>>> tokens = tokenizer(["The foxes.", "the [MASK]"], padding=True, return_offsets_mapping=True)
>>> tokens.input_ids, tokens.attention_mask
([[2, 5, 6, 7, 8, 3], [2, 5, 4, 3, 0, 0]], [[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]])
>>> tokens.offset_mapping[0], tokens.word_ids(0)
([(0, 0), (0, 3), (4, 7), (7, 9), (9, 10), (0, 0)], [None, 0, 1, 1, 2, None])
>>> tokenizer.decode([2, 5, 6, 7, 8, 3], skip_special_tokens=True), tokenizer.tokenize("The foxes.")
('the foxes.', ['the', 'fox', '##es', '.'])
"""

import os
import tempfile

import keras
import numpy as np
import tensorflow as tf

import electra_tf.transformers.batch_encoding as batch_encoding
from electra_tf.checkpoints import publish, tokenizer_files
from electra_tf.text.tokenizer import SUFFIX_INDICATOR, WordPieceTokenizer
from electra_tf.text.word_spans import split_words
from electra_tf.transformers.batch_encoding import Pieces, SpecialTokens

# What `truncation=True` and `padding="max_length"` cut and pad to by default: ELECTRA's position embeddings
# (transformers, for a tokenizer whose files give no length, does not truncate at all).
DEFAULT_MODEL_MAX_LENGTH = 512
# transformers' order of a BERT tokenizer's special tokens (`all_special_tokens`).
SPECIAL_TOKEN_NAMES = ("unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
# How the `tokenizers` library's WordPiece decoder cleans each piece, and how transformers'
# `clean_up_tokenization` cleans the whole text (`clean_up_tokenization_spaces=True`).
PIECE_CLEAN_UP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"),
                  (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))
TEXT_CLEAN_UP = tuple(pair for pair in PIECE_CLEAN_UP if pair[0] != " do not")
TEXT_TYPES = ("text input must be of type `str` (single example), `list[str]` (batch or single pretokenized "
              "example) or `list[list[str]]` (batch of pretokenized examples).")
TENSORS = (tf.Tensor, tf.RaggedTensor, keras.KerasTensor, np.ndarray)


def tokens_to_string(tokens):
    """transformers' `convert_tokens_to_string` of a BERT tokenizer (the `tokenizers` WordPiece decoder): pieces
    joined with spaces, "##" pieces glued to the one before, no space before `.,!?`.

    >>> tokens_to_string(["the", "fox", "##es", "!"])
    'the foxes!'
    """
    return "".join(_replace_all(token if index == 0 else token[len(SUFFIX_INDICATOR):] if token.startswith(
        SUFFIX_INDICATOR) else " " + token, PIECE_CLEAN_UP) for index, token in enumerate(tokens))


@keras.saving.register_keras_serializable(package="electra_tf", name="ElectraTokenizer")
class ElectraTokenizer(WordPieceTokenizer):
    """transformers' `ElectraTokenizerFast`/`BertTokenizerFast` API on the in-graph WordPiece tokenizer
    (registered as "electra_tf>ElectraTokenizer", the name saved `.keras` files hold)."""

    model_input_names = list(batch_encoding.MODEL_INPUT_NAMES)
    pad_token_type_id = 0
    is_fast = True
    clean_up_tokenization_spaces = True  # `decode`'s default, as transformers 4's BERT tokenizers

    def __init__(self, vocabulary=None, lowercase=True, strip_accents=None,
                 model_max_length=DEFAULT_MODEL_MAX_LENGTH, padding_side="right", **kwargs):
        batch_encoding.check_padding_side(padding_side)
        super().__init__(vocabulary, lowercase, strip_accents, **kwargs)
        self.model_max_length, self.padding_side = model_max_length, padding_side

    @classmethod
    def from_pretrained(cls, path, lowercase=None, strip_accents=None, model_max_length=None,
                        padding_side="right", **hub_options):
        """The tokenizer beside a checkpoint in any format, of a `vocab.txt`/`tokenizer.json`, or of a hub id;
        `lowercase`, `strip_accents` and `model_max_length` left as `None` follow its files."""
        vocabulary, casing = tokenizer_files.tokenizer_options(path, lowercase, strip_accents, **hub_options)
        saved_length = tokenizer_files.saved_model_max_length(vocabulary)
        return cls(vocabulary, **casing, padding_side=padding_side,
                   model_max_length=model_max_length or saved_length or DEFAULT_MODEL_MAX_LENGTH)

    def save_pretrained(self, save_directory):
        """Writes `vocab.txt` and `tokenizer_config.json`, as transformers' `AutoTokenizer` reads them."""
        tokenizer_files.write_tokenizer_files(save_directory, self.get_vocabulary(), lowercase=bool(self.lowercase),
                                              strip_accents=self.strip_accents,
                                              model_max_length=self.model_max_length)
        return tuple(os.path.join(save_directory, name) for name in (tokenizer_files.TOKENIZER_CONFIG, "vocab.txt"))

    def push_to_hub(self, repo_id, commit_message=None, private=None, token=None, revision=None, create_pr=False):
        """transformers' `tokenizer.push_to_hub`; returns the commit's URL."""
        publish.check_push_target(repo_id, token)
        with tempfile.TemporaryDirectory() as folder:
            self.save_pretrained(folder)
            return publish.push_to_hub(folder, repo_id, token=token, private=private, revision=revision,
                                       commit_message=commit_message or "Upload tokenizer", create_pr=create_pr)

    def __call__(self, text=None, text_pair=None, *args, **kwargs):
        """transformers' call on Python text (its arguments; a `BatchEncoding` as `BertTokenizerFast` gives it,
        `return_tensors="tf"` int32); the Keras layer call on tensors (ids without special tokens).

        >>> tokenizer = ElectraTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox", "ran"])
        >>> tokens = tokenizer("the fox", "ran", return_tensors="tf")
        >>> tokens.input_ids.numpy().tolist(), tokens["token_type_ids"].numpy().tolist()
        ([[2, 5, 6, 3, 7, 3]], [[0, 0, 0, 0, 1, 1]])
        >>> tokenizer(tf.constant(["the fox"])).to_list()
        [[5, 6]]
        """
        if isinstance(text, TENSORS):
            if text_pair is not None or args or set(kwargs) - {"training"}:
                raise ValueError("text: a tensor gets the Keras layer call (ids without special tokens), which "
                                 "takes no transformers options: for those pass Python str (tensors: call "
                                 "tokenizer.tokenize)")
            return super().__call__(text, **kwargs)
        return self._encode_text(text, text_pair, *args, **kwargs)

    def _encode_text(self, text, text_pair=None, add_special_tokens=True, padding=False, truncation=None,
                     max_length=None, stride=0, is_split_into_words=False, pad_to_multiple_of=None,
                     padding_side=None, return_tensors=None, verbose=True, **returns):
        del verbose  # (transformers' warnings switch)
        examples, single = _examples(text, text_pair, is_split_into_words)
        with tf.init_scope():  # eager even while a graph is traced: Python text in, Python values out
            pieces = iter(self._pieces([part for example in examples for part in example if part is not None],
                                       is_split_into_words))
        sequences = [(next(pieces), None if second is None else next(pieces)) for _, second in examples]
        special = SpecialTokens(*((getattr(self, f"{name}_token_id"), getattr(self, f"{name}_token"))
                                  for name in ("cls", "sep", "pad")))
        return batch_encoding.encode_batch(
            sequences, special, add_special_tokens=add_special_tokens, padding=padding, truncation=truncation,
            max_length=max_length, stride=stride, pad_to_multiple_of=pad_to_multiple_of,
            padding_side=padding_side or self.padding_side, model_max_length=self.model_max_length,
            return_tensors=return_tensors, single=single, **returns)

    def _pieces(self, texts, split_into_words):
        """Each text's (a str, or a list of words) `Pieces`, tokenized in one call of the in-graph layer on all
        their words."""
        specials = [getattr(self, name) for name in SPECIAL_TOKEN_NAMES]
        words = []  # per text: (word index, start, end, origins, text)
        for text in texts:
            parts = list(enumerate(text)) if split_into_words else [(None, text)]
            words.append([(index if index is not None else position, start, end, origins, part)
                          for index, part in parts
                          for position, (start, end, origins) in enumerate(
                              split_words(part, self.lowercase, self.strip_accents, specials))])
        plain = [part[start:end] for text_words in words for _, start, end, origins, part in text_words
                 if origins is not None]
        ids = iter(WordPieceTokenizer.tokenize(self, tf.constant(plain, tf.string)).to_list() if plain else [])
        return [self._text_pieces(text_words, ids) for text_words in words]

    def _text_pieces(self, words, ids):
        """One text's `Pieces` from its words and an iterator over the ids of its plain words."""
        pieces = Pieces([], [], [], [])
        for word, start, end, origins, part in words:
            word_ids = [self.token_to_id(part[start:end])] if origins is None else next(ids)
            tokens = [self.vocabulary[index] for index in word_ids]
            spans = [(start, end)] * len(tokens) if origins is None else _piece_spans(tokens, origins, self)
            for values, new in zip(pieces, (word_ids, tokens, spans, [word] * len(tokens))):
                values.extend(new)
        return pieces

    def tokenize(self, text, pair=None, add_special_tokens=False, **kwargs):
        """transformers' `tokenize`: the token strings of a text (and pair); a tensor gets the core layer's
        `tokenize` (ids).

        >>> ElectraTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox"]).tokenize("The [MASK]")
        ['the', '[MASK]']
        """
        if isinstance(text, TENSORS):
            return super().tokenize(text)
        return self(text, pair, add_special_tokens=add_special_tokens, **kwargs).tokens()

    def encode(self, text, text_pair=None, sequence_length=None, **options):
        """transformers' `encode` on one text (and pair): its `input_ids`; with `sequence_length`, or on a batch,
        `WordPieceTokenizer.encode`'s packed model inputs (128 long by default).

        >>> tokenizer = ElectraTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox"])
        >>> tokenizer.encode("the fox"), tokenizer.encode("the", text_pair="fox", add_special_tokens=False)
        ([2, 5, 6, 3], [5, 6])
        >>> tokenizer.encode(["the fox"], sequence_length=5)["input_ids"].numpy().tolist()
        [[2, 5, 6, 3, 0]]
        """
        text_pair = options.pop("pairs", text_pair)  # (`WordPieceTokenizer.encode`'s name)
        if sequence_length is None and (isinstance(text, str) or options.get("is_split_into_words")):
            return self(text, text_pair, **options)["input_ids"]
        if options:
            raise TypeError(f"encode() of a batch (or with sequence_length) packs the model's inputs and takes no "
                            f"{', '.join(sorted(options))}: for transformers' options call tokenizer(texts, ...)")
        return super().encode(text, text_pair, 128 if sequence_length is None else sequence_length)

    def pad(self, encoded_inputs, padding=True, max_length=None, pad_to_multiple_of=None, padding_side=None,
            return_attention_mask=None, return_tensors=None, verbose=True):
        """transformers' `pad`: features (a `BatchEncoding`, a dict of lists or a list of dicts) padded to one length.

        >>> tokenizer = ElectraTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox"])
        >>> tokenizer.pad([tokenizer("the fox"), tokenizer("fox")], return_tensors="np")["attention_mask"].tolist()
        [[1, 1, 1, 1], [1, 1, 1, 0]]
        """
        del verbose  # (transformers' warnings switch)
        return batch_encoding.pad(encoded_inputs, self.pad_token_id, padding=padding, max_length=max_length,
                                  pad_to_multiple_of=pad_to_multiple_of,
                                  padding_side=padding_side or self.padding_side,
                                  return_attention_mask=return_attention_mask, return_tensors=return_tensors,
                                  model_max_length=self.model_max_length)

    def decode(self, token_ids, skip_special_tokens=False, clean_up_tokenization_spaces=None):
        """The text of one sequence of ids (a list, an array or a tensor) as `BertTokenizerFast.decode` gives it.

        >>> tokenizer = ElectraTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox", "##es", "!"])
        >>> tokenizer.decode([2, 5, 6, 7, 8, 3]), tokenizer.decode([2, 5, 6, 3], skip_special_tokens=True)
        ('[CLS] the foxes! [SEP]', 'the fox')
        """
        if clean_up_tokenization_spaces is None:
            clean_up_tokenization_spaces = self.clean_up_tokenization_spaces
        text = tokens_to_string(self.convert_ids_to_tokens(_id_list(token_ids, "token_ids"), skip_special_tokens))
        return _replace_all(text, TEXT_CLEAN_UP) if clean_up_tokenization_spaces else text

    def batch_decode(self, sequences, skip_special_tokens=False, clean_up_tokenization_spaces=None):
        """`decode` of each sequence of a batch (lists, a `[batch, length]` array or tensor)."""
        if isinstance(sequences, str):
            raise ValueError("sequences: a batch of token id sequences, not a str")
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

    convert_tokens_to_string = staticmethod(tokens_to_string)

    def convert_tokens_to_ids(self, tokens):
        """The id of a token, or the ids of a list of tokens; `unk_token_id` for a token not in the vocabulary."""
        self.get_vocabulary()
        if isinstance(tokens, str):
            return self._token_ids.get(tokens, self.unk_token_id)
        return [self._token_ids.get(token, self.unk_token_id) for token in tokens]

    def get_vocab(self):
        """token → id, as transformers' `get_vocab`."""
        self.get_vocabulary()
        return dict(self._token_ids)

    def get_special_tokens_mask(self, token_ids_0, token_ids_1=None, already_has_special_tokens=False):
        """1 for a special token, 0 for another: of ids that hold them already, or of the `[CLS] A [SEP] (B
        [SEP])` that `token_ids_0` (and `token_ids_1`) would make."""
        if already_has_special_tokens:
            special = set(self.all_special_ids)
            return [int(index in special) for index in _id_list(token_ids_0, "token_ids_0")]
        second = [] if token_ids_1 is None else [0] * len(token_ids_1) + [1]
        return [1] + [0] * len(token_ids_0) + [1] + second

    @property
    def vocab_size(self):
        """transformers' name for `vocabulary_size()`."""
        return self.vocabulary_size()

    def __len__(self):
        return self.vocabulary_size()

    def __bool__(self):
        return True  # a tokenizer is one, even before its vocabulary is loaded (`len` would raise)

    @property
    def all_special_tokens(self):
        """The special tokens, in transformers' order."""
        return [getattr(self, name) for name in SPECIAL_TOKEN_NAMES]

    @property
    def all_special_ids(self):
        """The special tokens' ids, in transformers' order."""
        return [self.token_to_id(token) for token in self.all_special_tokens]

    def get_config(self):
        config = super().get_config()
        if self.model_max_length != DEFAULT_MODEL_MAX_LENGTH:  # so that a default tokenizer's config is as before
            config["model_max_length"] = self.model_max_length
        if self.padding_side != "right":
            config["padding_side"] = self.padding_side
        return config


def _examples(text, text_pair, split_into_words):
    """`([(first, second or None)], single)` from transformers' `text`/`text_pair`, each refused in one line
    naming the argument (transformers' words where it has them)."""
    if text is None:
        raise ValueError("You need to specify either `text` or `text_target`.")
    unit = _is_word_list if split_into_words else lambda value: isinstance(value, str)
    single = unit(text)
    if not single and not isinstance(text, (list, tuple)):
        raise ValueError(TEXT_TYPES)
    if text_pair is not None and not unit(text_pair) and not isinstance(text_pair, (list, tuple)):
        raise ValueError(TEXT_TYPES)
    if single:
        if text_pair is not None and not unit(text_pair):
            raise ValueError(f"text_pair: one {'list of words' if split_into_words else 'str'} for one text")
        return [(text, text_pair or None)], True
    if not text:
        raise ValueError("text: an empty batch (no text to tokenize)")
    if text_pair is not None:
        if len(text_pair) != len(text):
            raise ValueError(f"batch length of `text`: {len(text)} does not match batch length of `text_pair`: "
                             f"{len(text_pair)}.")
        examples = list(zip(text, text_pair))
    else:
        examples = [(item, None) if unit(item) else tuple(item) if isinstance(item, (list, tuple)) else (item,)
                    for item in text]
    for index, example in enumerate(examples):
        if len(example) != 2 or not all(part is None or unit(part) for part in example) or example[0] is None:
            kind = "a list of words (str)" if split_into_words else "a str"
            raise ValueError(f"text[{index}]: {example[0] if len(example) == 1 else list(example)!r} is not "
                             f"{kind} nor a (text, pair) of them")
    return examples, False


def _is_word_list(value):
    return isinstance(value, (list, tuple)) and all(isinstance(word, str) for word in value)


def _piece_spans(tokens, origins, tokenizer):
    """The `(start, end)` in the original text of each piece of a word whose normalised characters come from
    `origins`; the whole word for `[UNK]` (or where the pieces do not spell the word)."""
    lengths = [len(token) - (2 if index and token.startswith(tokenizer.suffix_indicator) else 0)
               for index, token in enumerate(tokens)]
    whole = (origins[0], origins[-1] + 1)
    if tokenizer.unk_token in tokens or sum(lengths) != len(origins):
        return [whole] * len(tokens)
    spans, position = [], 0
    for length in lengths:
        spans.append((origins[position], origins[position + length - 1] + 1))
        position += length
    return spans


def _id_list(ids, name):
    """A sequence of ids (one id, a list, an array or a tensor) as a list of Python ints."""
    if isinstance(ids, str) or isinstance(ids, (list, tuple)) and any(isinstance(item, str) for item in ids):
        raise ValueError(f"{name}: token ids (ints), not text: to tokenize text call the tokenizer")
    values = np.asarray(ids)
    if values.ndim > 1 or values.size and values.dtype.kind not in "iu":
        raise ValueError(f"{name}: one sequence of int token ids, not shape {values.shape} of {values.dtype}")
    return [int(value) for value in values.reshape(-1)]


def _replace_all(text, replacements):
    for old, new in replacements:
        text = text.replace(old, new)
    return text
