"""`ElectraChoiceClassifier`: one score per choice (SWAG) on the encoder, each choice encoded on its own and scored
by Hugging Face's `SequenceSummary` head; inputs `[batch, choices, sequence]` (`num_choices=None`: any number).

Example:
>>> import numpy as np
>>> from electra_tf import ElectraConfig
>>> config = ElectraConfig(vocab_size=100, embedding_size=16, hidden_size=32,
...                        num_layers=1, num_heads=2, intermediate_size=64)
>>> batch = {name: np.ones((2, 3, 5), "int32") for name in ("input_ids", "attention_mask", "token_type_ids")}
>>> ElectraChoiceClassifier(config, num_choices=3)(batch)["logits"].shape
TensorShape([2, 3])
>>> ElectraChoiceClassifier(config, num_choices=None)(batch)["logits"].shape
TensorShape([2, 3])
"""

import keras

from electra_tf.layers.activations import activation
from electra_tf.layers.choice_reshape import ChoiceReshape
from electra_tf.models.base import INPUT_NAMES, ElectraNetwork, as_config, truncated_normal
from electra_tf.models.encoder import ElectraModel


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraChoiceClassifier(ElectraNetwork):
    """Logits `[batch, num_choices]`."""

    hf_class = "ElectraForMultipleChoice"
    serving_task = "multiple_choice"

    def __init__(self, config, num_choices=4, **kwargs):
        config = as_config(config)
        backbone = ElectraModel(config, name="electra")
        inputs = {name: keras.Input(shape=(num_choices, None), dtype="int32", name=name) for name in INPUT_NAMES}
        flat = {name: ChoiceReshape(name=f"fold_{name}")(tensor) for name, tensor in inputs.items()}
        encoded = backbone(flat)
        x = encoded["last_hidden_state"][:, 0]
        x = keras.layers.Dense(config.hidden_size, activation=activation(config.hidden_act),
                               kernel_initializer=truncated_normal(config), name="summary")(x)
        x = keras.layers.Dropout(config.hidden_dropout)(x)
        scores = keras.layers.Dense(1, kernel_initializer=truncated_normal(config), name="classifier")(x)
        logits = ChoiceReshape(num_choices, unfold=True, name="choice_logits")(scores, like=inputs["input_ids"])
        super().__init__(inputs=inputs, outputs={"logits": logits}, **kwargs)
        self.keep_encoder_call(flat, encoded)
        self.config = config
        self.backbone = backbone
        self.num_choices = num_choices

    def get_config(self):
        return {**super().get_config(), "num_choices": self.num_choices}
