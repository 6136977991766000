"""`ElectraModel`: the ELECTRA encoder (Hugging Face's `ElectraModel`, keras-hub's `ElectraBackbone`): embeddings →
projection (when E ≠ H) → L post-LN blocks, no pooler. Its class name is the checkpoint layout (saved models hold
its weights under `electra_model/`); Keras registers it as `ElectraEncoder`.
"""

import keras

from electra_tf.layers.activations import activation
from electra_tf.layers.embeddings import ElectraEmbedding
from electra_tf.layers.transformer_layer import ElectraTransformerLayer
from electra_tf.models.base import ElectraNetwork, as_config, model_inputs, truncated_normal


@keras.saving.register_keras_serializable(package="electra_tf", name="ElectraEncoder")
class ElectraModel(ElectraNetwork):
    """The ELECTRA transformer encoder: `last_hidden_state` `[batch, sequence, H]` (with `output_hidden_states`,
    also every layer's, `[batch, L + 1, sequence, H]`); `embedding`: an `ElectraEmbedding` to share.

    Example:
    >>> import numpy as np
    >>> from electra_tf import ElectraConfig
    >>> config = ElectraConfig(vocab_size=100, embedding_size=16, hidden_size=32,
    ...                        num_layers=2, num_heads=2, intermediate_size=64)
    >>> model = ElectraModel(config)
    >>> batch = {"input_ids": np.array([[2, 7, 9, 3]]),
    ...          "attention_mask": np.ones((1, 4), "int32"),
    ...          "token_type_ids": np.zeros((1, 4), "int32")}
    >>> model(batch)["last_hidden_state"].shape
    TensorShape([1, 4, 32])
    """

    takes_text = True
    hf_class = "ElectraModel"

    def __init__(self, config, embedding=None, output_hidden_states=False, **kwargs):
        config = as_config(config)
        if embedding is None:
            embedding = ElectraEmbedding(
                config.vocab_size, config.embedding_size,
                max_position_embeddings=config.max_position_embeddings,
                type_vocab_size=config.type_vocab_size,
                initializer_range=config.initializer_range,
                layer_norm_eps=config.layer_norm_eps, dropout=config.hidden_dropout,
                name="embeddings")
        elif embedding.embedding_size != config.embedding_size:
            raise ValueError(f"shared embedding has width {embedding.embedding_size}, "
                             f"but config.embedding_size is {config.embedding_size}")
        embeddings_project = None
        if config.embedding_size != config.hidden_size:
            embeddings_project = keras.layers.Dense(
                config.hidden_size, kernel_initializer=truncated_normal(config),
                name="embeddings_project")
        transformer_layers = [
            ElectraTransformerLayer(
                intermediate_dim=config.intermediate_size, num_heads=config.num_heads,
                dropout=config.hidden_dropout, attention_dropout=config.attention_dropout,
                activation=activation(config.hidden_act), layer_norm_epsilon=config.layer_norm_eps,
                kernel_initializer=truncated_normal(config), name=f"transformer_layer_{i}")
            for i in range(config.num_layers)
        ]

        inputs = model_inputs()
        encoded = _encode(inputs, embedding, embeddings_project, transformer_layers)
        outputs = {key: encoded[key] for key in ("last_hidden_state", "hidden_states")[:1 + output_hidden_states]}
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.keep_encoder_call(inputs, encoded)

        self.config = config
        self.output_hidden_states = output_hidden_states
        self.embedding = embedding
        self.embeddings_project = embeddings_project
        self.transformer_layers = transformer_layers

    def _build_with_outputs(self, names):
        if "attentions" not in names:  # this graph's own tensors
            inputs, encoded = self.__dict__["_encoder_call"]
        else:  # the same layers called again, also giving their attention probabilities
            inputs = model_inputs()
            encoded = _encode(inputs, self.embedding, self.embeddings_project, self.transformer_layers,
                              attentions=True)
        return keras.Model(inputs, {key: encoded[key] for key in ("last_hidden_state", *names)})

    def get_config(self):
        return {**super().get_config(), "output_hidden_states": self.output_hidden_states}


def _encode(inputs, embedding, embeddings_project, transformer_layers, attentions=False):
    """The encoder's graph on `inputs`: `last_hidden_state`, `hidden_states` `[batch, L + 1, sequence, H]` and,
    with `attentions`, each layer's attention probabilities, `[batch, L, heads, sequence, sequence]`."""
    x = embedding(inputs["input_ids"], inputs["token_type_ids"])
    if embeddings_project is not None:
        x = embeddings_project(x)
    hidden_states, probabilities = [x], []
    for layer in transformer_layers:
        if attentions:
            x, layer_probabilities = _WithAttentionScores(layer)(x, padding_mask=inputs["attention_mask"])
            probabilities.append(layer_probabilities)
        else:
            x = layer(x, padding_mask=inputs["attention_mask"])
        hidden_states.append(x)
    encoded = {"last_hidden_state": x, "hidden_states": keras.ops.stack(hidden_states, axis=1)}
    if attentions:
        encoded["attentions"] = keras.ops.stack(probabilities, axis=1)
    return encoded


class _WithAttentionScores(keras.layers.Layer):
    """A block's call that also gives its attention probabilities (Keras fixes a layer's number of outputs at its
    first call); it holds no weights and is never saved."""

    def __init__(self, block, **kwargs):
        super().__init__(name=f"{block.name}_with_attention_scores", **kwargs)
        self.block = block

    def call(self, inputs, padding_mask=None):
        return self.block.call(inputs, padding_mask=padding_mask, return_attention_scores=True)

    def compute_output_spec(self, inputs, padding_mask=None):
        return self.block.compute_output_spec(inputs, return_attention_scores=True)
