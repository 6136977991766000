"""`ElectraDiscriminator`: the encoder plus the replaced-token-detection head (Hugging Face's `ElectraForPreTraining`).
"""

import keras

from electra_tf.layers.activations import activation
from electra_tf.layers.heads import ReplacedTokenDetectionHead
from electra_tf.models.base import ElectraNetwork, as_config, model_inputs
from electra_tf.models.encoder import ElectraModel


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraDiscriminator(ElectraNetwork):
    """`last_hidden_state` and per-token "replaced" `logits` `[batch, sequence]`; `embedding`: one to share.

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
        backbone = ElectraModel(config, embedding=embedding,
                                output_hidden_states=output_hidden_states, name="electra")
        head = ReplacedTokenDetectionHead(config.hidden_size, activation=activation(config.hidden_act),
                                          initializer_range=config.initializer_range,
                                          name="discriminator_predictions")
        inputs = model_inputs()
        encoded = backbone(inputs)
        outputs = {**encoded, "logits": head(encoded["last_hidden_state"])}
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.keep_encoder_call(inputs, encoded)
        self.config = config
        self.output_hidden_states = output_hidden_states
        self.backbone = backbone
        self.head = head

    def get_config(self):
        return {**super().get_config(), "output_hidden_states": self.output_hidden_states}
