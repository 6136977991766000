"""ELECTRA networks: embeddings, encoder, heads, generator, discriminator, pre-trainer."""
