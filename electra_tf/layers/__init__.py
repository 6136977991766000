"""Keras layers the ELECTRA networks are built from: embeddings, transformer block, heads, activations, dropout.

keras-hub's layers are reused where they fit (`ReversibleEmbedding`,
`PositionEmbedding`, `MaskedLMHead`); the transformer block is our own
(`transformer_layer.py`, in the shape TensorFlow's CPU graph rewrites fuse; its speed
switches by name in `block_options.py`, its shared trace in `shared_trace.py`), and
the rest is what ELECTRA has and no library does.
"""
