"""Learns a WordPiece vocabulary (`vocab.txt`) from a corpus (text, JSONL, Parquet files, a TFDS dataset).

    python -m electra_tf.tools.build_vocab --input_files='corpus/*.txt' --vocab_size=30522 \\
        --output=vocab.txt [--runner=beam --beam_options='--direct_num_workers=2']

Uses tensorflow-text's WordPiece learner on the words the tokenizer sees (its
splitting and normalisation: full-width punctuation stays full-width); every
character seen --min_char_count times gets a token, whatever the script; the
special tokens [PAD] [UNK] [CLS] [SEP] [MASK] come first. Prints the share of
[UNK] the vocabulary leaves in the corpus's first 4 M characters (a warning above 2 %) and
records it in `<output name>_report.json` beside the vocabulary. With
--runner=beam the words are counted in an Apache Beam pipeline (the same
vocab.txt; docs/data_at_scale.md). An existing BERT/ELECTRA `vocab.txt` (the
BERT-Chinese one too) needs no rebuilding: every tool accepts it as is.
"""

from absl import flags

from electra_tf.tools.common import define_corpus_flags

FLAGS = flags.FLAGS
define_corpus_flags()
flags.DEFINE_integer("vocab_size", 30522, "Maximum vocabulary size, special tokens included.")
flags.DEFINE_integer("min_char_count", 1, "A character seen this many times gets a token (rarer ones become "
                     "[UNK]); the most frequent first when they do not all fit in --vocab_size. On a large corpus "
                     "raise it, so that stray characters do not take the room of longer pieces.")
flags.DEFINE_bool("lowercase", True, "Lower-case the text (an uncased vocabulary).")
flags.DEFINE_bool("strip_accents", None, "Strip accents (default: as --lowercase).")
flags.DEFINE_string("output", "vocab.txt", "Where to write the vocabulary.")
flags.DEFINE_bool("overwrite", False, "Replace an existing --output.")
