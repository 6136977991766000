"""Keras layers the ELECTRA networks are built from: embeddings, transformer block, heads, activations, dropout
(keras-hub's where they fit; docs/development.md says why the rest is our own).
"""
