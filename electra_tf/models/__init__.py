"""ELECTRA models: the encoder, the two pre-training networks, and the fine-tuning models on the encoder.

Each is a functional Keras model over one `ElectraModel` (its `backbone`), named
as Hugging Face names its classes, and loads any checkpoint with
`from_pretrained` (see `electra_tf.models.base`).
"""
