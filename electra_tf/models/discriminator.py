"""`ElectraDiscriminator`: the encoder plus the replaced-token-detection head.

Hugging Face's `ElectraForPreTraining`; the model ELECTRA pre-training keeps.
"""

import keras

from electra_tf.layers.activations import activation
from electra_tf.layers.heads import ReplacedTokenDetectionHead
from electra_tf.models.base import ElectraNetwork, as_config, model_inputs
from electra_tf.models.encoder import ElectraModel


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraDiscriminator(ElectraNetwork):
    """Per-token "replaced" logits over an `ElectraModel` (a functional Keras model).

    Args:
        config: an `ElectraConfig` (or its dict).
        embedding: an `ElectraEmbedding` to share; a new one when `None`.
        output_hidden_states: also output every layer's hidden states.

    Outputs a dict: `last_hidden_state` `[batch, sequence, H]` and `logits`
    `[batch, sequence]` (sigmoid gives the probability that a token was
    replaced).

    Example:
    >>> import numpy as np
    >>> from electra_tf import ElectraConfig, ElectraDiscriminator
    >>> config = ElectraConfig(vocab_size=100, embedding_size=16, hidden_size=32,
    ...                        num_layers=2, num_heads=2, intermediate_size=64)
    >>> batch = {"input_ids": np.array([[2, 7, 9, 3]]),
    ...          "attention_mask": np.ones((1, 4), "int32"),
    ...          "token_type_ids": np.zeros((1, 4), "int32")}
    >>> ElectraDiscriminator(config)(batch)["logits"].shape
    TensorShape([1, 4])
    """

    takes_text = True
    hf_class = "ElectraForPreTraining"
    serving_task = "discriminator"

    def __init__(self, config, embedding=None, output_hidden_states=False, **kwargs):
        config = as_config(config)
        # === Layers ===
        backbone = ElectraModel(config, embedding=embedding,
                                output_hidden_states=output_hidden_states, name="electra")
        head = ReplacedTokenDetectionHead(config.hidden_size, activation=activation(config.hidden_act),
                                          initializer_range=config.initializer_range,
                                          name="discriminator_predictions")
        # === Functional Model ===
        inputs = model_inputs()
        encoded = backbone(inputs)
        outputs = {**encoded, "logits": head(encoded["last_hidden_state"])}
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.keep_encoder_call(inputs, encoded)
        # === Config ===
        self.config = config
        self.output_hidden_states = output_hidden_states
        self.backbone = backbone
        self.head = head

    def get_config(self):
        return {**super().get_config(), "output_hidden_states": self.output_hidden_states}
