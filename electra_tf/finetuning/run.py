"""A whole fine-tuning run, as `electra-finetune` does it: `num_trials` seeds, each in `<output_dir>/trial_<i>`,
the medians in `<output_dir>/results.json`; a re-run keeps the finished trials of the same settings.

    results = run_finetuning("mrpc", RunOptions(init_checkpoint="runs/small/final", output_dir="runs/mrpc",
                                                data_dir="glue_data", num_trials=5), epochs=3.0)
    results["dev"]["dev"]["accuracy"]["median"]
"""

import dataclasses
import functools
import json
import os
import statistics

from electra_tf import finetuning  # `finetuning.make_task`, `finetuning.finetune`: what a test may replace
from electra_tf.util.atomic import read_json, write_json
from electra_tf.checkpoints.saving_progress import saying_saved
from electra_tf.checkpoints.tokenizer_files import load_tokenizer
from electra_tf.checkpoints.sources import read_config
from electra_tf.config import FinetuningConfig, size_name
from electra_tf.finetuning.registry import task_options
from electra_tf.finetuning.task import held_out
from electra_tf.finetuning.trainer import check_sequence_length
from electra_tf.finetuning.vocabulary_change import changed_vocabulary, start_folder
from electra_tf.pretraining.vocabulary_identity import check_model_vocabulary
from electra_tf.util.folder_lock import lock_folder
from electra_tf.training.determinism import enable_determinism

# The task data options among `RunOptions`' fields (each a field of some task's `Options`).
TASK_OPTIONS = ("tfds", "tfds_data_dir", "text_columns", "label_column", "label_names", "regression", "tag_column",
                "qa_metric")
# The options besides the config that decide what a trial computes; and those of them that are paths.
_DATA_OPTIONS = ("vocab_file", "data_dir", "train_file", "dev_file", "test_file", *TASK_OPTIONS)
_PATH_OPTIONS = ("init_checkpoint", "vocab_file", "data_dir", "tfds_data_dir", "train_file", "dev_file", "test_file")


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """What a fine-tuning run reads and writes and how it runs, besides its `FinetuningConfig` (each field is the
    tool's flag of that name, with its default).

    >>> RunOptions(init_checkpoint="runs/small/final", output_dir="runs/sst2").num_trials
    1
    >>> RunOptions(init_checkpoint="m", output_dir="o", num_trials=0)
    Traceback (most recent call last):
    ValueError: --num_trials must be >= 1
    >>> RunOptions(init_checkpoint="m", output_dir="o", allow_vocabulary_change=True)
    Traceback (most recent call last):
    ValueError: --allow_vocabulary_change fine-tunes with the tokens of --vocab_file: give it
    """

    init_checkpoint: str  # any format `read_source` reads
    output_dir: str
    model_size: str | None = None  # small, base or large: the paper's rate and decay; None: by the model's width
    data_dir: str | None = None
    tfds: bool = False
    tfds_data_dir: str | None = None
    train_file: str | None = None
    dev_file: str | None = None
    test_file: str | None = None
    text_columns: list = dataclasses.field(default_factory=lambda: ["text"])
    label_column: str = "label"
    label_names: list | None = None
    regression: bool = False
    tag_column: int = -1
    qa_metric: str = "squad"
    num_trials: int = 1
    eval_every: int | None = None  # None: after each epoch (every few epochs beyond 10)
    keep_best: bool = False
    log_every: int = 50
    deterministic: bool = False
    vocab_file: str | None = None  # other tokens than the checkpoint's: refused unless allow_vocabulary_change
    allow_vocabulary_change: bool = False  # keep the rows of the tokens both hold, initialise the others anew

    def __post_init__(self):
        if self.allow_vocabulary_change and not self.vocab_file:
            raise ValueError("--allow_vocabulary_change fine-tunes with the tokens of --vocab_file: give it")
        for name, least in (("num_trials", 1), ("eval_every", 1), ("log_every", 1)):
            value = getattr(self, name)
            if value is not None and value < least:
                raise ValueError(f"--{name} must be >= {least}")


def run_settings(config, options):
    """What a trial was computed from, recorded in its results.json: a re-run keeps it only if they match."""
    values = {name: getattr(options, name) for name in ("init_checkpoint", *_DATA_OPTIONS)}
    values.update({name: os.path.abspath(values[name]) for name in _PATH_OPTIONS if values[name]})
    return {"config": config.to_dict(), **values}


def kept_trial(path, config, options):
    """A finished trial's results, after checking they come from the same settings."""
    try:
        results = read_json(path)
    except ValueError as e:  # not JSON, not UTF-8
        raise ValueError(f"{e}; delete it to run that trial again") from None
    if not isinstance(results, dict) or not isinstance(results.get("scores"), dict):
        raise ValueError(f"{path}: not a trial's results; delete it to run that trial again")
    recorded, settings = results.get("run"), run_settings(config, options)
    if recorded is None or recorded == settings:  # (results of older versions record nothing)
        return results
    recorded = recorded if isinstance(recorded, dict) else {}
    recorded_config = recorded.get("config") if isinstance(recorded.get("config"), dict) else {}
    # A setting no flag gave (None) is chosen when the trial trains (results["defaults"]): a trial that recorded its
    # value there, as older versions did, is of the same run.
    differing = sorted([k for k, v in settings["config"].items() if v is not None and recorded_config.get(k) != v]
                       + [k for k, v in settings.items() if k != "config" and recorded.get(k) != v])
    if differing:
        raise ValueError(f"{os.path.dirname(path)} holds a trial of another run (differing: {differing}); use a "
                         "new --output_dir, or the same flags to resume")
    return results


def restarts_when_interrupted(run_trial):
    """Ctrl-C during a trial says what a re-run does: finished trials are kept, this one starts over (a trial
    keeps no checkpoint: it is minutes, and its results.json is written last)."""
    @functools.wraps(run_trial)
    def wrapped(config, folder, *args):
        try:
            return run_trial(config, folder, *args)
        except KeyboardInterrupt:
            raise KeyboardInterrupt(f"finished trials are kept; {folder} is unfinished and starts again from its "
                                    "beginning when the same command is re-run") from None
    return wrapped


@restarts_when_interrupted
def run_trial(config, folder, options, tokenizer, model_config, start):
    """Trains one seed from `start`, scores or predicts every other split and saves the model folder; returns the
    results. Every split is read and checked before anything is written."""
    taken = task_options(config.task)
    files = {"train": options.train_file, "dev": options.dev_file, "test": options.test_file}
    task = finetuning.make_task(config, tokenizer, files=files, data_dir=options.data_dir,
                                **{name: getattr(options, name) for name in TASK_OPTIONS if name in taken})
    splits = {"train": task.load("train")}  # first: a task may take its labels from it
    splits.update({split: task.load(split) for split in task.splits if split != "train"})
    check_sequence_length(task.sequence_length, model_config, options.init_checkpoint)
    for split, examples in splits.items():
        advice = task.advice(split, examples)
        if advice:
            print(advice, flush=True)
    train = splits["train"]
    dev = splits["dev"] if "dev" in splits and task.scored("dev") else None
    if options.keep_best and dev is None:
        raise ValueError("--keep_best keeps the model of the best dev score, and there is no labelled dev data: "
                         "give --dev_file (or a --data_dir holding the task's dev file), or drop --keep_best")
    os.makedirs(folder, exist_ok=True)
    finetuned = finetuning.finetune(task, start, train, dev_examples=dev,
                                    eval_every=options.eval_every, log_dir=os.path.join(folder, "logs"),
                                    keep_best=options.keep_best, log_every=options.log_every)
    model = finetuned.model
    results = {"seed": config.seed, "scores": {}, "predictions": {}, "run": run_settings(config, options)}
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
    results["defaults"] = {name: {"value": getattr(task.config, name), "reason": reason}
                           for name, reason in finetuned.defaults.items()}  # the settings chosen, and why
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
    summary = {}
    for split in (split for split in trials[0]["scores"] if held_out(split) == test):
        for metric in trials[0]["scores"][split]:
            values = [t["scores"][split][metric] for t in trials]
            summary.setdefault(split, {})[metric] = {"median": statistics.median(values), "trials": values}
    return summary


def run_finetuning(task, options, **config_changes):
    """Fine-tunes `options.init_checkpoint` on `task` with the paper's `FinetuningConfig` changed by
    `config_changes`; returns what `<output_dir>/results.json` holds. Resumes the run in `options.output_dir`."""
    lock_folder(options.output_dir)  # one run per folder: another one is refused, naming its pid
    if options.deterministic:
        enable_determinism()  # each trial seeds its generators itself (finetune: the trial's seed)
    model_config = read_config(options.init_checkpoint)
    check_model_vocabulary(options.init_checkpoint)  # its vocab.txt, the one its weights were trained with
    tokens = changed_vocabulary(options.init_checkpoint, options.vocab_file, options.allow_vocabulary_change)
    base = FinetuningConfig.for_task(task, options.model_size, **config_changes)
    start, tokenizer = None, None  # found (for other tokens: written) and read once, by the first trial that trains
    trials = []
    for trial in range(options.num_trials):
        folder = os.path.join(options.output_dir, f"trial_{trial}")
        config = base.replace(seed=base.seed + trial)
        done = os.path.join(folder, "results.json")
        if os.path.exists(done):
            trials.append(kept_trial(done, config, options))
            print(f"trial {trial}: done before, kept")
        else:
            start = start or start_folder(options.init_checkpoint, tokens, options.vocab_file, options.output_dir,
                                          base.seed)
            tokenizer = tokenizer or load_tokenizer(start)
            trials.append(run_trial(config, folder, options, tokenizer, model_config, start))
        majority = trials[-1].get("dev_majority_class")
        print(f"trial {trial} (seed {config.seed}): {json.dumps(trials[-1]['scores'])}"
              + ("" if majority is None else f" (dev majority class {majority:.4f})")
              + f"; model in {trials[-1].get('model', folder)}", flush=True)
    shape = {name: getattr(model_config, name) for name in ("hidden_size", "num_layers", "embedding_size")}
    results = {"task": task, "init_checkpoint": options.init_checkpoint, "model_size": size_name(model_config),
               "model_shape": shape, "defaults": trials[0].get("defaults", {}),
               "config": base.to_dict(), "num_trials": options.num_trials, "dev": summarise(trials),
               "dev_majority_class": trials[0].get("dev_majority_class")}
    test = summarise(trials, test=True)
    if test:
        results["test"] = test
    write_json(os.path.join(options.output_dir, "results.json"), results)
    print(json.dumps(results["dev"], indent=2))
    if test:
        print("test:", json.dumps(test, indent=2))
    return results
