"""Layer-wise learning-rate decay for fine-tuning: lower layers move less.

The variables of layer depth d get `lr * decay ** (top - d)`: the task head
(depth L + 1) the full rate, transformer layer i (depth i + 1) `decay ** (L - i)`,
the embeddings (depth 0) `decay ** (L + 1)`. The original code has the top
encoder layer one step too low (a pooler that was removed left
`top = L + 2`; google-research/electra #51, confirmed by the authors, and
the published results were produced with it): `original_top_layer=True`
reproduces that.

Keras has no per-variable learning rate (and Adam is invariant to scaling
gradients, so that is no way round it): `training.optimization.AdamW` takes
these multipliers (`lr_multipliers`) and scales each variable's step (Adam
update and decoupled weight decay, as the original) by its own.

Example:
>>> from electra_tf import ElectraConfig, ElectraForSequenceClassification
>>> config = ElectraConfig(vocab_size=50, embedding_size=8, hidden_size=8, num_layers=2, num_heads=2,
...                        intermediate_size=16)
>>> rates = layerwise_lr_multipliers(ElectraForSequenceClassification(config), decay=0.5)
>>> rates["out_proj/kernel"], rates["transformer_layer_1/feedforward_output_dense/bias"], \
rates["embeddings/word_embeddings/embeddings"]
(1.0, 0.5, 0.125)
"""

from electra_tf.checkpoints.mapping import backbone_of


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
