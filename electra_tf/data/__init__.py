"""Pre-training data: the default corpus, example packing, TFRecord shards, tf.data readers."""
