"""The ELECTRA paper's ablations at a size this machine affords: generator size, training algorithms, efficiency.

    python benchmarks/ablations.py --study=efficiency [--steps=500] [--hidden_size=128 --num_layers=4 ...]

Each study pre-trains the same discriminator-sized encoder with several
`PretrainingConfig` variants on the corpus (the embedded default unless
--corpus_files), fine-tunes each kept encoder --seeds times on a labelled task
(the default corpus's docstring kinds unless --train_file), and writes every
run to <output_dir>/<study>/results.json and the figure, in the paper's
layout, to <output_dir>/<study>/<study>.png (Clark et al., 2020):

- `generator_size` (Figure 3, left): generators of widths {unigram, 1/8,
  1/4, 1/2, 1} × the discriminator's, each for --steps steps;
- `algorithms` (Figure 3, right): joint (maximum likelihood), two-stage
  (full-size generator, as it must be), adversarial and MLM at equal
  training FLOPs, scored at --budgets fractions of them;
- `efficiency` (Table 5): ELECTRA, ELECTRA 15 %, Replace MLM, All-Tokens MLM
  and MLM at equal training FLOPs.

Equal FLOPs: the first variant runs --steps steps; the others as many as make
the same training FLOPs (`electra_tf/pretraining/flops.py`, each variant counted
as it computes; a two-stage run's two phases get equal steps). The
pre-train → fine-tune → median machinery is `pretrain_finetune.py`'s, shared
with `compute_efficiency.py`. --hidden_size, --num_layers, --steps,
--batch_size, --seq_length and --corpus_files scale it to the paper's sizes.
"""

import os

from absl import app, flags
from pretrain_finetune import SETTINGS, configs, median_accuracy, prepare_data, pretrain, random_encoder, task_files

FLAGS = flags.FLAGS
flags.DEFINE_enum("study", "efficiency", ["generator_size", "algorithms", "efficiency"], "Which ablation to run.")
flags.DEFINE_string("output_dir", "runs/ablations", "Data, checkpoints, results and plots (one folder per study).")
flags.DEFINE_integer("steps", None, "Pre-training steps of the study's first variant (the others: equal FLOPs, "
                     "or equal steps for generator_size). Default: 600 for efficiency, 300 for the others, so that "
                     "each study takes under an hour on 2 CPU cores.")
flags.DEFINE_list("variants", None, "Run only these of the study's variants (labels as printed, e.g. "
                  "'ELECTRA,MLM'); equal FLOPs still refer to the study's first variant.")
flags.DEFINE_bool("plot", True, "Draw the figure (needs matplotlib: the `bench` extra).")
flags.DEFINE_list("budgets", None, "Checkpoints scored, as fractions of the total (default: 0.5,1 for "
                  "algorithms, 1 otherwise).")

# (label, PretrainingConfig fields) per study; the paper's figures in PAPER for context.
STUDIES = {
    "generator_size": [("unigram", {"generator_type": "unigram"}), ("1/8", {"generator_hidden_size": 0.125}),
                       ("1/4", {"generator_hidden_size": 0.25}), ("1/2", {"generator_hidden_size": 0.5}),
                       ("1", {"generator_hidden_size": 1.0})],
    "algorithms": [("joint", {}), ("two-stage", {"training_algorithm": "two_stage", "generator_hidden_size": 1.0}),
                   ("adversarial", {"training_algorithm": "adversarial"}), ("MLM", {"objective": "mlm"})],
    "efficiency": [("ELECTRA", {}), ("ELECTRA 15%", {"objective": "electra_15"}),
                   ("Replace MLM", {"objective": "replace_mlm"}), ("All-Tokens MLM", {"objective": "all_tokens_mlm"}),
                   ("MLM", {"objective": "mlm"})],
}
PAPER = {
    "generator_size": "GLUE dev, base-size discriminators, 500k steps: best with generators 1/4-1/2 of the "
                      "discriminator's width; the unigram generator is the weakest.",
    "algorithms": "GLUE dev vs pre-training FLOPs, base size: joint maximum likelihood > two-stage > adversarial; "
                  "the adversarial generator reaches 58 % MLM accuracy against 65 % for maximum likelihood.",
    "efficiency": {"ELECTRA": 85.0, "All-Tokens MLM": 84.3, "Replace MLM": 82.4, "ELECTRA 15%": 82.4, "MLM": 82.2},
}
EQUAL_FLOPS = ("algorithms", "efficiency")
DEFAULT_STEPS = {"efficiency": 600, "generator_size": 300, "algorithms": 300}


def variant_steps(variant, vocab_size, total_flops):
    """Steps (and the two-stage switch) that spend `total_flops` with `variant`; its fields to pre-train with."""
    from electra_tf.pretraining.flops import training_flops_per_step
    from electra_tf.pretraining.training_algorithms import DISCRIMINATOR_PHASE, GENERATOR_PHASE

    if variant.get("training_algorithm") == "two_stage":
        probe = configs(vocab_size, 3, **variant, two_stage_generator_steps=1)
        per_pair = sum(training_flops_per_step(*probe, phase) for phase in (GENERATOR_PHASE, DISCRIMINATOR_PHASE))
        half = max(1, round(total_flops / per_pair))
        return 2 * half, {**variant, "two_stage_generator_steps": half}
    return max(2, round(total_flops / training_flops_per_step(*configs(vocab_size, 1, **variant)))), variant


def plan(study, vocab_size):
    """[(label, steps, fields)] for the study: equal steps for generator sizes, equal FLOPs otherwise."""
    from electra_tf.pretraining.flops import training_flops

    variants, steps = STUDIES[study], FLAGS.steps or DEFAULT_STEPS[study]
    if study not in EQUAL_FLOPS:
        return [(label, steps, fields) for label, fields in variants]
    total = training_flops(*configs(vocab_size, steps, **variants[0][1]), steps)
    return [(label, *variant_steps(fields, vocab_size, total)) for label, fields in variants]


def chosen(runs):
    """The planned runs --variants asks for (all by default); an unknown label is an error naming the known ones."""
    labels = [label for label, _, _ in runs]
    unknown = sorted(set(FLAGS.variants or ()) - set(labels))
    if unknown:
        raise app.UsageError(f"--variants: unknown {unknown}; this study has {labels}")
    return [run for run in runs if not FLAGS.variants or run[0] in FLAGS.variants]


def untrained_floor(vocab, files, settings):
    """The no-pre-training floor, fine-tuned once for all studies of the same settings (it is the same run)."""
    from electra_tf.util.atomic import read_json, write_json

    path = os.path.join(FLAGS.output_dir, "no_pretraining.json")
    settings = {k: v for k, v in settings.items() if k != "steps"}
    if os.path.exists(path) and read_json(path)["settings"] == settings:
        return read_json(path)["random"]
    median, values = median_accuracy(random_encoder(vocab, os.path.join(FLAGS.output_dir, "checkpoints")), files)
    floor = {"median": median, "accuracies": values}
    write_json(path, {"settings": settings, "random": floor})
    return floor


def plot(study, results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 4))
    runs, floor = results["runs"], results["random"]["median"]
    if study == "generator_size":
        width = {run["label"]: run["fields"].get("generator_hidden_size", 0) * FLAGS.hidden_size for run in runs}
        networks = [run for run in runs if run["label"] != "unigram"]
        axes.plot([width[r["label"]] for r in networks], [r["median"] for r in networks], marker="o",
                  label=f"discriminator width {FLAGS.hidden_size}")
        for unigram in (r for r in runs if r["label"] == "unigram"):
            axes.scatter([0], [unigram["median"]], marker="s", color="C3", label="unigram generator")
        axes.set_xlabel("generator width (hidden units; 0: unigram)")
    elif study == "algorithms":
        for label in dict.fromkeys(run["label"] for run in runs):
            points = sorted((r["flops"], r["median"]) for r in runs if r["label"] == label)
            axes.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label)
        axes.set_xlabel("pre-training FLOPs")
    else:
        labels = [run["label"] for run in runs]
        bars = axes.bar(labels, [run["median"] for run in runs], color="C0")
        for bar, label in zip(bars, labels):  # the paper's GLUE score of each, for context
            axes.annotate(f"paper {PAPER['efficiency'][label]}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                          ha="center", va="bottom", fontsize=8)
        axes.set_ylim(min(floor, *(r["median"] for r in runs)) - 0.05, None)
        axes.tick_params(axis="x", labelrotation=20)
    axes.axhline(floor, color="grey", linestyle="--", label="no pre-training")
    axes.set_ylabel(f"dev accuracy (median of {FLAGS.seeds} fine-tunes)")
    axes.set_title({"generator_size": "Generator size (paper Fig. 3 left)",
                    "algorithms": "Training algorithms at equal FLOPs (paper Fig. 3 right)",
                    "efficiency": "Efficiency ablations at equal FLOPs (paper Table 5)"}[study])
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def print_table(study, results):
    paper = PAPER[study]
    paper_column = " paper GLUE |" * isinstance(paper, dict)
    print(f"\n| variant | steps | training FLOPs | median dev accuracy | accuracies |{paper_column}")
    print("|---|---|---|---|---|" + "---|" * isinstance(paper, dict))
    for run in results["runs"]:
        row = (f"| {run['label']} | {run['step']} | {run['flops']:.3g} | {run['median']:.3f} | "
               f"{', '.join(f'{a:.3f}' for a in run['accuracies'])} |")
        print(row + (f" {paper[run['label']]} |" if isinstance(paper, dict) else ""))
    print(f"| no pre-training | 0 | 0 | {results['random']['median']:.3f} | "
          f"{', '.join(f'{a:.3f}' for a in results['random']['accuracies'])} |" + " |" * isinstance(paper, dict))
    if not isinstance(paper, dict):
        print(f"(paper: {paper})")


def main(argv):
    del argv
    from electra_tf.util.atomic import write_json
    from electra_tf.pretraining.flops import training_flops
    from electra_tf.text.tokenizer import WordPieceTokenizer

    study, out = FLAGS.study, os.path.join(FLAGS.output_dir, FLAGS.study)
    vocab, shards = prepare_data(os.path.join(FLAGS.output_dir, "data"))
    files = task_files(os.path.join(FLAGS.output_dir, "task"))
    vocab_size = WordPieceTokenizer(vocab).vocabulary_size()
    budgets = [float(b) for b in FLAGS.budgets or (["0.5", "1"] if study == "algorithms" else ["1"])]
    results = {"study": study, "settings": {**{k: FLAGS[k].value for k in SETTINGS},
                                            "steps": FLAGS.steps or DEFAULT_STEPS[study]},
               "paper": PAPER[study], "runs": []}
    results["random"] = untrained_floor(vocab, files, results["settings"])
    floor = results["random"]["median"], results["random"]["accuracies"]
    print(f"no pre-training: median accuracy {floor[0]:.3f} {floor[1]}", flush=True)
    for label, steps, fields in chosen(plan(study, vocab_size)):
        model, pretraining = configs(vocab_size, steps, **fields)
        print(f"pre-training {label} ({fields}) for {steps} steps, "
              f"{training_flops(model, pretraining, steps):.3g} training FLOPs", flush=True)
        name = label.replace(" ", "_").replace("/", "-").replace("%", "")
        for budget, (folder, step) in pretrain(name, fields, steps, budgets, vocab, shards,
                                               os.path.join(out, "checkpoints")).items():
            median, values = median_accuracy(folder, files)
            results["runs"].append({"label": label, "fields": fields, "budget": budget, "step": step,
                                    "flops": training_flops(model, pretraining, step), "median": median,
                                    "accuracies": values})
            print(f"  {label} at step {step}: median accuracy {median:.3f} {values}", flush=True)
    write_json(os.path.join(out, "results.json"), results)
    print_table(study, results)
    print(f"results: {os.path.join(out, 'results.json')}")
    if FLAGS.plot:
        plot(study, results, os.path.join(out, f"{study}.png"))
        print(f"plot: {os.path.join(out, study + '.png')}")


if __name__ == "__main__":
    app.run(main)
