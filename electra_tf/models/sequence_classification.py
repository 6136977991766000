"""`ElectraSequenceClassifier`: a sentence (pair) classifier, or a regressor (`num_labels=1`), on the encoder, with
Hugging Face's head (the default, loads in `transformers`) or the original's (`head="original"`).

Example:
>>> import numpy as np
>>> from electra_tf import ElectraConfig
>>> config = ElectraConfig(vocab_size=100, embedding_size=16, hidden_size=32,
...                        num_layers=1, num_heads=2, intermediate_size=64)
>>> model = ElectraSequenceClassifier(config, num_labels=3)
>>> batch = {"input_ids": np.array([[2, 7, 9, 3]]), "attention_mask": np.ones((1, 4), "int32"),
...          "token_type_ids": np.zeros((1, 4), "int32")}
>>> model(batch)["logits"].shape, model.serving_task
(TensorShape([1, 3]), 'classification')
"""

import keras

from electra_tf.layers.activations import activation
from electra_tf.models.base import ElectraNetwork, as_config, model_inputs, truncated_normal
from electra_tf.models.encoder import ElectraModel

HEADS = ("original", "huggingface")


def check_head(head):
    if head not in HEADS:
        raise ValueError(f"head must be one of {HEADS}, got {head!r}")


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraSequenceClassifier(ElectraNetwork):
    """Logits `[batch, num_labels]` from the [CLS] token; `classifier_dropout` defaults to `hidden_dropout`."""

    takes_text = True
    hf_class = "ElectraForSequenceClassification"
    checkpoint_arguments = ("head", "num_labels", "classifier_dropout")

    def __init__(self, config, num_labels=2, head="huggingface", classifier_dropout=None, **kwargs):
        config = as_config(config)
        check_head(head)
        dropout = config.hidden_dropout if classifier_dropout is None else classifier_dropout
        backbone = ElectraModel(config, name="electra")
        inputs = model_inputs()
        encoded = backbone(inputs)
        x = encoded["last_hidden_state"][:, 0]
        if head == "huggingface":
            x = keras.layers.Dropout(dropout)(x)
            x = keras.layers.Dense(config.hidden_size, activation=activation(config.hidden_act),
                                   kernel_initializer=truncated_normal(config), name="dense")(x)
        x = keras.layers.Dropout(dropout)(x)
        logits = keras.layers.Dense(num_labels, kernel_initializer=truncated_normal(config), name="out_proj")(x)
        super().__init__(inputs=inputs, outputs={"logits": logits}, **kwargs)
        self.keep_encoder_call(inputs, encoded)
        self.config = config
        self.backbone = backbone
        self.num_labels = num_labels
        self.head = head
        self.classifier_dropout = classifier_dropout

    @property
    def hf_architecture(self):
        return self.hf_class if self.head == "huggingface" else None

    @property
    def serving_task(self):
        return "regression" if self.num_labels == 1 else "classification"

    def get_config(self):
        return {**super().get_config(), "num_labels": self.num_labels, "head": self.head,
                "classifier_dropout": self.classifier_dropout}
