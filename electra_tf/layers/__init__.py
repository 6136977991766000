"""Keras layers the ELECTRA networks are built from: embeddings, transformer block, heads, activations, dropout.

keras-hub's layers are reused where they fit (`ReversibleEmbedding`,
`PositionEmbedding`, `MaskedLMHead`); the transformer block is our own
(`transformer_layer.py`, in the shape TensorFlow's CPU graph rewrites fuse; the speed
switches that run it, such as a trace shared by a network's blocks, are in `training/`), and
the rest is what ELECTRA has and no library does.
"""
