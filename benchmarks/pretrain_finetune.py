"""Pre-train → fine-tune → median over seeds: the machinery `compute_efficiency.py` and `ablations.py` share.

Defines the flags both take (corpus, encoder size, pre-training and
fine-tuning settings) and the steps: shards from a corpus, a pre-training run
of any `PretrainingConfig` variant saved at fractions of its steps, an
untrained floor, and fine-tuning a saved encoder several times on a labelled
task (the default corpus's docstring kinds unless --train_file names one).
"""

import os
import statistics
import time

from absl import flags

FLAGS = flags.FLAGS
flags.DEFINE_string("corpus_files", None, "Comma-separated text corpus globs (default: the embedded corpus).")
flags.DEFINE_integer("vocab_size", 4096, "WordPiece vocabulary learned from the corpus.")
flags.DEFINE_integer("hidden_size", 128, "Encoder width (the discriminator, or the MLM model).")
flags.DEFINE_integer("embedding_size", 64, "Embedding width.")
flags.DEFINE_integer("num_layers", 4, "Encoder depth.")
flags.DEFINE_integer("seq_length", 64, "Pre-training sequence length.")
flags.DEFINE_integer("batch_size", 32, "Pre-training batch size.")
# At 1e-3 this encoder's discriminator never learns replaced token detection (held-out RTD AUC 0.55-0.57 from
# step 300 to 1,200, while its generator learns); at 2e-4 its AUC is 0.85 by step 300. MLM gets the same rate.
flags.DEFINE_float("learning_rate", 2e-4, "Pre-training peak learning rate (every run).")
flags.DEFINE_float("generator_hidden_size", 0.25, "ELECTRA's generator width, a fraction of --hidden_size.")
flags.DEFINE_integer("seeds", 3, "Fine-tuning runs per checkpoint (the median is reported).")
# A tiny encoder fine-tunes best with a higher rate and milder layer-wise decay than the paper's 12-layer Small
# (3e-4, 0.8): at those, 117 steps leave it at the majority class. Every run gets the same settings.
flags.DEFINE_float("finetune_learning_rate", 1e-3, "Fine-tuning peak learning rate.")
flags.DEFINE_float("finetune_layerwise_decay", 0.9, "Fine-tuning layer-wise learning-rate decay.")
flags.DEFINE_string("train_file", None, "Fine-tuning task: a CSV/TSV/JSONL training file (default: docstring "
                    "kinds from the default corpus).")
flags.DEFINE_string("dev_file", None, "Fine-tuning task: its dev file.")
flags.DEFINE_string("text_column", "text", "Fine-tuning task: the text column.")
flags.DEFINE_string("label_column", "label", "Fine-tuning task: the label column.")

SETTINGS = ("hidden_size", "embedding_size", "num_layers", "seq_length", "batch_size", "learning_rate",
            "generator_hidden_size", "seeds", "finetune_learning_rate", "finetune_layerwise_decay")


def prepare_data(folder):
    """Vocabulary and shards of the corpus; returns (vocab path, shard folder)."""
    from electra_tf.data.default_corpus import write_default_corpus
    from electra_tf.data.tfrecord_dataset import list_files
    from electra_tf.data.pretraining_data import build_pretraining_shards
    from electra_tf.text.vocabulary import save_vocabulary
    from electra_tf.text.vocabulary_learning import build_vocabulary

    os.makedirs(folder, exist_ok=True)
    if FLAGS.corpus_files:
        corpus = list_files(FLAGS.corpus_files)
    else:
        corpus = [os.path.join(folder, "corpus.txt")]
        if not os.path.exists(corpus[0]):
            write_default_corpus(corpus[0])
    vocab = os.path.join(folder, "vocab.txt")
    if not os.path.exists(vocab):
        save_vocabulary(build_vocabulary(corpus, FLAGS.vocab_size), vocab)
    shards = os.path.join(folder, "shards")
    build_pretraining_shards(corpus, vocab, shards, max_seq_length=FLAGS.seq_length, num_shards=8)
    return vocab, shards


def task_files(folder):
    """The fine-tuning task's files: --train_file/--dev_file, or docstring kinds written into `folder`."""
    from electra_tf.data.default_corpus import write_docstring_kinds

    if FLAGS.train_file:
        return {"train": FLAGS.train_file, "dev": FLAGS.dev_file}
    return write_docstring_kinds(folder)


def configs(vocab_size, steps, **variant):
    """The encoder's config and a pre-training config of `steps` steps with the `variant`'s fields."""
    from electra_tf import ElectraConfig, PretrainingConfig

    model = ElectraConfig(vocab_size=vocab_size, embedding_size=FLAGS.embedding_size, hidden_size=FLAGS.hidden_size,
                          num_layers=FLAGS.num_layers, num_heads=max(1, FLAGS.hidden_size // 64),
                          intermediate_size=4 * FLAGS.hidden_size)
    fields = {"generator_hidden_size": FLAGS.generator_hidden_size, **variant}
    pretraining = PretrainingConfig(max_seq_length=FLAGS.seq_length, batch_size=FLAGS.batch_size,
                                    learning_rate=FLAGS.learning_rate, train_steps=steps,
                                    warmup_steps=max(1, steps // 10), **fields)
    return model, pretraining


def kept_network(pretrainer, step):
    """The encoder a run has trained by `step`: its discriminator, but the generator of an MLM run and of a
    two-stage run still in its generator phase."""
    from electra_tf.pretraining.training_algorithms import phase_at
    from electra_tf.pretraining.training_algorithms import GENERATOR_PHASE

    networks = pretrainer.export_networks()
    if "discriminator" not in networks or phase_at(pretrainer.algorithm, step - 1) == GENERATOR_PHASE:
        return "generator", networks["generator"]
    return "discriminator", networks["discriminator"]


def pretrain(name, variant, steps, budgets, vocab, shards, folder):
    """Pre-trains the `variant` (PretrainingConfig fields) for `steps`, saving the kept encoder at each budget
    (a fraction of the steps); returns {budget: (folder, step)}."""
    import keras

    from electra_tf.checkpoints.ours import write_run_folder
    from electra_tf.data.tfrecord_dataset import Shards
    from electra_tf.pretraining.run import build_pretrainer
    from electra_tf.text.vocabulary import load_vocabulary

    model, pretraining = configs(len(load_vocabulary(vocab)), steps, **variant)
    keras.utils.set_random_seed(0)
    listed = Shards.listed(shards, FLAGS.seq_length)
    pretrainer = build_pretrainer(model, pretraining, vocab, listed)
    data = listed.dataset(FLAGS.batch_size, seed=0)
    saved, done, start, logs = {}, 0, time.perf_counter(), {}
    for budget in sorted(budgets):
        target = round(budget * steps)
        while target > done:  # phase by phase (a two-stage run switches at its phase's end)
            end = min(target, pretrainer.start_phase(done) or target)
            history = pretrainer.fit(data, steps_per_epoch=end - done, epochs=1, verbose=0).history
            logs = {metric: values[-1] for metric, values in history.items()}
            done = end
        saved[budget] = (os.path.join(folder, f"{name}_{budget:g}"), done)
        role, network = kept_network(pretrainer, done)
        write_run_folder(saved[budget][0], {role: network}, model, pretraining, load_vocabulary(vocab))
        metrics = " ".join(f"{metric} {value:.3f}" for metric, value in logs.items())
        print(f"  {name}: step {done} of {steps} ({time.perf_counter() - start:.0f} s; mean over the last "
              f"stretch: {metrics})", flush=True)
    return saved


def random_encoder(vocab, folder):
    """An untrained discriminator saved as a pre-trained folder: the no-pre-training floor."""
    import keras

    from electra_tf import ElectraDiscriminator
    from electra_tf.text.tokenizer import WordPieceTokenizer
    from electra_tf.checkpoints.ours import write_run_folder
    from electra_tf.text.vocabulary import load_vocabulary

    keras.utils.set_random_seed(0)
    model, pretraining = configs(WordPieceTokenizer(vocab).vocabulary_size(), 1)
    path = os.path.join(folder, "random")
    write_run_folder(path, {"discriminator": ElectraDiscriminator(model)}, model, pretraining, load_vocabulary(vocab))
    return path


def finetune_accuracy(pretrained, files, seed):
    from electra_tf import FinetuningConfig, finetune, make_task
    from electra_tf.checkpoints.tokenizer_files import load_tokenizer

    config = FinetuningConfig.for_task("text_classification", "small", learning_rate=FLAGS.finetune_learning_rate,
                                       layerwise_lr_decay=FLAGS.finetune_layerwise_decay,
                                       max_seq_length=FLAGS.seq_length, epochs=3.0, seed=seed)
    task = make_task(config, load_tokenizer(pretrained), files=files,
                     text_columns=[FLAGS.text_column], label_column=FLAGS.label_column)
    train, dev = task.load("train"), task.load("dev")
    model = finetune(task, pretrained, train).model
    return task.score(dev, task.predict(model, dev))["accuracy"]


def median_accuracy(pretrained, files):
    """(median, every accuracy) of --seeds fine-tuning runs (seeds 0, 1, ...) from `pretrained`."""
    values = [finetune_accuracy(pretrained, files, seed) for seed in range(FLAGS.seeds)]
    return statistics.median(values), values
