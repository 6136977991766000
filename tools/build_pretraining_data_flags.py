"""Packs text files into pre-training TFRecord shards (the original ELECTRA format).

    python -m electra_tf.tools.build_pretraining_data --input_files='corpus/*.txt' \\
        --vocab_file=vocab.txt --output_dir=data --max_seq_length=128 --num_shards=64 --num_processes=2

Input: one sentence a line; a blank line ends a document (or, with
--noblanks_separate_docs, each file is one document). Each shard appears
atomically when complete, and `manifest.json` records the settings and counts.
Re-running the same command after an interruption writes only the missing
shards; the output does not depend on --num_processes.
"""

from absl import flags

FLAGS = flags.FLAGS
flags.DEFINE_string("input_files", None, "Comma-separated globs of text files (or folders).", required=True)
flags.DEFINE_string("vocab_file", None, "The WordPiece vocab.txt.", required=True)
flags.DEFINE_string("output_dir", None, "Where the shards and manifest.json go.", required=True)
flags.DEFINE_integer("max_seq_length", 128, "Example length, special tokens included.")
flags.DEFINE_integer("num_shards", 16, "Number of output shards.")
flags.DEFINE_integer("num_processes", 1, "Worker processes: keep 1 unless the corpus is hundreds of MB (each "
                     "process starts its own TensorFlow).")
flags.DEFINE_bool("blanks_separate_docs", True, "A blank line ends a document.")
flags.DEFINE_bool("lowercase", True, "Lower-case the text (uncased vocabularies).")
flags.DEFINE_bool("strip_accents", None, "Strip accents (default: as --lowercase).")
flags.DEFINE_integer("seed", 0, "Packing seed.")
