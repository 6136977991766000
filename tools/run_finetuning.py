r"""Fine-tunes a pre-trained ELECTRA discriminator on a task; scores dev, writes predictions.

    python -m electra_tf.tools.run_finetuning --task=mrpc --data_dir=glue_data \
        --init_checkpoint=runs/small/final --output_dir=runs/mrpc --num_trials=5

- Tasks: GLUE (cola sst2 mrpc stsb qqp mnli qnli rte wnli; `ax` is predicted by
  an `mnli` run), `text_classification` (CSV/TSV/JSONL: --train_file,
  --dev_file, --test_file, --text_columns, --label_column), `conll2003`,
  `chunk`, `squad` (2.0), `squadv1` (--qa_metric=cmrc: scored as CMRC 2018 and
  DRCD are), `swag`.
- Data: --data_dir with the task's usual file names (the GLUE download's
  layout, train.txt/dev.txt/test.txt, train-v2.0.json/dev-v2.0.json,
  train.csv/val.csv/test.csv), --tfds for GLUE from TensorFlow Datasets, or
  explicit --{train,dev,test}_file.
- Settings: the original per-task defaults (`FinetuningConfig.for_task`,
  sized by --model_size or the checkpoint's width); any `FinetuningConfig`
  field is a flag.
- Output, under --output_dir: trial_<i>/model/ (the model folder: model,
  tokenizer files, label names, length; `electra-export --model=` takes it),
  trial_<i>/results.json (scores, dev scores during training) and the
  predictions, and results.json with every trial's dev scores and their median
  (the paper reports medians over fine-tuning seeds). A re-run skips finished
  trials, so an interrupted run resumes (an unfinished trial starts over).
"""

import functools
import json
import os
import statistics

from absl import flags

from electra_tf.atomic import read_json, write_json
from electra_tf.checkpoints.saving_progress import saying_saved
from electra_tf.config import FINETUNING_TASKS, FinetuningConfig
from electra_tf.folder_lock import lock_folder
from electra_tf.tools.common import (
    config_overrides,
    define_config_flags,
    exits_cleanly_on_bad_input,
    resolve_checkpoint_flags,
    run_tool,
)

FLAGS = flags.FLAGS
flags.DEFINE_string("init_checkpoint", None,
                    "The pre-trained model: our folder (tools/run_pretraining.py's final/), a Hugging Face folder "
                    "(config.json + model.safetensors) or a Google ELECTRA checkpoint.", required=True)
flags.DEFINE_string("output_dir", None, "Results and predictions.", required=True)
flags.DEFINE_enum("model_size", None, ["small", "base", "large"],
                  "Picks the paper's defaults (lr 3e-4/1e-4/5e-5; large: decay 0.9); unset: the learning rate "
                  "follows the checkpoint's width (docs/finetuning.md).")
flags.DEFINE_string("data_dir", None, "The task's files under their usual names.")
flags.DEFINE_bool("tfds", False, "Read GLUE from TensorFlow Datasets (glue/<task>).")
flags.DEFINE_string("tfds_data_dir", None, "TFDS data directory.")
flags.DEFINE_string("train_file", None, "Training file (overrides --data_dir's).")
flags.DEFINE_string("dev_file", None, "Development file, scored after training.")
flags.DEFINE_string("test_file", None, "Test file, predicted after training (and scored, as dev, when it has labels).")
flags.DEFINE_list("text_columns", ["text"], "text_classification: one or two text columns.")
flags.DEFINE_string("label_column", "label", "text_classification: the label column.")
flags.DEFINE_list("label_names", None, "text_classification: the declared labels (default: those in train).")
flags.DEFINE_bool("regression", False, "text_classification: labels are scores.")
flags.DEFINE_integer("tag_column", -1, "conll2003/chunk: the tag's column.")
flags.DEFINE_enum("qa_metric", "squad", ["squad", "cmrc"],
                  "squad/squadv1: SQuAD's exact match and F1, or cmrc: as CMRC 2018's and DRCD's official script "
                  "(Chinese answers: F1 over the longest common substring of characters and words).")
flags.DEFINE_integer("num_trials", 1, "Fine-tuning runs with seeds seed, seed+1, ...; the median is reported.")
flags.DEFINE_integer("eval_every", None, "Score the dev split every N steps (default: after each epoch).")
flags.DEFINE_bool("keep_best", False, "Keep (save, score, export) the model of the best dev score, not the last.")
flags.DEFINE_integer("log_every", 50, "A progress line (loss, examples/s, time left) every N steps.")
flags.DEFINE_bool("deterministic", False, "TensorFlow's op determinism: a re-run gives the same weights (slower).")
define_config_flags(FinetuningConfig)  # --task among them
FLAGS["task"].help = f"The task: one of {', '.join(sorted(FINETUNING_TASKS))}."
flags.mark_flag_as_required("task")
flags.register_validator("num_trials", lambda n: n >= 1, "--num_trials must be >= 1")
flags.register_validator("eval_every", lambda n: n is None or n >= 1, "--eval_every must be >= 1 (steps)")
flags.register_validator("log_every", lambda n: n >= 1, "--log_every must be >= 1 (steps)")


def model_size(width):
    return "large" if width >= 1024 else "small" if width <= 256 else "base"


# The flags that are tasks' data options (each a field of some task's `Options`: tests/tools check it).
OPTION_FLAGS = ("tfds", "tfds_data_dir", "text_columns", "label_column", "label_names", "regression", "tag_column",
                "qa_metric")


def check_option_flags(task):
    """Refuses an option flag given for a task that does not take it (it would change nothing)."""
    from electra_tf.finetuning.registry import task_options  # (this and the imports below load TensorFlow)

    taken = task_options(task)
    stray = [f"--{name}" for name in OPTION_FLAGS if FLAGS[name].present and name not in taken]
    if stray:
        raise ValueError(f"{', '.join(stray)}: not an option of task {task!r} (its options: "
                         f"{', '.join(f'--{name}' for name in taken if name in OPTION_FLAGS) or 'none'})")


def task_for(config):
    """The task of `config`, with the option flags it takes."""
    from electra_tf.finetuning import make_task
    from electra_tf.finetuning.registry import task_options
    from electra_tf.tokenization import ElectraTokenizer

    taken = task_options(config.task)
    return make_task(config, ElectraTokenizer.from_pretrained(FLAGS.init_checkpoint),
                     files={"train": FLAGS.train_file, "dev": FLAGS.dev_file, "test": FLAGS.test_file},
                     data_dir=FLAGS.data_dir, **{name: FLAGS[name].value for name in OPTION_FLAGS if name in taken})


# The flags besides the config that decide what a trial computes.
_DATA_FLAGS = ("data_dir", "train_file", "dev_file", "test_file", *OPTION_FLAGS)
_PATH_FLAGS = ("init_checkpoint", "data_dir", "tfds_data_dir", "train_file", "dev_file", "test_file")


def run_settings(config):
    """What a trial was computed from, recorded in its results.json: a re-run keeps it only if they match."""
    values = {name: FLAGS[name].value for name in ("init_checkpoint", *_DATA_FLAGS)}
    values.update({name: os.path.abspath(values[name]) for name in _PATH_FLAGS if values[name]})
    return {"config": config.to_dict(), **values}


def kept_trial(path, config):
    """A finished trial's results, after checking they come from the same settings."""
    try:
        results = read_json(path)
    except ValueError as e:  # not JSON, not UTF-8
        raise ValueError(f"{e}; delete it to run that trial again") from None
    if not isinstance(results, dict) or not isinstance(results.get("scores"), dict):
        raise ValueError(f"{path}: not a trial's results; delete it to run that trial again")
    recorded, settings = results.get("run"), run_settings(config)
    if recorded is not None and recorded != settings:  # (results of older versions record nothing)
        recorded = recorded if isinstance(recorded, dict) else {}
        recorded_config = recorded.get("config") if isinstance(recorded.get("config"), dict) else {}
        differing = sorted([k for k, v in settings["config"].items() if recorded_config.get(k) != v]
                           + [k for k, v in settings.items() if k != "config" and recorded.get(k) != v])
        raise ValueError(f"{os.path.dirname(path)} holds a trial of another run (differing: {differing}); use a "
                         "new --output_dir, or the same flags to resume")
    return results


def restarts_when_interrupted(run_trial):
    """Ctrl-C during a trial says what a re-run does: finished trials are kept, this one starts over (a trial
    keeps no checkpoint: it is minutes, and its results.json is written last)."""
    @functools.wraps(run_trial)
    def wrapped(config, folder, model_config):
        try:
            return run_trial(config, folder, model_config)
        except KeyboardInterrupt:
            raise KeyboardInterrupt(f"finished trials are kept; {folder} is unfinished and starts again from its "
                                    "beginning when the same command is re-run") from None
    return wrapped


@restarts_when_interrupted
def run_trial(config, folder, model_config):
    """Trains one seed (scoring dev as it goes), scores every labelled evaluation split (a test file too, when
    it has labels) and predicts the others, and saves the model as a self-describing folder; returns the
    results. Every split is read and checked, and the sequence length against `model_config`, before anything
    is written."""
    from electra_tf.finetuning import finetune
    from electra_tf.finetuning.trainer import check_sequence_length

    task = task_for(config)
    splits = {"train": task.load("train")}  # first: a task may take its labels from it
    splits.update({split: task.load(split) for split in task.splits if split != "train"})
    check_sequence_length(task.sequence_length, model_config, FLAGS.init_checkpoint)
    for split, examples in splits.items():
        advice = task.advice(split, examples)
        if advice:
            print(advice, flush=True)
    train = splits["train"]
    dev = splits["dev"] if "dev" in splits and task.scored("dev") else None
    if FLAGS.keep_best and dev is None:
        raise ValueError("--keep_best keeps the model of the best dev score, and there is no labelled dev data: "
                         "give --dev_file (or a --data_dir holding the task's dev file), or drop --keep_best")
    os.makedirs(folder, exist_ok=True)
    finetuned = finetune(task, FLAGS.init_checkpoint, train, dev_examples=dev, eval_every=FLAGS.eval_every,
                         log_dir=os.path.join(folder, "logs"), keep_best=FLAGS.keep_best, log_every=FLAGS.log_every)
    model = finetuned.model
    results = {"seed": config.seed, "scores": {}, "predictions": {}, "run": run_settings(config)}
    for split, examples in splits.items():
        if split == "train":
            continue
        predictions = task.predict(model, examples)
        if task.scored(split, examples):
            results["scores"][split] = task.score(examples, predictions)
        results["predictions"][split] = task.write_predictions(examples, predictions, folder, split)
    results["data"] = {name: count for split, examples in splits.items()
                       for name, count in task.data_stats(split, examples).items()}
    results["dev_history"] = finetuned.dev_history
    results["dev_majority_class"] = finetuned.dev_baseline  # the dev accuracy of always answering train's commonest
    results["label_names"] = list(task.label_names) if task.label_names else None
    results["model"] = os.path.join(folder, "model")  # for tools/export_model.py: --model=<this folder>
    with saying_saved(results["model"], model):
        model.save_pretrained(results["model"], tokenizer=task.tokenizer, label_names=task.label_names,
                              task=task.name, max_seq_length=task.sequence_length, **task.serving_options())
    write_json(os.path.join(folder, "results.json"), results)  # last: marks the trial done
    return results


def summarise(trials, test=False):
    """Each split's metrics as the median over trials, with every trial's value: the dev splits', or with
    `test` the labelled test splits'."""
    from electra_tf.finetuning.task import held_out

    summary = {}
    for split in (split for split in trials[0]["scores"] if held_out(split) == test):
        for metric in trials[0]["scores"][split]:
            values = [t["scores"][split][metric] for t in trials]
            summary.setdefault(split, {})[metric] = {"median": statistics.median(values), "trials": values}
    return summary


@exits_cleanly_on_bad_input
def run(argv):
    del argv
    from electra_tf.checkpoints.sources import read_config
    from electra_tf.training.determinism import enable_determinism

    check_option_flags(FLAGS.task)
    resolve_checkpoint_flags("init_checkpoint")
    lock_folder(FLAGS.output_dir)  # one run per folder: another one is refused, naming its pid
    if FLAGS.deterministic:
        enable_determinism()  # each trial seeds its generators itself (finetune: the trial's seed)
    model_config = read_config(FLAGS.init_checkpoint)
    width = model_config.hidden_size
    size = FLAGS.model_size or model_size(width)
    overrides = config_overrides(FinetuningConfig)
    base = FinetuningConfig.for_task(overrides.pop("task"), size, hidden_size=None if FLAGS.model_size else width,
                                     **overrides)
    trials = []
    for trial in range(FLAGS.num_trials):
        folder = os.path.join(FLAGS.output_dir, f"trial_{trial}")
        config = base.replace(seed=base.seed + trial)
        done = os.path.join(folder, "results.json")
        if os.path.exists(done):
            trials.append(kept_trial(done, config))
            print(f"trial {trial}: done before, kept")
        else:
            trials.append(run_trial(config, folder, model_config))
        majority = trials[-1].get("dev_majority_class")
        print(f"trial {trial} (seed {config.seed}): {json.dumps(trials[-1]['scores'])}"
              + ("" if majority is None else f" (dev majority class {majority:.4f})")
              + f"; model in {trials[-1].get('model', folder)}", flush=True)
    results = {"task": FLAGS.task, "init_checkpoint": FLAGS.init_checkpoint, "model_size": size,
               "config": base.to_dict(), "num_trials": FLAGS.num_trials, "dev": summarise(trials),
               "dev_majority_class": trials[0].get("dev_majority_class")}
    test = summarise(trials, test=True)
    if test:
        results["test"] = test
    write_json(os.path.join(FLAGS.output_dir, "results.json"), results)
    print(json.dumps(results["dev"], indent=2))
    if test:
        print("test:", json.dumps(test, indent=2))


def main():
    """The console script `electra-finetune`."""
    run_tool(run, __name__)


if __name__ == "__main__":  # python -m electra_tf.tools.run_finetuning
    main()
