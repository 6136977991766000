"""`ElectraPreprocessor`: raw text → the model's inputs, in-graph, as keras-hub's are. A model given one takes
strings in `fit`, `evaluate` and `predict`, saves it, and its export reads its tokenizer and length from it.

Example:
>>> from electra_tf.text.tokenizer import WordPieceTokenizer
>>> tokenizer = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox"])
>>> preprocessor = ElectraPreprocessor(tokenizer, sequence_length=6)
>>> preprocessor(["The fox"])["input_ids"].numpy().tolist()
[[2, 5, 6, 3, 0, 0]]
>>> preprocessor((["the"], ["fox"]))["token_type_ids"].numpy().tolist()
[[0, 0, 0, 1, 1, 0]]

A tagger trained on one character a word (an MSRA-style file) reads raw text cut the same way:
>>> tokenizer = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "4", "8", "48", "岁"])
>>> ElectraPreprocessor(tokenizer, 6)(["48岁"])["input_ids"].numpy().tolist()
[[2, 7, 8, 3, 0, 0]]
>>> ElectraPreprocessor(tokenizer, 6, word_unit="char")(["48岁"])["input_ids"].numpy().tolist()
[[2, 5, 6, 8, 3, 0]]
"""

import keras
import numpy as np
import tensorflow as tf

from electra_tf.text import featurize


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraPreprocessor(keras.layers.Layer):
    """Texts (`[batch]` strings), or `(texts, pairs)`, → `input_ids`, `attention_mask`, `token_type_ids`;
    `word_unit`, for a tagger, cuts raw text into the words it was trained on (`featurize.WORD_UNITS`)."""

    def __init__(self, tokenizer, sequence_length=128, word_unit=None, **kwargs):
        super().__init__(trainable=False, **kwargs)
        self.tokenizer = tokenizer
        self.sequence_length = int(sequence_length)
        self.own_words = None if word_unit is None else featurize.unit_pattern(word_unit)
        self.word_unit = word_unit

    def build(self, input_shape=None):
        self.built = True  # no weights

    def __call__(self, inputs, **kwargs):
        if is_pair(inputs):
            inputs = tuple(tf.convert_to_tensor(part, tf.string) for part in inputs)
        else:
            inputs = tf.convert_to_tensor(inputs, tf.string)
        return super().__call__(inputs, **kwargs)

    def call(self, inputs):
        texts, pairs = inputs if isinstance(inputs, tuple) else (inputs, None)
        return self.features(texts, pairs)

    def features(self, texts, pairs=None, pad_to_max_length=True):
        """The model's inputs of string tensors `texts` (and `pairs`), padded to `sequence_length`, or (not
        `pad_to_max_length`) to the batch's longest."""
        if self.word_unit is not None:
            return featurize.tagging_features(self.tokenizer, self.sequence_length, texts, pad_to_max_length,
                                              self.own_words)[0]
        return featurize.encode(self.tokenizer, self.sequence_length, texts, pairs, pad_to_max_length)

    def get_config(self):
        return {**super().get_config(), "tokenizer": keras.saving.serialize_keras_object(self.tokenizer),
                "sequence_length": self.sequence_length, "word_unit": self.word_unit}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config.pop("trainable", None)
        config["tokenizer"] = keras.saving.deserialize_keras_object(config["tokenizer"])
        return cls(**config)


class TextPredictor:
    """`model.predict` on raw text: featurization and the model call in one graph function, traced once (Keras's
    `predict` built a pipeline and a predict function on every call). Per-text outputs are computed on batches
    padded to their longest text; per-token outputs keep `sequence_length`, so batches concatenate.

    Example:
    >>> from electra_tf import ElectraConfig, ElectraForSequenceClassification, WordPieceTokenizer
    >>> tokenizer = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "good", "film"])
    >>> config = ElectraConfig(vocab_size=7, embedding_size=8, hidden_size=8, num_layers=1, num_heads=1,
    ...                        intermediate_size=8)
    >>> model = ElectraForSequenceClassification(config, num_labels=2,
    ...                                          preprocessor=ElectraPreprocessor(tokenizer, 16))
    >>> predict = TextPredictor(model)
    >>> predict(["good film", "film"], batch_size=1)["logits"].shape
    (2, 2)
    >>> _ = predict(["good"]); predict.traces
    1
    """

    def __init__(self, model):
        self.model, self.preprocessor = model, model.preprocessor
        self.pad_to_max_length = any(len(output.shape) > 1 and output.shape[1] is None
                                     for output in tf.nest.flatten(model.outputs))
        self._functions = {}  # number of text inputs (1, or 2 for pairs) → its tf.function

    @property
    def traces(self):
        """How many times the graphs were traced."""
        return sum(function.experimental_get_tracing_count() for function in self._functions.values())

    def _function(self, count):
        if count not in self._functions:
            def run(*texts):
                inputs = self.preprocessor.features(texts[0], texts[1] if count == 2 else None,
                                                    self.pad_to_max_length)
                return self.model(inputs, training=False)
            self._functions[count] = tf.function(run, input_signature=[tf.TensorSpec([None], tf.string)] * count)
        return self._functions[count]

    def __call__(self, x, batch_size=32):
        """The model's outputs (NumPy, as `predict` gives them) for texts or `(texts, pairs)`."""
        parts = [np.asarray(part, object) for part in (x if is_pair(x) else (x,))]
        parts = [part.reshape(-1) for part in parts]  # a single string: one text
        run, total = self._function(len(parts)), len(parts[0])
        outputs = [run(*(tf.constant(part[start:start + batch_size].tolist(), tf.string) for part in parts))
                   for start in range(0, max(total, 1), batch_size)]
        return tf.nest.map_structure(lambda *values: np.concatenate([value.numpy() for value in values]), *outputs)


def is_pair(x):
    """Whether `x` is `(texts, pairs)`: two sequences of strings."""
    return isinstance(x, tuple) and len(x) == 2 and all(not isinstance(part, (str, bytes)) for part in x)


def is_text(x):
    """Whether `x` holds raw text: strings, or `(texts, pairs)`."""
    if is_pair(x):
        return is_text(x[0])
    if isinstance(x, str):
        return True
    if isinstance(x, (list, tuple)):
        return bool(x) and isinstance(x[0], (str, bytes))
    dtype = getattr(x, "dtype", None)
    return dtype is not None and (dtype == tf.string or getattr(dtype, "kind", None) in ("U", "S", "O"))
