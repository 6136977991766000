"""Text: the in-graph WordPiece tokenizer, vocabularies and their learning, normalization, featurization."""
