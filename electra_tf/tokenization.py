"""The in-graph ELECTRA/BERT WordPiece tokenizer (keras-hub on tensorflow-text).

A vocabulary is a `vocab.txt` with the special tokens [PAD] [UNK] [CLS] [SEP]
[MASK] (see `electra_tf.vocabulary`); the released BERT/ELECTRA one works as
is.

Example:
>>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox", "##es", "."]
>>> tokenizer = ElectraTokenizer(vocab)
>>> tokenizer("The foxes.").numpy().tolist()
[5, 6, 7, 8]
>>> batch = tokenizer.encode(["The fox."], sequence_length=6)
>>> batch["input_ids"].numpy().tolist(), batch["attention_mask"].numpy().tolist()
([[2, 5, 6, 8, 3, 0]], [[1, 1, 1, 1, 1, 0]])
"""

import os

import keras
import keras_hub
import tensorflow as tf
import tensorflow_text as tf_text

from electra_tf import featurize
from electra_tf.checkpoints.tokenizer_files import tokenizer_arguments
from electra_tf.text_normalization import ASCII_TEXT, UNASSIGNED, bert_normalize, bert_pretokenize
from electra_tf.vocabulary import is_unreachable, load_vocabulary, validate_vocabulary

# BERT maps a word of more than 100 characters (not bytes) to [UNK].
MAX_CHARS_PER_WORD = 100


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraTokenizer(keras_hub.tokenizers.ElectraTokenizer):
    """BERT/ELECTRA WordPiece tokenizer that always runs in-graph (tensorflow-text).

    The ids equal Hugging Face's `BertTokenizerFast` on the same `vocab.txt`:
    keras-hub's vocabulary handling and tensorflow-text's
    `FastWordpieceTokenizer` are kept, and the pre-tokenization is BERT's
    (`electra_tf.text_normalization`), not keras-hub's.

    Args:
        vocabulary: a list of tokens or a `vocab.txt` path.
        lowercase: lower-case the text (the released uncased models).
        strip_accents: remove accents; follows `lowercase` when `None`, as
            BERT's `BasicTokenizer` does.

    Calls run the TensorFlow path everywhere (eagerly, in `tf.data`, in a
    SavedModel), so ids never depend on where the tokenizer runs. A batch
    gives a ragged `[batch, (tokens)]` tensor, a single string a 1-D tensor.
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

    @classmethod
    def from_pretrained(cls, path, lowercase=None, strip_accents=None, **hub_options):
        """The tokenizer beside a checkpoint in any format (its `vocab.txt`, or a Hugging Face
        `tokenizer.json`), or of a `vocab.txt`/`tokenizer.json` path, or of a Hugging Face hub id
        (`"google/electra-small-discriminator"`: from the cache or downloaded; `hub_options` are `revision`,
        `cache_dir`, `token`, `local_files_only`, `force_download`, see `electra_tf.checkpoints.hub`).

        `lowercase`/`strip_accents` left as `None` follow the checkpoint's tokenizer files
        (`tokenizer_config.json`'s `do_lower_case`, `tokenizer.json`'s normalizer), else lower-case.
        """
        vocabulary, saved_lowercase, saved_strip_accents = tokenizer_arguments(path, **hub_options)
        if lowercase is None:
            lowercase = True if saved_lowercase is None else saved_lowercase
        if strip_accents is None:
            strip_accents = saved_strip_accents
        return cls(vocabulary, lowercase=lowercase, strip_accents=strip_accents)

    def _set_vocabulary_tf(self):
        # keras-hub's, with room for 100 characters of up to 4 UTF-8 bytes
        # (BERT's limit counts characters; longer words are mapped to [UNK]
        # in `tokenize_by_rules`). Also detokenizes.
        self._fast_word_piece = tf_text.FastWordpieceTokenizer(
            vocab=self.vocabulary, token_out_type=self.compute_dtype, suffix_indicator=self.suffix_indicator,
            unknown_token=self.oov_token, max_bytes_per_word=4 * MAX_CHARS_PER_WORD,
            no_pretokenization=True, support_detokenization=True)
        # The same op in its end-to-end mode: it splits on whitespace, punctuation and CJK ideographs
        # itself. Its limit counts bytes, which equals BERT's on ASCII (see `tokenize`). An entry holding
        # whitespace (BERT-Chinese's U+2028 and "##" + U+2028) is never a piece by BERT's rules, but this op
        # would match it across a space: it gets an entry no text reaches (controls are removed before the op).
        unreachable = [f"\x01{index}" if is_unreachable(token) else token
                       for index, token in enumerate(self.vocabulary)]
        self._fused_word_piece = tf_text.FastWordpieceTokenizer(
            vocab=unreachable, token_out_type=self.compute_dtype, suffix_indicator=self.suffix_indicator,
            unknown_token=self.oov_token, max_bytes_per_word=MAX_CHARS_PER_WORD, no_pretokenization=False)

    def load_assets(self, dir_path):
        # keras-hub's reader strips every line of the file its `save_assets` writes (U+2028 → "", "##" +
        # U+2028 → "##"): it is read as a vocab.txt instead.
        self.set_vocabulary(load_vocabulary(os.path.join(dir_path, "vocabulary.txt")))

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
        (to pass on its dead inputs), which cost a batch of 32 ASCII texts
        about 3× the fused op's own time.
        """
        # keras-hub's error when no vocabulary is set; with one, `set_vocabulary` has built the ops
        # (`_set_vocabulary_tf`, eagerly: tf-text is always installed here).
        self.get_vocabulary()
        inputs = tf.convert_to_tensor(inputs, tf.string)
        scalar = inputs.shape.rank == 0
        texts = inputs[None] if scalar else inputs
        all_ascii = tf.reduce_all(tf.strings.regex_full_match(texts, ASCII_TEXT))
        tokens = tf.cond(all_ascii, lambda: self._ascii_tokens(texts), lambda: self._graph("mixed")(texts))
        if self.sequence_length:
            tokens = tokens.to_tensor(shape=[None, self.sequence_length])
        return tokens[0] if scalar else tokens

    def _graph(self, name):
        """`tokenize_mixed` ("mixed") or `tokenize_by_rules` ("rules") as a graph function on `[batch]` strings
        that calls inside other graphs keep as one op (`_noinline`, see `tokenize`). The method is looked up
        when the function is traced, not when it is made."""
        graphs = self.__dict__.setdefault("_noinline_graphs", {})  # plain dict: not state Keras tracks or saves
        if name not in graphs:
            method = {"mixed": "tokenize_mixed", "rules": "tokenize_by_rules"}[name]
            graphs[name] = tf.function(lambda texts: getattr(self, method)(texts),
                                       input_signature=[tf.TensorSpec([None], tf.string)],
                                       experimental_attributes={"_noinline": True})
        return graphs[name]

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
        tokens = self._fused_word_piece.tokenize(bert_normalize(other_texts, self.lowercase, self.strip_accents))
        unknown = tf.cast(tokens.flat_values == self.token_to_id(self.oov_token), tf.int32)
        has_unknown = tf.math.unsorted_segment_max(unknown, tokens.value_rowids(), tokens.nrows()) > 0
        redo = has_unknown | tf.strings.regex_full_match(other_texts, f"(?s).*{UNASSIGNED}.*")
        tokens = tf.cond(tf.reduce_any(redo), lambda: self._replace_rows(tokens, redo, other_texts), lambda: tokens)
        return _interleave(self._ascii_tokens(tf.gather(texts, plain)), plain, tokens, other)

    def _ascii_tokens(self, texts):
        """Token ids of printable-ASCII texts: only lower-casing before the fused op (see `tokenize`)."""
        return self._fused_word_piece.tokenize(tf.strings.lower(texts) if self.lowercase else texts)

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
        return self._fast_word_piece.tokenize(words).merge_dims(-2, -1)

    def encode(self, texts, pairs=None, sequence_length=128):
        """Tokenizes and packs `[CLS] A [SEP] (B [SEP])` into the model's input dict.

        Returns int32 `[batch, sequence_length]` tensors `input_ids`,
        `attention_mask` and `token_type_ids`; the longer segment is truncated
        first when a pair does not fit (keras-hub's "round_robin"). The same
        featurization runs in training, evaluation and the exported serving
        graph (`electra_tf.featurize`).
        """
        texts = tf.convert_to_tensor(texts, tf.string)
        return featurize.encode(self, sequence_length, texts, None if pairs is None else
                                tf.convert_to_tensor(pairs, tf.string))


def _interleave(first, first_rows, second, second_rows):
    """The rows of two ragged tensors, whose row indices in one batch are `first_rows` and `second_rows`, in
    that batch's order."""
    rows = tf.concat([first, second], axis=0)
    return tf.gather(rows, tf.argsort(tf.concat([first_rows, second_rows], axis=0)))
