"""Pre-training heads: replaced-token detection, and the generator's tied masked-LM head (keras-hub's `MaskedLMHead`,
which is exactly ELECTRA's).
"""

import keras
import keras_hub

from electra_tf.layers.activations import activation


@keras.saving.register_keras_serializable(package="electra_tf")
class ReplacedTokenDetectionHead(keras.layers.Layer):
    """dense(H, activation) → dense(1): one logit per token, > 0 means "replaced" (the original's
    `discriminator_predictions`).

    Example:
    >>> import numpy as np
    >>> head = ReplacedTokenDetectionHead(hidden_size=8)
    >>> head(np.zeros((2, 5, 8), "float32")).shape
    TensorShape([2, 5])
    """

    def __init__(self, hidden_size, activation="gelu", initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.activation = activation
        self.initializer_range = initializer_range
        self.dense = keras.layers.Dense(
            hidden_size, activation=activation,
            kernel_initializer=keras.initializers.TruncatedNormal(stddev=initializer_range),
            dtype=self.dtype_policy, name="dense")
        self.dense_prediction = keras.layers.Dense(1, dtype=self.dtype_policy, name="dense_prediction")

    def build(self, inputs_shape):
        self.dense.build(inputs_shape)
        self.dense_prediction.build(tuple(inputs_shape[:-1]) + (self.hidden_size,))
        self.built = True

    def call(self, inputs):
        return keras.ops.squeeze(self.dense_prediction(self.dense(inputs)), axis=-1)

    def compute_output_shape(self, inputs_shape):
        return tuple(inputs_shape[:-1])

    def get_config(self):
        return {**super().get_config(), "hidden_size": self.hidden_size, "activation": self.activation,
                "initializer_range": self.initializer_range}


def masked_lm_head(word_embeddings, config, name="generator_predictions"):
    """The generator head, tied to `word_embeddings` (a `ReversibleEmbedding`)."""
    return keras_hub.layers.MaskedLMHead(
        token_embedding=word_embeddings,
        intermediate_activation=activation(config.hidden_act),
        layer_norm_epsilon=config.layer_norm_eps,
        kernel_initializer=keras.initializers.TruncatedNormal(stddev=config.initializer_range),
        name=name)
