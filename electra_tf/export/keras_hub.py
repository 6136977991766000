"""Writing our models as keras-hub presets `keras_hub.models.ElectraBackbone.from_preset` loads, and ELECTRA's text
classifier as a keras-hub task (keras-hub ships none); what keras-hub's backbone lacks: docs/checkpoints.md.

Example:
>>> ElectraTextClassifier.backbone_cls is keras_hub.models.ElectraBackbone
True
"""

import logging

import keras
import keras_hub
import numpy as np

from electra_tf.checkpoints.keras_hub_preset import hub_name
from electra_tf.checkpoints.mapping import backbone_of
from electra_tf.models.sequence_classification import ElectraSequenceClassifier

logger = logging.getLogger("electra_tf")
_LAYER_NORM_EPSILON = 1e-12  # keras-hub's ElectraBackbone hard-codes it


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraTextClassifierPreprocessor(keras_hub.models.TextClassifierPreprocessor):
    """keras-hub's text classifier preprocessor for ELECTRA (its tokenizer, `[CLS] A [SEP] B [SEP]`)."""

    backbone_cls = keras_hub.models.ElectraBackbone
    tokenizer_cls = keras_hub.models.ElectraTokenizer


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraTextClassifier(keras_hub.models.TextClassifier):
    """ELECTRA's classification head on keras-hub's `ElectraBackbone`: dropout, then a dense layer on [CLS]'s state."""

    backbone_cls = keras_hub.models.ElectraBackbone
    preprocessor_cls = ElectraTextClassifierPreprocessor

    def __init__(self, backbone, num_classes, preprocessor=None, activation=None, dropout=0.1, **kwargs):
        self.backbone = backbone
        self.preprocessor = preprocessor
        self.output_dropout = keras.layers.Dropout(dropout, dtype=backbone.dtype_policy, name="classifier_dropout")
        self.output_dense = keras.layers.Dense(num_classes, activation=activation, dtype=backbone.dtype_policy,
                                               name="logits")
        inputs = backbone.input
        cls_state = backbone(inputs)["sequence_output"][:, backbone.cls_token_index, :]
        outputs = self.output_dense(self.output_dropout(cls_state))
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.num_classes = num_classes
        self.activation = keras.activations.get(activation)
        self.dropout = dropout

    def get_config(self):
        return {**super().get_config(), "num_classes": self.num_classes,
                "activation": keras.activations.serialize(self.activation), "dropout": self.dropout}


def _hub_backbone(encoder):
    config = encoder.config
    if config.hidden_act == "relu" or config.layer_norm_eps != _LAYER_NORM_EPSILON:
        raise ValueError(f"keras-hub's ElectraBackbone runs GELU and LayerNorm epsilon {_LAYER_NORM_EPSILON}; this "
                         f"model has hidden_act={config.hidden_act!r}, layer_norm_eps={config.layer_norm_eps}")
    if config.hidden_act == "gelu":
        logger.warning("keras-hub's ElectraBackbone computes GELU with the tanh approximation, this model the exact "
                       "GELU: the preset's outputs differ slightly (about 1e-3) from this model's")
    backbone = keras_hub.models.ElectraBackbone(
        vocab_size=config.vocab_size, num_layers=config.num_layers, num_heads=config.num_heads,
        hidden_dim=config.hidden_size, embedding_dim=config.embedding_size, intermediate_dim=config.intermediate_size,
        dropout=config.hidden_dropout, max_sequence_length=config.max_position_embeddings,
        num_segments=config.type_vocab_size)
    ours = {hub_name(variable.path): variable for variable in encoder.weights}
    for variable in backbone.weights:
        if variable.path.startswith("pooled_dense/"):  # ELECTRA has no pooler: the identity (see the docstring)
            value = np.eye(config.hidden_size) if variable.path.endswith("kernel") else np.zeros(config.hidden_size)
        else:
            value = ours[variable.path].numpy()
        variable.assign(value.astype(variable.dtype))
    return backbone


def save_keras_hub_preset(model, folder, tokenizer=None):
    """Writes `model`'s encoder (with an original classification head, as an `ElectraTextClassifier`) as a keras-hub
    preset in `folder`, with `tokenizer` (default: the model's preprocessor's)."""
    tokenizer = tokenizer or (model.preprocessor.tokenizer if getattr(model, "preprocessor", None) else None)
    backbone = _hub_backbone(backbone_of(model))
    hub_tokenizer = None if tokenizer is None else keras_hub.models.ElectraTokenizer(
        vocabulary=tokenizer.get_vocabulary(), lowercase=bool(tokenizer.lowercase),
        strip_accents=bool(tokenizer.strip_accents))
    if isinstance(model, ElectraSequenceClassifier) and model.head == "original":
        preprocessor = None if hub_tokenizer is None else ElectraTextClassifierPreprocessor(
            hub_tokenizer, sequence_length=model.preprocessor.sequence_length if model.preprocessor else 128)
        task = ElectraTextClassifier(backbone, model.num_labels, preprocessor=preprocessor,
                                     dropout=model.classifier_dropout or model.config.hidden_dropout)
        head = model.get_layer("out_proj")
        task.output_dense.set_weights([weight.numpy() for weight in head.weights])
        task.save_to_preset(folder)
        return
    backbone.save_to_preset(folder)
    if hub_tokenizer is not None:
        hub_tokenizer.save_to_preset(folder)
