"""Keras layers the ELECTRA networks are built from: embeddings, transformer block, heads, activations, dropout.

keras-hub's layers are reused where they fit (`TransformerEncoder`,
`ReversibleEmbedding`, `PositionEmbedding`, `MaskedLMHead`); the rest is what
ELECTRA has and no library does.
"""
