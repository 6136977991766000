"""`ElectraQuestionAnswerer`: extractive question answering (SQuAD) on the encoder: the original joint head (default;
`electra_tf.layers.qa_head`, end logits `[B, K, L]` given `start_candidates`, an optional `start_positions` input,
`answerable_logits` for SQuAD 2.0) or Hugging Face's `qa_outputs` (`head="huggingface"`).

Example:
>>> import numpy as np
>>> from electra_tf import ElectraConfig
>>> config = ElectraConfig(vocab_size=100, embedding_size=16, hidden_size=32,
...                        num_layers=1, num_heads=2, intermediate_size=64)
>>> batch = {"input_ids": np.array([[2, 7, 3, 9, 8, 3]]), "attention_mask": np.ones((1, 6), "int32"),
...          "token_type_ids": np.array([[0, 0, 0, 1, 1, 1]]), "start_positions": None}
>>> outputs = ElectraQuestionAnswerer(config, beam_size=2)(batch)
>>> sorted(outputs), outputs["end_logits"].shape
(['answerable_logits', 'end_logits', 'start_candidates', 'start_logits'], TensorShape([1, 2, 6]))
"""

import keras

from electra_tf.layers.activations import gelu_erf
from electra_tf.layers.qa_head import MASKED, JointEndLogits, StartWeightedSummary, answer_mask
from electra_tf.models.base import INPUT_NAMES, ElectraNetwork, as_config, model_inputs, truncated_normal
from electra_tf.models.encoder import ElectraModel
from electra_tf.models.sequence_classification import check_head


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraQuestionAnswerer(ElectraNetwork):
    """Start and end logits over the sequence; `beam_size`, `answerable_classifier` and `hidden_size` are the
    original head's."""

    hf_class = "ElectraForQuestionAnswering"
    checkpoint_arguments = ("head",)
    serving_task = "question_answering"

    def __init__(self, config, head="original", beam_size=20, answerable_classifier=True, hidden_size=512,
                 **kwargs):
        config = as_config(config)
        check_head(head)
        backbone = ElectraModel(config, name="electra")
        inputs = model_inputs()
        encoded = backbone(inputs)
        sequence = encoded["last_hidden_state"]
        if head == "huggingface":
            logits = keras.layers.Dense(2, kernel_initializer=truncated_normal(config), name="qa_outputs")(sequence)
            start, end = keras.ops.unstack(logits, 2, axis=-1)
            outputs = {"start_logits": start, "end_logits": end}
        else:
            inputs["start_positions"] = keras.Input(shape=(), dtype="int32", name="start_positions", optional=True)
            mask = answer_mask(inputs["attention_mask"], inputs["token_type_ids"])
            start = keras.ops.squeeze(keras.layers.Dense(1, name="start_logits")(sequence), -1)
            start = start - MASKED * (1.0 - mask)
            end, candidates = JointEndLogits(beam_size, hidden_size, name="joint_end")(
                sequence, start, mask, inputs["start_positions"])
            outputs = {"start_logits": start, "end_logits": end, "start_candidates": candidates}
            if answerable_classifier:
                summary = StartWeightedSummary(name="start_weighted_summary")(sequence, start)
                hidden = keras.layers.Dense(hidden_size, activation=gelu_erf, name="answerable_hidden")(summary)
                outputs["answerable_logits"] = keras.ops.squeeze(
                    keras.layers.Dense(1, name="answerable_output")(hidden), -1)
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.keep_encoder_call({name: inputs[name] for name in INPUT_NAMES}, encoded)
        self.config = config
        self.backbone = backbone
        self.head = head
        self.beam_size = beam_size
        self.answerable_classifier = answerable_classifier
        self.hidden_size = hidden_size

    @property
    def hf_architecture(self):
        return self.hf_class if self.head == "huggingface" else None

    def predict_step(self, data):
        """Keras's `predict_step`, with the original head's `start_positions` `None` where the data leaves it out."""
        x, _, _ = keras.utils.unpack_x_y_sample_weight(data)
        if self.head == "original" and isinstance(x, dict) and "start_positions" not in x:
            x = {**x, "start_positions": None}
        return self(x, training=False)

    def get_config(self):
        return {**super().get_config(), "head": self.head, "beam_size": self.beam_size,
                "answerable_classifier": self.answerable_classifier, "hidden_size": self.hidden_size}
