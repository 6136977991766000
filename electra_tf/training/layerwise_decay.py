"""Layer-wise learning-rate decay for fine-tuning: lower layers move less.

The variables of layer depth d get `lr * decay ** (top - d)`: the task head
(depth L + 1) the full rate, transformer layer i (depth i + 1) `decay ** (L - i)`,
the embeddings (depth 0) `decay ** (L + 1)`. The original code has the top
encoder layer one step too low (a pooler that was removed left
`top = L + 2`; google-research/electra #51, confirmed by the authors, and
the published results were produced with it): `original_top_layer=True`
reproduces that.

Keras has no per-variable learning rate (and Adam is invariant to scaling
gradients, so that is no way round it), hence `LayerwiseAdamW`: Keras's
AdamW with each variable's step (Adam update and decoupled weight decay, as
the original) scaled by its multiplier.

Example:
>>> from electra_tf import ElectraConfig, ElectraForSequenceClassification
>>> config = ElectraConfig(vocab_size=50, embedding_size=8, hidden_size=8, num_layers=2, num_heads=2,
...                        intermediate_size=16)
>>> rates = layerwise_lr_multipliers(ElectraForSequenceClassification(config), decay=0.5)
>>> rates["out_proj/kernel"], rates["transformer_layer_1/feedforward_output_dense/bias"], \
rates["embeddings/word_embeddings/embeddings"]
(1.0, 0.5, 0.125)
"""

import keras

from electra_tf.checkpoints.mapping import backbone_of
from electra_tf.util.library_internals import DecayInUpdateStep
from electra_tf.training.variable_state import PerVariableState


def _encoder_depths(encoder):
    """(variables, depth) of the encoder: embeddings 0, transformer layer i depth i + 1."""
    groups = [(encoder.embedding.trainable_variables, 0)]
    if encoder.embeddings_project is not None:
        groups.append((encoder.embeddings_project.trainable_variables, 0))
    groups += [(layer.trainable_variables, i + 1) for i, layer in enumerate(encoder.transformer_layers)]
    return groups


def layerwise_lr_multipliers(model, decay=0.8, original_top_layer=False):
    """Maps every trainable variable's path to its learning-rate multiplier.

    `model` is any of our models (its encoder is `model.backbone`); variables
    outside the encoder are the task head, at the full rate.
    """
    encoder = backbone_of(model)
    num_layers = len(encoder.transformer_layers)
    top = num_layers + 2 if original_top_layer else num_layers + 1
    multipliers = {}
    for variables, depth in _encoder_depths(encoder):
        for variable in variables:
            multipliers[variable.path] = float(decay ** (top - depth))
    for variable in model.trainable_variables:
        multipliers.setdefault(variable.path, 1.0)
    return multipliers


@keras.saving.register_keras_serializable(package="electra_tf")
class LayerwiseAdamW(DecayInUpdateStep, PerVariableState, keras.optimizers.AdamW):
    """AdamW whose step for each variable is scaled by `lr_multipliers[variable.path]`.

    Every trainable variable must have a multiplier: a missing one is an
    error at `build`, never a silent full rate.
    """

    def __init__(self, lr_multipliers, **kwargs):
        super().__init__(**kwargs)
        self.lr_multipliers = dict(lr_multipliers)

    def build(self, var_list):
        missing = [v.path for v in var_list if v.path not in self.lr_multipliers]
        if missing:
            raise ValueError(f"no learning-rate multiplier for {missing[:5]} ({len(missing)} variables)")
        self._multipliers = [self.lr_multipliers[v.path] for v in var_list]
        self._decays = [self.decays(v) for v in var_list]
        super().build(var_list)

    def update_step(self, gradient, variable, learning_rate):
        index = self.index_of(variable)
        learning_rate = keras.ops.cast(learning_rate, variable.dtype) * self._multipliers[index]
        if self._decays[index]:
            variable.assign_sub(variable * keras.ops.cast(self.weight_decay, variable.dtype) * learning_rate)
        super().update_step(gradient, variable, learning_rate)

    def get_config(self):
        return {**super().get_config(), "lr_multipliers": self.lr_multipliers}
