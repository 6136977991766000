"""End-to-end demo on the embedded default corpus: text → vocab → TFRecords → pre-train → fine-tune → serve.

Runs in about a minute on 2 CPU cores, downloads nothing:

    python -m electra_tf.tools.demo --output_dir=runs/demo

Steps (each skipped when its output already exists, so a re-run resumes):
1. write the default corpus (standard-library docstrings) as text;
2. learn a WordPiece vocabulary from it;
3. pack it into TFRecord shards (the last shard is held out for evaluation);
4. pre-train a tiny ELECTRA (`configs/electra_tiny.json`) with `model.fit`;
5. save the pre-trainer, the discriminator and the generator as `.keras`;
6. fine-tune the discriminator on a labelled task from the same corpus (what
   a docstring documents: module, class or function) and print its dev
   accuracy beside the majority class's;
7. export the fine-tuned classifier for TF Serving (raw text in, tokenized in
   the graph) and query the export as the server would.
"""

from absl import flags

FLAGS = flags.FLAGS
flags.DEFINE_string("output_dir", "runs/demo", "Where the corpus, data and models go.")
flags.DEFINE_string("config", "electra_tiny", "A run config: a JSON path or a name in configs/.")
flags.DEFINE_integer("train_steps", 300, "Pre-training steps.")
flags.DEFINE_integer("vocab_size", 4096, "WordPiece vocabulary size.")
flags.DEFINE_integer("num_shards", 4, "TFRecord shards (the last one is the evaluation set).")
flags.DEFINE_integer("seed", 0, "Seed for data packing, initialisation and masking.")
flags.DEFINE_integer("max_documents", None, "Use only the first N documents of the corpus (quick runs).")
flags.DEFINE_bool("deterministic", False, "TensorFlow's op determinism: a re-run gives the same weights (slower).")
