"""Writing our models as keras-hub presets (reading one is `checkpoints.keras_hub_preset`), and ELECTRA's text
classifier as a keras-hub task (keras-hub ships none).

`save_keras_hub_preset(model, folder, tokenizer)` writes our encoder (of any of our models) as the preset
keras-hub's own `ElectraBackbone.save_to_preset` and `ElectraTokenizer.save_to_preset` write, so
`keras_hub.models.ElectraBackbone.from_preset(folder)` loads it; a sequence classifier with the original
head is written as an `ElectraTextClassifier` task (this module's), which
`keras_hub.models.TextClassifier.from_preset(folder)` finds once `electra_tf.register_keras_objects()` ran (or
any public name of `electra_tf` was used). Reading a
keras-hub preset is `from_pretrained(folder)` on any of our models (`checkpoints.keras_hub_preset`).

What keras-hub's `ElectraBackbone` lacks, and how it is mapped:

- **exact GELU**: keras-hub computes the tanh approximation. A model of ours with `hidden_act="gelu"`
  is written as it is, with a warning (keras-hub's outputs then differ by about 1e-3, as they do from
  Hugging Face's for the presets keras-hub ships); with `hidden_act="gelu_approximate"` the outputs are
  equal (to float round-off). `relu`, and a LayerNorm epsilon other than 1e-12, are refused.
- **no pooler** in ELECTRA: keras-hub's `pooled_dense` is written as the identity (its `pooled_output`
  is then tanh of [CLS]'s state); ELECTRA's classifier reads [CLS] directly, as `ElectraTextClassifier`.
- **the generator** and the RTD head: keras-hub has no ELECTRA pre-training model; only the encoder
  (the discriminator's, for a pre-training checkpoint) is written.
- **tokenizer**: keras-hub's WordPiece pre-tokenization is not BERT's in every detail (e.g. NFKC case
  folding, some ASCII symbols); ours is (`electra_tf.text.normalization`). Plain text tokenizes the same.

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
    """ELECTRA's classification head on keras-hub's `ElectraBackbone`: dropout → dense on [CLS]'s state.

    Args:
        backbone: a `keras_hub.models.ElectraBackbone`.
        num_classes: classes.
        preprocessor: an `ElectraTextClassifierPreprocessor`, or None.
        activation: of the logits (None: logits).
        dropout: before the dense layer.
    """

    backbone_cls = keras_hub.models.ElectraBackbone
    preprocessor_cls = ElectraTextClassifierPreprocessor

    def __init__(self, backbone, num_classes, preprocessor=None, activation=None, dropout=0.1, **kwargs):
        # === Layers ===
        self.backbone = backbone
        self.preprocessor = preprocessor
        self.output_dropout = keras.layers.Dropout(dropout, dtype=backbone.dtype_policy, name="classifier_dropout")
        self.output_dense = keras.layers.Dense(num_classes, activation=activation, dtype=backbone.dtype_policy,
                                               name="logits")
        # === Functional Model ===
        inputs = backbone.input
        cls_state = backbone(inputs)["sequence_output"][:, backbone.cls_token_index, :]
        outputs = self.output_dense(self.output_dropout(cls_state))
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        # === Config ===
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
    """Writes `model`'s encoder (and the original classification head) as a keras-hub preset in `folder`,
    with `tokenizer` (default: the model's preprocessor's) as keras-hub's `ElectraTokenizer`."""
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
