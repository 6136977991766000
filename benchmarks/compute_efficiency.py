"""The paper's central claim at small scale: at equal pre-training compute, ELECTRA beats masked-LM pre-training.

    python benchmarks/compute_efficiency.py [--corpus_files='corpus/*.txt'] [--electra_steps=2400]

1. Builds a vocabulary and TFRecord shards from the corpus (the embedded
   default corpus unless --corpus_files names one).
2. Pre-trains the same discriminator-sized encoder twice: with ELECTRA's
   replaced token detection (generator 1/4 wide) and with plain MLM
   (objective `mlm`). The MLM run gets as many steps as make the same
   training FLOPs (`electra_tf/pretraining/flops.py`, the paper's accounting),
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

import os

from absl import app, flags
from pretrain_finetune import SETTINGS, configs, median_accuracy, prepare_data, pretrain, random_encoder, task_files

FLAGS = flags.FLAGS
flags.DEFINE_string("output_dir", "runs/compute_efficiency", "Data, checkpoints, results and the plot.")
flags.DEFINE_integer("electra_steps", 2400, "ELECTRA pre-training steps; MLM gets the same FLOPs.")
flags.DEFINE_list("budgets", ["0.25", "0.5", "0.75", "1.0"], "Checkpoints, as fractions of the total FLOPs.")


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
    from electra_tf.util.atomic import write_json
    from electra_tf.pretraining.flops import training_flops_per_step
    from electra_tf.text.tokenizer import WordPieceTokenizer

    out = FLAGS.output_dir
    vocab, shards = prepare_data(os.path.join(out, "data"))
    files = task_files(os.path.join(out, "task"))
    vocab_size = WordPieceTokenizer(vocab).vocabulary_size()
    electra_flops = training_flops_per_step(*configs(vocab_size, 1, objective="electra"))
    mlm_flops = training_flops_per_step(*configs(vocab_size, 1, objective="mlm"))
    total = FLAGS.electra_steps * electra_flops
    steps = {"electra": FLAGS.electra_steps, "mlm": round(total / mlm_flops)}
    print(f"equal compute: {total:.3g} training FLOPs = ELECTRA {steps['electra']} steps "
          f"({electra_flops / 1e9:.2f} GFLOP each) = MLM {steps['mlm']} steps ({mlm_flops / 1e9:.2f} GFLOP each)",
          flush=True)
    results = {"settings": {k: FLAGS[k].value for k in (*SETTINGS, "electra_steps")},
               "steps": steps, "total_flops": total, "runs": []}
    floor = median_accuracy(random_encoder(vocab, os.path.join(out, "checkpoints")), files)
    results["random"] = {"median": floor[0], "accuracies": floor[1]}
    print(f"no pre-training: median accuracy {floor[0]:.3f} {floor[1]}", flush=True)
    for objective in ("electra", "mlm"):
        print(f"pre-training {objective} for {steps[objective]} steps", flush=True)
        budgets = [float(b) for b in FLAGS.budgets]
        for budget, (folder, _) in pretrain(objective, {"objective": objective}, steps[objective], budgets, vocab,
                                            shards, os.path.join(out, "checkpoints")).items():
            median, values = median_accuracy(folder, files)
            results["runs"].append({"objective": objective, "budget": budget, "flops": budget * total,
                                    "median": median, "accuracies": values})
            print(f"  {objective} at {budget:g} of the budget ({budget * total:.3g} FLOPs): "
                  f"median accuracy {median:.3f} {values}", flush=True)
    write_json(os.path.join(out, "results.json"), results)
    print("\n| FLOPs | ELECTRA | MLM |\n|---|---|---|")
    by = {(r["objective"], r["budget"]): r["median"] for r in results["runs"]}
    for budget in sorted(float(b) for b in FLAGS.budgets):
        print(f"| {budget * total:.3g} | {by['electra', budget]:.3f} | {by['mlm', budget]:.3f} |")
    print(f"(no pre-training: {floor[0]:.3f})")
    plot(results, os.path.join(out, "compute_efficiency.png"))
    print(f"plot: {os.path.join(out, 'compute_efficiency.png')}")


if __name__ == "__main__":
    app.run(main)
