"""`ElectraEncoder`: the ELECTRA encoder (Hugging Face's `ElectraModel`, keras-hub's `ElectraBackbone`).

embeddings (E) → `embeddings_project` (E→H, only when E ≠ H) → L post-LN
transformer blocks with exact GELU. No pooler: ELECTRA has none.
"""

import keras

from electra_tf.layers.activations import activation
from electra_tf.layers.embeddings import ElectraEmbedding
from electra_tf.layers.transformer_layer import ElectraTransformerLayer
from electra_tf.models.base import ElectraNetwork, as_config, model_inputs, truncated_normal


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraEncoder(ElectraNetwork):
    """The ELECTRA transformer encoder (a functional Keras model).

    Args:
        config: an `ElectraConfig` (or its dict).
        embedding: an `ElectraEmbedding` to share with another model; a new
            one is made when `None`.
        output_hidden_states: also output `hidden_states`, the encoder input
            and every layer's output, stacked: `[batch, L + 1, sequence, H]`.

    Inputs: a dict of int32 `[batch, sequence]` tensors `input_ids`,
    `attention_mask` (1 for real tokens, 0 for padding) and `token_type_ids`.
    Outputs: a dict with `last_hidden_state` `[batch, sequence, H]`.

    Example:
    >>> import numpy as np
    >>> from electra_tf import ElectraConfig
    >>> config = ElectraConfig(vocab_size=100, embedding_size=16, hidden_size=32,
    ...                        num_layers=2, num_heads=2, intermediate_size=64)
    >>> model = ElectraEncoder(config)
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
        # === Layers ===
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

        # === Functional Model ===
        inputs = model_inputs()
        x = embedding(inputs["input_ids"], inputs["token_type_ids"])
        if embeddings_project is not None:
            x = embeddings_project(x)
        hidden_states = [x]
        for layer in transformer_layers:
            x = layer(x, padding_mask=inputs["attention_mask"])
            hidden_states.append(x)
        with_states = {"last_hidden_state": x, "hidden_states": keras.ops.stack(hidden_states, axis=1)}
        outputs = with_states if output_hidden_states else {"last_hidden_state": x}
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.keep_encoder_call(inputs, with_states)

        # === Config ===
        self.config = config
        self.output_hidden_states = output_hidden_states
        self.embedding = embedding
        self.embeddings_project = embeddings_project
        self.transformer_layers = transformer_layers

    def _build_with_hidden_states(self):
        return self if self.output_hidden_states else keras.Model(*self.__dict__["_encoder_call"])

    def get_config(self):
        return {**super().get_config(), "output_hidden_states": self.output_hidden_states}
