"""Layer-wise learning-rate decay for fine-tuning: lower layers move less, each variable's rate a multiplier
that `training.optimization.AdamW(lr_multipliers=...)` applies (Keras has no per-variable rate).

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


def layerwise_lr_multipliers(model, decay=0.8, original_top_layer=False):
    """Every trainable variable's path → `decay ** (top - depth)`: the task head (depth L + 1) 1, transformer layer
    i `decay ** (L - i)`, the embeddings `decay ** (L + 1)`; `original_top_layer`: the original code's `top = L + 2`
    (google-research/electra#51)."""
    encoder = backbone_of(model)
    num_layers = len(encoder.transformer_layers)
    top = num_layers + 2 if original_top_layer else num_layers + 1
    depths = [(encoder.embedding, 0), (encoder.embeddings_project, 0),
              *((layer, i + 1) for i, layer in enumerate(encoder.transformer_layers))]
    multipliers = {}
    for layer, depth in depths:
        for variable in layer.trainable_variables if layer is not None else ():
            multipliers[variable.path] = float(decay ** (top - depth))
    for variable in model.trainable_variables:
        multipliers.setdefault(variable.path, 1.0)
    return multipliers
