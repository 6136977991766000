"""ELECTRA models: the encoder, the two pre-training networks and the task models, each a functional Keras model over
one `ElectraModel` (its `backbone`); transformers' names and calls are subclasses of these, in `electra_tf.transformers`.
"""
