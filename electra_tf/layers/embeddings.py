"""The ELECTRA embedding block: word + position + token type → LayerNorm → dropout, one layer so that the generator
and the discriminator can share it whole, as the original's `electra/embeddings` scope.
"""

import keras
import keras_hub

from electra_tf.layers.counter_dropout import CounterDropout


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraEmbedding(keras.layers.Layer):
    """Embeds `input_ids` and `token_type_ids` at `embedding_size`.

    Example:
    >>> import numpy as np
    >>> layer = ElectraEmbedding(vocab_size=100, embedding_size=8)
    >>> layer(np.array([[2, 5, 3]]), np.array([[0, 0, 1]])).shape
    TensorShape([1, 3, 8])
    """

    def __init__(self, vocab_size, embedding_size, max_position_embeddings=512,
                 type_vocab_size=2, initializer_range=0.02, layer_norm_eps=1e-12,
                 dropout=0.1, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size = vocab_size
        self.embedding_size = embedding_size
        self.max_position_embeddings = max_position_embeddings
        self.type_vocab_size = type_vocab_size
        self.initializer_range = initializer_range
        self.layer_norm_eps = layer_norm_eps
        self.dropout_rate = dropout

        init = keras.initializers.TruncatedNormal(stddev=initializer_range)
        self.word_embeddings = keras_hub.layers.ReversibleEmbedding(
            vocab_size, embedding_size, embeddings_initializer=init,
            dtype=self.dtype_policy, name="word_embeddings")
        self.position_embeddings = keras_hub.layers.PositionEmbedding(
            sequence_length=max_position_embeddings, initializer=init,
            dtype=self.dtype_policy, name="position_embeddings")
        self.token_type_embeddings = keras.layers.Embedding(
            type_vocab_size, embedding_size, embeddings_initializer=init,
            dtype=self.dtype_policy, name="token_type_embeddings")
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_eps, dtype=self.dtype_policy, name="layer_norm")
        self.dropout = CounterDropout(dropout, dtype=self.dtype_policy, name="dropout")

    def build(self, input_ids_shape, token_type_ids_shape=None):
        self.word_embeddings.build(input_ids_shape)
        embedded_shape = tuple(input_ids_shape) + (self.embedding_size,)
        self.position_embeddings.build(embedded_shape)
        self.token_type_embeddings.build(input_ids_shape)
        self.layer_norm.build(embedded_shape)
        self.built = True

    def call(self, input_ids, token_type_ids, training=None):
        x = self.word_embeddings(input_ids)
        x = x + self.position_embeddings(x) + self.token_type_embeddings(token_type_ids)
        x = self.layer_norm(x)
        return self.dropout(x, training=training)

    def compute_output_shape(self, input_ids_shape, token_type_ids_shape=None):
        return tuple(input_ids_shape) + (self.embedding_size,)

    def get_config(self):
        return {**super().get_config(), "vocab_size": self.vocab_size, "embedding_size": self.embedding_size,
                "max_position_embeddings": self.max_position_embeddings, "type_vocab_size": self.type_vocab_size,
                "initializer_range": self.initializer_range, "layer_norm_eps": self.layer_norm_eps,
                "dropout": self.dropout_rate}
