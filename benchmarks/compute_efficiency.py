"""The paper's central claim at small scale: at equal pre-training compute, ELECTRA beats masked-LM pre-training.

    python benchmarks/compute_efficiency.py [--corpus_files='corpus/*.txt'] [--electra_steps=2400]

1. Builds a vocabulary and TFRecord shards from the corpus (the embedded
   default corpus unless --corpus_files names one).
2. Pre-trains the same discriminator-sized encoder twice: with ELECTRA's
   replaced token detection (generator 1/4 wide) and with plain MLM
   (objective `mlm`). The MLM run gets as many steps as make the same
   training FLOPs (`electra_tf/training/flops.py`, the paper's accounting),
   and both save their encoder at --budgets fractions of the total.
3. Fine-tunes every saved encoder (and a randomly initialised one, the
   "no pre-training" floor) on a real labelled task with --seeds seeds: by
   default the default corpus's "which kind of object does this docstring
   document" task, or a text-classification file pair (--train_file,
   --dev_file, --text_column, --label_column).
4. Prints the median dev accuracy per budget for both and draws the curve to
   <output_dir>/compute_efficiency.png (needs matplotlib: the `bench` extra).

The defaults finish in well under an hour on 2 CPU cores; --electra_steps,
--hidden_size, --num_layers, --seq_length and --batch_size scale it up on a GPU.
"""

import json
import os
import statistics
import time

from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_string("corpus_files", None, "Comma-separated text corpus globs (default: the embedded corpus).")
flags.DEFINE_string("output_dir", "runs/compute_efficiency", "Data, checkpoints, results and the plot.")
flags.DEFINE_integer("vocab_size", 4096, "WordPiece vocabulary learned from the corpus.")
flags.DEFINE_integer("hidden_size", 128, "Encoder width (both objectives).")
flags.DEFINE_integer("embedding_size", 64, "Embedding width.")
flags.DEFINE_integer("num_layers", 4, "Encoder depth.")
flags.DEFINE_integer("seq_length", 64, "Pre-training sequence length.")
flags.DEFINE_integer("batch_size", 32, "Pre-training batch size.")
# At 1e-3 this encoder's discriminator never learns replaced token detection (held-out RTD AUC 0.55-0.57 from
# step 300 to 1,200, while its generator learns); at 2e-4 its AUC is 0.85 by step 300. MLM gets the same rate.
flags.DEFINE_float("learning_rate", 2e-4, "Pre-training peak learning rate (both objectives).")
flags.DEFINE_float("generator_hidden_size", 0.25, "ELECTRA's generator width, a fraction of --hidden_size.")
flags.DEFINE_integer("electra_steps", 2400, "ELECTRA pre-training steps; MLM gets the same FLOPs.")
flags.DEFINE_list("budgets", ["0.25", "0.5", "0.75", "1.0"], "Checkpoints, as fractions of the total FLOPs.")
flags.DEFINE_integer("seeds", 3, "Fine-tuning runs per checkpoint (the median is reported).")
# A tiny encoder fine-tunes best with a higher rate and milder layer-wise decay than the paper's 12-layer Small
# (3e-4, 0.8): at those, 117 steps leave it at the majority class. Both objectives get the same settings.
flags.DEFINE_float("finetune_learning_rate", 1e-3, "Fine-tuning peak learning rate.")
flags.DEFINE_float("finetune_layerwise_decay", 0.9, "Fine-tuning layer-wise learning-rate decay.")
flags.DEFINE_string("train_file", None, "Fine-tuning task: a CSV/TSV/JSONL training file (default: docstring "
                    "kinds from the default corpus).")
flags.DEFINE_string("dev_file", None, "Fine-tuning task: its dev file.")
flags.DEFINE_string("text_column", "text", "Fine-tuning task: the text column.")
flags.DEFINE_string("label_column", "label", "Fine-tuning task: the label column.")


def prepare_data(folder):
    """Vocabulary and shards of the corpus; returns (vocab path, shard folder)."""
    from electra_tf.data.default_corpus import write_default_corpus
    from electra_tf.data.pipeline import list_files
    from electra_tf.data.pretraining_data import build_pretraining_shards
    from electra_tf.tokenization import build_vocabulary
    from electra_tf.vocabulary import save_vocabulary

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


def configs(objective, vocab_size, steps):
    from electra_tf import ElectraConfig, PretrainingConfig

    model = ElectraConfig(vocab_size=vocab_size, embedding_size=FLAGS.embedding_size, hidden_size=FLAGS.hidden_size,
                          num_layers=FLAGS.num_layers, num_heads=max(1, FLAGS.hidden_size // 64),
                          intermediate_size=4 * FLAGS.hidden_size)
    pretraining = PretrainingConfig(objective=objective, generator_hidden_size=FLAGS.generator_hidden_size,
                                    max_seq_length=FLAGS.seq_length,
                                    batch_size=FLAGS.batch_size, learning_rate=FLAGS.learning_rate,
                                    train_steps=steps, warmup_steps=max(1, steps // 10))
    return model, pretraining


def pretrain(objective, steps, vocab, shards, folder):
    """Pre-trains for `steps`, saving the encoder's network at each budget; returns {budget: folder}."""
    import keras

    from electra_tf import ElectraPretrainer, ElectraTokenizer, pretraining_optimizer
    from electra_tf.checkpoints.ours import write_run_folder
    from electra_tf.data.pipeline import pretraining_dataset
    from electra_tf.vocabulary import load_vocabulary

    tokenizer = ElectraTokenizer(vocab)
    model, pretraining = configs(objective, tokenizer.vocabulary_size(), steps)
    keras.utils.set_random_seed(0)
    pretrainer = ElectraPretrainer(model, pretraining, tokenizer.mask_token_id, tokenizer.special_token_ids)
    pretrainer.compile(optimizer=pretraining_optimizer(pretraining))
    data = pretraining_dataset(shards, FLAGS.batch_size, FLAGS.seq_length, seed=0)
    saved, done, start, logs = {}, 0, time.perf_counter(), {}
    for budget in sorted(float(b) for b in FLAGS.budgets):
        target = round(budget * steps)
        if target > done:
            history = pretrainer.fit(data, steps_per_epoch=target - done, epochs=1, verbose=0).history
            logs = {name: values[-1] for name, values in history.items()}
            done = target
        saved[budget] = os.path.join(folder, f"{objective}_{budget:g}")
        network = pretrainer.discriminator if objective == "electra" else pretrainer.generator
        write_run_folder(saved[budget], {"discriminator" if objective == "electra" else "generator": network},
                         model, pretraining, load_vocabulary(vocab))
        metrics = " ".join(f"{name} {value:.3f}" for name, value in logs.items())
        print(f"  {objective}: step {done} of {steps} ({time.perf_counter() - start:.0f} s; mean over the last "
              f"stretch: {metrics})", flush=True)
    return saved


def random_encoder(vocab, folder):
    """An untrained discriminator saved as a pre-trained folder: the no-pre-training floor."""
    import keras

    from electra_tf import ElectraDiscriminator, ElectraTokenizer
    from electra_tf.checkpoints.ours import write_run_folder
    from electra_tf.vocabulary import load_vocabulary

    keras.utils.set_random_seed(0)
    model, pretraining = configs("electra", ElectraTokenizer(vocab).vocabulary_size(), 1)
    path = os.path.join(folder, "random")
    write_run_folder(path, {"discriminator": ElectraDiscriminator(model)}, model, pretraining, load_vocabulary(vocab))
    return path


def finetune_accuracy(pretrained, files, seed):
    from electra_tf import ElectraTokenizer, FinetuningConfig, finetune, make_task

    config = FinetuningConfig.for_task("text_classification", "small", learning_rate=FLAGS.finetune_learning_rate,
                                       layerwise_lr_decay=FLAGS.finetune_layerwise_decay,
                                       max_seq_length=FLAGS.seq_length, epochs=3.0, seed=seed)
    task = make_task(config, ElectraTokenizer.from_pretrained(pretrained), files=files,
                     text_columns=[FLAGS.text_column], label_column=FLAGS.label_column)
    train, dev = task.load("train"), task.load("dev")
    model = finetune(task, pretrained, train)
    return task.score(dev, task.predict(model, dev))["accuracy"]


def median_accuracy(pretrained, files):
    values = [finetune_accuracy(pretrained, files, seed) for seed in range(FLAGS.seeds)]
    return statistics.median(values), values


def plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 4))
    for objective, label in (("electra", "ELECTRA (replaced token detection)"), ("mlm", "masked LM")):
        points = sorted((r["flops"], r["median"]) for r in results["runs"] if r["objective"] == objective)
        axes.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label)
    axes.axhline(results["random"]["median"], color="grey", linestyle="--", label="no pre-training")
    axes.set_xlabel("pre-training FLOPs")
    axes.set_ylabel(f"dev accuracy (median of {FLAGS.seeds} fine-tunes)")
    axes.set_title("Equal compute: ELECTRA vs MLM")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def main(argv):
    del argv
    from electra_tf.data.default_corpus import write_docstring_kinds
    from electra_tf.tokenization import ElectraTokenizer
    from electra_tf.training.flops import training_flops_per_step

    out = FLAGS.output_dir
    vocab, shards = prepare_data(os.path.join(out, "data"))
    files = ({"train": FLAGS.train_file, "dev": FLAGS.dev_file} if FLAGS.train_file
             else write_docstring_kinds(os.path.join(out, "task")))
    vocab_size = ElectraTokenizer(vocab).vocabulary_size()
    electra_flops = training_flops_per_step(*configs("electra", vocab_size, 1))
    mlm_flops = training_flops_per_step(*configs("mlm", vocab_size, 1))
    total = FLAGS.electra_steps * electra_flops
    steps = {"electra": FLAGS.electra_steps, "mlm": round(total / mlm_flops)}
    print(f"equal compute: {total:.3g} training FLOPs = ELECTRA {steps['electra']} steps "
          f"({electra_flops / 1e9:.2f} GFLOP each) = MLM {steps['mlm']} steps ({mlm_flops / 1e9:.2f} GFLOP each)",
          flush=True)
    settings = ("hidden_size", "embedding_size", "num_layers", "seq_length", "batch_size", "learning_rate",
                "generator_hidden_size", "electra_steps", "seeds", "finetune_learning_rate", "finetune_layerwise_decay")
    results = {"settings": {k: FLAGS[k].value for k in settings},
               "steps": steps, "total_flops": total, "runs": []}
    floor = median_accuracy(random_encoder(vocab, os.path.join(out, "checkpoints")), files)
    results["random"] = {"median": floor[0], "accuracies": floor[1]}
    print(f"no pre-training: median accuracy {floor[0]:.3f} {floor[1]}", flush=True)
    for objective in ("electra", "mlm"):
        print(f"pre-training {objective} for {steps[objective]} steps", flush=True)
        for budget, folder in pretrain(objective, steps[objective], vocab, shards,
                                       os.path.join(out, "checkpoints")).items():
            median, values = median_accuracy(folder, files)
            results["runs"].append({"objective": objective, "budget": budget, "flops": budget * total,
                                    "median": median, "accuracies": values})
            print(f"  {objective} at {budget:g} of the budget ({budget * total:.3g} FLOPs): "
                  f"median accuracy {median:.3f} {values}", flush=True)
    with open(os.path.join(out, "results.json"), "w", encoding="utf-8") as f:
        json.dump(results, f, indent=2)
    print("\n| FLOPs | ELECTRA | MLM |\n|---|---|---|")
    by = {(r["objective"], r["budget"]): r["median"] for r in results["runs"]}
    for budget in sorted(float(b) for b in FLAGS.budgets):
        print(f"| {budget * total:.3g} | {by['electra', budget]:.3f} | {by['mlm', budget]:.3f} |")
    print(f"(no pre-training: {floor[0]:.3f})")
    plot(results, os.path.join(out, "compute_efficiency.png"))
    print(f"plot: {os.path.join(out, 'compute_efficiency.png')}")


if __name__ == "__main__":
    app.run(main)
