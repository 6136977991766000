"""`ElectraTokenClassifier`: per-token labels (NER, chunking) on the encoder; Hugging Face's head has a dropout the
original's has not, with the same weights.

Example:
>>> import numpy as np
>>> from electra_tf import ElectraConfig
>>> config = ElectraConfig(vocab_size=100, embedding_size=16, hidden_size=32,
...                        num_layers=1, num_heads=2, intermediate_size=64)
>>> batch = {"input_ids": np.array([[2, 7, 9, 3]]), "attention_mask": np.ones((1, 4), "int32"),
...          "token_type_ids": np.zeros((1, 4), "int32")}
>>> ElectraTokenClassifier(config, num_labels=5)(batch)["logits"].shape
TensorShape([1, 4, 5])
"""

import keras

from electra_tf.models.base import ElectraNetwork, as_config, model_inputs, truncated_normal
from electra_tf.models.encoder import ElectraModel
from electra_tf.models.sequence_classification import check_head


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraTokenClassifier(ElectraNetwork):
    """Logits `[batch, sequence, num_labels]`."""

    takes_text = True
    hf_class = "ElectraForTokenClassification"
    checkpoint_arguments = ("head", "num_labels")
    serving_task = "tagging"

    def __init__(self, config, num_labels=2, head="huggingface", **kwargs):
        config = as_config(config)
        check_head(head)
        backbone = ElectraModel(config, name="electra")
        inputs = model_inputs()
        encoded = backbone(inputs)
        x = encoded["last_hidden_state"]
        if head == "huggingface":
            x = keras.layers.Dropout(config.hidden_dropout)(x)
        logits = keras.layers.Dense(num_labels, kernel_initializer=truncated_normal(config), name="classifier")(x)
        super().__init__(inputs=inputs, outputs={"logits": logits}, **kwargs)
        self.keep_encoder_call(inputs, encoded)
        self.config = config
        self.backbone = backbone
        self.num_labels = num_labels
        self.head = head

    def get_config(self):
        return {**super().get_config(), "num_labels": self.num_labels, "head": self.head}
