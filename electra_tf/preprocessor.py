"""`ElectraPreprocessor`: raw text → the model's inputs, in-graph (tokenizer + packer), as keras-hub's are.

A model given one (`preprocessor=...` on any of our models that read one text or a text pair, or
`from_pretrained` of a folder with tokenizer files) takes strings in `fit`, `evaluate` and `predict`; the
preprocessor is saved with the model, and `export_model` takes its tokenizer and length from it. It runs
the package's one featurizer (`electra_tf.featurize.encode`), so its ids are the training data's and the
serving graph's.

Example:
>>> from electra_tf.tokenization import ElectraTokenizer
>>> tokenizer = ElectraTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox"])
>>> preprocessor = ElectraPreprocessor(tokenizer, sequence_length=6)
>>> preprocessor(["The fox"])["input_ids"].numpy().tolist()
[[2, 5, 6, 3, 0, 0]]
>>> preprocessor((["the"], ["fox"]))["token_type_ids"].numpy().tolist()
[[0, 0, 0, 1, 1, 0]]
"""

import keras
import tensorflow as tf

from electra_tf import featurize


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraPreprocessor(keras.layers.Layer):
    """Texts (`[batch]` strings), or `(texts, pairs)`, → `input_ids`, `attention_mask`, `token_type_ids`.

    Args:
        tokenizer: the model's `ElectraTokenizer`.
        sequence_length: texts are truncated (the longer of a pair first) and padded to this many tokens.
    """

    def __init__(self, tokenizer, sequence_length=128, **kwargs):
        super().__init__(trainable=False, **kwargs)
        self.tokenizer = tokenizer
        self.sequence_length = int(sequence_length)

    def build(self, input_shape=None):
        self.built = True  # no weights: the tokenizer's vocabulary is all its state

    def __call__(self, inputs, **kwargs):
        # Keras layers take tensors: Python strings become string tensors first.
        if is_pair(inputs):
            inputs = tuple(tf.convert_to_tensor(part, tf.string) for part in inputs)
        else:
            inputs = tf.convert_to_tensor(inputs, tf.string)
        return super().__call__(inputs, **kwargs)

    def call(self, inputs):
        texts, pairs = inputs if isinstance(inputs, tuple) else (inputs, None)
        return featurize.encode(self.tokenizer, self.sequence_length, texts, pairs)

    def get_config(self):
        return {**super().get_config(), "tokenizer": keras.saving.serialize_keras_object(self.tokenizer),
                "sequence_length": self.sequence_length}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config.pop("trainable", None)
        config["tokenizer"] = keras.saving.deserialize_keras_object(config["tokenizer"])
        return cls(**config)


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
