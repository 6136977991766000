"""transformers' ELECTRA model classes: thin subclasses of the core models (same layers, weights, checkpoints and
exports) with `TransformersCalls` mixed in; the `TF*` names are the same classes.

Example:
>>> from electra_tf import ElectraConfig
>>> from electra_tf.models.sequence_classification import ElectraSequenceClassifier
>>> issubclass(ElectraForSequenceClassification, ElectraSequenceClassifier)
True
>>> model = ElectraForMultipleChoice(ElectraConfig(vocab_size=30, embedding_size=8, hidden_size=16, num_layers=1,
...                                                num_heads=2, intermediate_size=32))
>>> model(input_ids=[[[2, 5, 3], [2, 6, 3], [2, 7, 3]]], labels=[2]).logits.shape   # any number of choices
TensorShape([1, 3])
"""

import keras

from electra_tf.models.discriminator import ElectraDiscriminator
from electra_tf.models import encoder
from electra_tf.models.generator import ElectraGenerator
from electra_tf.models.multiple_choice import ElectraChoiceClassifier
from electra_tf.models.question_answering import ElectraQuestionAnswerer
from electra_tf.models.sequence_classification import ElectraSequenceClassifier
from electra_tf.models.token_classification import ElectraTokenClassifier
from electra_tf.transformers import losses
from electra_tf.transformers.calls import TransformersCalls
from electra_tf.transformers.outputs import BASE_MODEL_FIELDS, QUESTION_ANSWERING_FIELDS
from electra_tf.transformers.tf_dataset import prepare_tf_dataset


class _TransformersModel(TransformersCalls):
    """What every room class adds to its core model besides the call: transformers' data preparation."""

    prepare_tf_dataset = prepare_tf_dataset  # (`electra_tf.transformers.tf_dataset`; the model is its first argument)


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraModel(_TransformersModel, encoder.ElectraModel):
    """transformers' `TFElectraModel`: the encoder; `last_hidden_state` (and `hidden_states`, `attentions`)."""

    output_fields = BASE_MODEL_FIELDS


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraForPreTraining(_TransformersModel, ElectraDiscriminator):
    """transformers' `TFElectraForPreTraining`: the discriminator; `labels` are 1 where a token was replaced."""

    loss_inputs = ("labels",)
    head_loss = staticmethod(losses.replaced_token_detection)
    per_token_labels = True


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraForMaskedLM(_TransformersModel, ElectraGenerator):
    """transformers' `TFElectraForMaskedLM`: the generator; without `mask_positions`, logits at every position
    (`[batch, sequence, vocab]`, as transformers gives them); `labels` the token ids, -100 where none."""

    loss_inputs = ("labels",)
    head_loss = staticmethod(losses.masked_lm)
    per_token_labels = True

    def complete_inputs(self, features):
        features = super().complete_inputs(features)
        if features.get("mask_positions") is None:
            positions = keras.ops.arange(keras.ops.shape(features["input_ids"])[1], dtype="int32")
            features["mask_positions"] = keras.ops.broadcast_to(positions, keras.ops.shape(features["input_ids"]))
        return features


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraForSequenceClassification(_TransformersModel, ElectraSequenceClassifier):
    """transformers' `TFElectraForSequenceClassification`; `labels`: class ids, scores (`num_labels=1`) or
    multi-hot floats."""

    loss_inputs = ("labels",)
    head_loss = staticmethod(losses.sequence_classification)


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraForTokenClassification(_TransformersModel, ElectraTokenClassifier):
    """transformers' `TFElectraForTokenClassification`; `labels`: a tag id per token, -100 where none."""

    loss_inputs = ("labels",)
    head_loss = staticmethod(losses.token_classification)
    per_token_labels = True


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraForQuestionAnswering(_TransformersModel, ElectraQuestionAnswerer):
    """`ElectraQuestionAnswerer` called as transformers' `TFElectraForQuestionAnswering`, ELECTRA's original head
    by default (`TFElectraForQuestionAnswering`: transformers')."""

    head_loss = staticmethod(losses.question_answering)
    output_fields = QUESTION_ANSWERING_FIELDS

    @property
    def loss_inputs(self):
        """transformers' labels for its head; the original head takes `start_positions` as an input."""
        return ("start_positions", "end_positions") if self.head == "huggingface" else ()

    @property
    def no_loss_hint(self):
        return "head='original' computes no loss: head='huggingface' is transformers' head, with its loss" \
            if self.head == "original" else None

    def complete_inputs(self, features):
        features = super().complete_inputs(features)
        if self.head == "original":  # `start_positions` is optional: Keras wants the key, so None when missing
            features.setdefault("start_positions", None)
        return features


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraForMultipleChoice(_TransformersModel, ElectraChoiceClassifier):
    """transformers' `TFElectraForMultipleChoice`: any number of choices per call (`num_choices=None`)."""

    loss_inputs = ("labels",)
    head_loss = staticmethod(losses.multiple_choice)

    def __init__(self, config, num_choices=None, **kwargs):
        super().__init__(config, num_choices=num_choices, **kwargs)


@keras.saving.register_keras_serializable(package="electra_tf")
class TFElectraForQuestionAnswering(ElectraForQuestionAnswering):
    """transformers' `TFElectraForQuestionAnswering`: transformers' head by default (`qa_outputs`:
    `start_logits` and `end_logits` `[batch, sequence]`)."""

    def __init__(self, config, head="huggingface", **kwargs):
        super().__init__(config, head=head, **kwargs)
