"""Gradient-disentangled embedding sharing (GDES; He et al., 2021, DeBERTa-V3): the discriminator's tables are
`stopgrad(E_G) + E_Δ`, so the RTD gradient trains only its residual `E_Δ` (zero at the start), never the
generator's `E_G`; `fold` gives a plain `ElectraDiscriminator` (tables `E_G + E_Δ`) for saving and export.
"""

import keras
import tensorflow as tf

from electra_tf.layers.embeddings import ElectraEmbedding
from electra_tf.models.discriminator import ElectraDiscriminator


def _tables(embedding):
    """The word, position and token-type tables of an `ElectraEmbedding`."""
    return (embedding.word_embeddings.embeddings, embedding.position_embeddings.position_embeddings,
            embedding.token_type_embeddings.embeddings)


@keras.saving.register_keras_serializable(package="electra_tf")
class DisentangledEmbedding(ElectraEmbedding):
    """`stopgrad(shared tables) + own residual tables` → LayerNorm → dropout; `shared`: the generator's
    `ElectraEmbedding`.

    Example:
    >>> import numpy as np
    >>> shared = ElectraEmbedding(vocab_size=10, embedding_size=4)
    >>> layer = DisentangledEmbedding(shared)
    >>> layer(np.array([[2, 5]]), np.array([[0, 0]])).shape
    TensorShape([1, 2, 4])
    """

    def __init__(self, shared, **kwargs):
        config = shared.get_config()
        config.pop("name")
        super().__init__(**{**config, **kwargs})
        # A function, not an attribute Keras would track: the shared tables are the generator's weights.
        self.shared = lambda: shared

    def build(self, input_ids_shape, token_type_ids_shape=None):
        shared = self.shared()
        if not shared.built:
            shared.build(input_ids_shape, token_type_ids_shape)
        super().build(input_ids_shape, token_type_ids_shape)
        for residual in _tables(self):
            residual.assign(tf.zeros_like(residual))

    def call(self, input_ids, token_type_ids, training=None):
        word, position, token_type = (
            tf.cast(tf.stop_gradient(shared) + own, self.compute_dtype)
            for shared, own in zip(_tables(self.shared()), _tables(self)))
        length = tf.shape(input_ids)[1]
        x = tf.gather(word, input_ids) + position[None, :length] + tf.gather(token_type, token_type_ids)
        x = self.layer_norm(x)
        return self.dropout(x, training=training)


def fold(discriminator):
    """A plain `ElectraDiscriminator` computing what a GDES `discriminator` computes: tables `E_G + E_Δ`.

    >>> from electra_tf import ElectraConfig
    >>> config = ElectraConfig(vocab_size=10, embedding_size=4, hidden_size=8, num_layers=1, num_heads=1,
    ...                        intermediate_size=8)
    >>> shared = ElectraEmbedding(vocab_size=10, embedding_size=4, name="embeddings")
    >>> gdes = ElectraDiscriminator(config, embedding=DisentangledEmbedding(shared, name="embeddings"))
    >>> [w.path for w in fold(gdes).weights] == [w.path for w in ElectraDiscriminator(config).weights]
    True
    """
    folded = ElectraDiscriminator(discriminator.config, name=discriminator.name)
    folded.set_weights(discriminator.get_weights())
    embedding = discriminator.backbone.embedding
    for target, shared, own in zip(_tables(folded.backbone.embedding), _tables(embedding.shared()),
                                   _tables(embedding)):
        target.assign(shared + own)
    return folded


def exported(discriminator):
    """The discriminator as it is saved and exported: a GDES one folded (`fold`), another as it is."""
    return fold(discriminator) if isinstance(discriminator.backbone.embedding, DisentangledEmbedding) else discriminator
