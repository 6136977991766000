"""Packs a corpus into pre-training TFRecord shards (the original ELECTRA format).

    python -m electra_tf.tools.build_pretraining_data --input_files='corpus/*.txt' \\
        --vocab_file=vocab.txt --output_dir=data --max_seq_length=128 --num_shards=64 --num_processes=2

Input: text files, one sentence (or one paragraph) a line, a blank line ending
a document (or, with --noblanks_separate_docs, each file is one document; .gz
read too); JSONL or Parquet files and TFDS datasets, a record a document
(--text_field). A line longer than an example is packed as its sentences,
nothing dropped (--long_lines=truncate: the original's cut, for exact
reproduction; sentences end at .!? before a capital, and at 。！？；… in CJK
text). Each shard appears atomically when complete, and
`manifest.json` records the settings and counts (tokens read, written and
dropped, with the reason; the share of [UNK] among the tokens written), which the tool also prints (a warning
above 2 % [UNK]). --whole_word_masking stores the words of Chinese (CJK) text, found by jieba (pip install
electra-tf[chinese]), with each example, for electra-pretrain --whole_word_masking. Re-running the same
command after an interruption writes only the missing shards; the output does not depend on --num_processes, nor on
--runner=beam (an Apache Beam pipeline, same shards: docs/data_at_scale.md).
"""

from absl import flags

from electra_tf.data.packing import LONG_LINES
from electra_tf.tools.common import define_corpus_flags

FLAGS = flags.FLAGS
define_corpus_flags()
flags.DEFINE_string("vocab_file", None, "The WordPiece vocab.txt.", required=True)
flags.DEFINE_string("output_dir", None, "Where the shards and manifest.json go.", required=True)
flags.DEFINE_integer("max_seq_length", 128, "Example length, special tokens included.")
flags.DEFINE_integer("num_shards", 16, "Number of output shards.")
flags.DEFINE_integer("num_processes", 1, "Worker processes (--runner=local): keep 1 unless the corpus is hundreds "
                     "of MB (each process starts its own TensorFlow).")
flags.DEFINE_bool("dedupe", False, "Drop exact duplicate documents (same text after NFKC, case folding and "
                  "collapsing spaces); counted in manifest.json.")
flags.DEFINE_bool("blanks_separate_docs", True, "A blank line ends a document.")
flags.DEFINE_bool("lowercase", True, "Lower-case the text (uncased vocabularies).")
flags.DEFINE_bool("strip_accents", None, "Strip accents (default: as --lowercase).")
flags.DEFINE_integer("seed", 0, "Packing seed.")
flags.DEFINE_bool("whole_word_masking", False, "Store the word boundaries of CJK text, found by the jieba word "
                  "segmenter (pip install electra-tf[chinese]), with each example (feature continues_word), for "
                  "electra-pretrain --whole_word_masking; other text needs none (its words are its ## pieces).")
flags.DEFINE_enum("long_lines", "split", LONG_LINES,
                  "A line longer than an example: split (at sentence ends, else every half example; no text "
                  "dropped; a sentence overflowing an example goes on in the next), sentences (as split, but every "
                  "example ends at a sentence end where one exists: more padding) or truncate (the original "
                  "ELECTRA's rule: cut, the rest discarded).")
flags.register_validator("max_seq_length", lambda n: n >= 5,
                         "--max_seq_length must be >= 5 ([CLS] A [SEP] B [SEP], as examples are packed)")
flags.register_validator("num_shards", lambda n: n >= 1, "--num_shards must be >= 1")
flags.register_validator("num_processes", lambda n: n >= 1, "--num_processes must be >= 1")
