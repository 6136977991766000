"""Learns a WordPiece vocabulary (`vocab.txt`) from text files.

    python -m electra_tf.tools.build_vocab --input_files='corpus/*.txt' --vocab_size=30522 \\
        --output=vocab.txt

Uses tensorflow-text's WordPiece learner through keras-hub, with BERT's
pre-tokenization options; the special tokens [PAD] [UNK] [CLS] [SEP] [MASK]
come first. An existing BERT/ELECTRA `vocab.txt` needs no rebuilding: every
tool accepts it as is.
"""

from absl import flags

FLAGS = flags.FLAGS
flags.DEFINE_string("input_files", None, "Comma-separated globs of text files (or folders).", required=True)
flags.DEFINE_integer("vocab_size", 30522, "Maximum vocabulary size, special tokens included.")
flags.DEFINE_bool("lowercase", True, "Lower-case the text (an uncased vocabulary).")
flags.DEFINE_bool("strip_accents", None, "Strip accents (default: as --lowercase).")
flags.DEFINE_string("output", "vocab.txt", "Where to write the vocabulary.")
flags.DEFINE_bool("overwrite", False, "Replace an existing --output.")
