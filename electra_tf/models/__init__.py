"""ELECTRA models: the encoder, the two pre-training networks, and the fine-tuning models on the encoder.

Each is a functional Keras model over one `ElectraModel` encoder (its `backbone`), called as any
Keras model (a dict of tensors in, a dict out), and loads any checkpoint with `from_pretrained` (see
`electra_tf.models.base`). transformers' names and calls (`ElectraForSequenceClassification`, `model(**tokens)`)
are subclasses of these, in `electra_tf.transformers`.
"""
