r"""Fine-tunes a pre-trained ELECTRA discriminator on a task; scores dev, writes predictions.

    python -m electra_tf.tools.run_finetuning --task=mrpc --data_dir=glue_data \
        --init_checkpoint=runs/small/final --output_dir=runs/mrpc --num_trials=5

- Tasks: GLUE (cola sst2 mrpc stsb qqp mnli qnli rte wnli; `ax` is predicted by
  an `mnli` run), `text_classification` (CSV/TSV/JSONL: --train_file,
  --dev_file, --test_file, --text_columns, --label_column), `conll2003`,
  `chunk`, `squad` (2.0), `squadv1` (--qa_metric=cmrc or drcd: scored as the
  official CMRC 2018 / DRCD script does), `swag`.
- Data: --data_dir with the task's usual file names (the GLUE download's
  layout, train.txt/dev.txt/test.txt, train-v2.0.json/dev-v2.0.json,
  train.csv/val.csv/test.csv), --tfds for GLUE from TensorFlow Datasets, or
  explicit --{train,dev,test}_file: the task's file format, a Parquet file,
  or a 🤗 dataset: a save_to_disk folder, a folder of data files, or a hub id
  (`id[:config][@split]`, e.g. --train_file=conll2003; without @split the
  split named as the flag: train, dev/validation, test). Columns as in the
  hub's datasets (text_classification: --text_columns/--label_column;
  tagging: tokens and ner_tags, or --tag_column=<name>; squad: id, question,
  context, answers; swag: sent1, sent2, ending0..), class ids named by their
  ClassLabel. Needs `pip install datasets` (Parquet does not).
- Settings: the original per-task defaults (`FinetuningConfig.for_task`,
  sized by --model_size or the checkpoint's width); any `FinetuningConfig`
  field is a flag.
- Output, under --output_dir: trial_<i>/model/ (the model folder: model,
  tokenizer files, label names, length; `electra-export --model=` takes it),
  trial_<i>/results.json (scores, dev scores during training) and the
  predictions, and results.json with every trial's dev scores and their median
  (the paper reports medians over fine-tuning seeds). A re-run skips finished
  trials, so an interrupted run resumes (an unfinished trial starts over).
  Each trial's model folder gets a README.md model card (its scores, the data,
  this command); --push_to_hub=<owner>/<name> pushes the best trial's (by its
  first dev score) to the Hugging Face hub.
- Another vocabulary than the checkpoint's (--vocab_file) is refused in one
  line naming both, unless --allow_vocabulary_change: then each token both
  hold keeps its embedding row, the others are initialised anew.
"""

import dataclasses
import os

from absl import flags

from electra_tf.config import FINETUNING_TASKS, FinetuningConfig
from electra_tf.tools.common import (
    check_hub_flags,
    command_line,
    config_overrides,
    define_config_flags,
    define_hub_flags,
    exits_cleanly_on_bad_input,
    push_output,
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
_SOURCES = ("a file, a .parquet file, or a 🤗 dataset: a save_to_disk folder, a folder of data files or a hub id, "
            "as id[:config][@split]")
flags.DEFINE_string("train_file", None, f"Training data (overrides --data_dir's): {_SOURCES} (default split: train).")
flags.DEFINE_string("dev_file", None, f"Development data, scored after training: {_SOURCES} (default split: dev, "
                    "else validation).")
flags.DEFINE_string("test_file", None, "Test data, predicted after training (and scored, as dev, when it has "
                    f"labels): {_SOURCES} (default split: test).")
flags.DEFINE_list("text_columns", ["text"], "text_classification: one or two text columns.")
flags.DEFINE_string("label_column", "label", "text_classification: the label column.")
flags.DEFINE_list("label_names", None, "text_classification: the declared labels (default: those in train).")
flags.DEFINE_bool("regression", False, "text_classification: labels are scores.")


class ColumnParser(flags.ArgumentParser):
    """A column by number (a CoNLL file's) or by name (a dataset's)."""

    def parse(self, argument):
        text = str(argument).strip()
        return int(text) if text.lstrip("-").isdigit() else text

    def flag_type(self):
        return "int or name"


flags.DEFINE(ColumnParser(), "tag_column", -1, "conll2003/chunk: the tag's column: a CoNLL file's by number (-1: "
             "the last), a dataset's by name (default: ner_tags; chunk: chunk_tags).",
             serializer=flags.ArgumentSerializer())
flags.DEFINE_enum("qa_metric", "squad", ["squad", "cmrc", "drcd"],
                  "squad/squadv1: SQuAD's exact match and F1, or cmrc / drcd: as CMRC 2018's and DRCD's official "
                  "script (cmrc2018_drcd_evaluate.py: F1 over the longest common substring of Chinese characters "
                  "and NLTK's words).")
flags.DEFINE_integer("num_trials", 1, "Fine-tuning runs with seeds seed, seed+1, ...; the median is reported.")
flags.DEFINE_integer("eval_every", None, "Score the dev split every N steps (default: after each epoch; in a run "
                     "of more than 10 epochs, every few epochs, 10 times in all).")
flags.DEFINE_bool("keep_best", False, "Keep (save, score, export) the model of the best dev score, not the last.")
flags.DEFINE_integer("log_every", 50, "A progress line (loss, examples/s, time left) every N steps.")
flags.DEFINE_bool("deterministic", False, "TensorFlow's op determinism: a re-run gives the same weights (slower).")
flags.DEFINE_string("vocab_file", None, "Fine-tune with this vocab.txt, not the checkpoint's own (refused unless "
                    "--allow_vocabulary_change).")
flags.DEFINE_bool("allow_vocabulary_change", False,
                  "With --vocab_file of other tokens than the checkpoint's: keep the embedding rows of the tokens both "
                  "hold (matched by token), initialise the others anew (the start is written to <output_dir>/start).")
define_config_flags(FinetuningConfig)  # --task among them
FLAGS["task"].help = f"The task: one of {', '.join(sorted(FINETUNING_TASKS))}."
define_hub_flags()
flags.mark_flag_as_required("task")
flags.register_validator("num_trials", lambda n: n >= 1, "--num_trials must be >= 1")
flags.register_validator("eval_every", lambda n: n is None or n >= 1, "--eval_every must be >= 1 (steps)")
flags.register_validator("log_every", lambda n: n >= 1, "--log_every must be >= 1 (steps)")


def check_option_flags(task):
    """Refuses a task option flag given for a task that does not take it (it would change nothing)."""
    from electra_tf.finetuning.registry import task_options  # (this and the imports below load TensorFlow)
    from electra_tf.finetuning.run import TASK_OPTIONS

    taken = task_options(task)
    stray = [f"--{name}" for name in TASK_OPTIONS if FLAGS[name].present and name not in taken]
    if stray:
        raise ValueError(f"{', '.join(stray)}: not an option of task {task!r} (its options: "
                         f"{', '.join(f'--{name}' for name in taken if name in TASK_OPTIONS) or 'none'})")


@exits_cleanly_on_bad_input
def run(argv):
    del argv
    from electra_tf.finetuning.run import RunOptions, run_finetuning

    check_option_flags(FLAGS.task)
    check_hub_flags()
    base_model, command = FLAGS.init_checkpoint, command_line("electra-finetune")
    resolve_checkpoint_flags("init_checkpoint")
    options = RunOptions(**{field.name: FLAGS[field.name].value for field in dataclasses.fields(RunOptions)})
    overrides = config_overrides(FinetuningConfig)
    run_finetuning(overrides.pop("task"), options, **overrides)
    best = write_trial_cards(options, base_model, command)
    if best is not None:
        push_output(best)


def write_trial_cards(options, base_model, command):
    """Writes each trial's model card (its scores, data and this command); returns the model folder of the trial
    with the best first dev score (the first trial's when none is scored)."""
    from electra_tf.checkpoints.model_card import write_model_card
    from electra_tf.checkpoints.ours import read_model_info
    from electra_tf.data.tasks.tables import parse_source
    from electra_tf.util.atomic import read_json

    best, best_score = None, None
    dataset = parse_source(options.train_file)[0] if options.train_file else \
        options.data_dir or (f"glue/{FLAGS.task}" if options.tfds else None)
    for trial in range(options.num_trials):
        results = read_json(os.path.join(options.output_dir, f"trial_{trial}", "results.json"), expect=dict)
        folder = results.get("model")
        if not folder or not os.path.isdir(folder):
            continue
        write_model_card(folder, serving_task=read_model_info(folder).get("serving_task"), base_model=base_model,
                         dataset=dataset, scores=results.get("scores"), command=command,
                         label_names=results.get("label_names"), model_name=f"electra-{FLAGS.task}")
        dev = next(iter(results.get("scores", {}).get("dev", {}).values()), None)
        if best is None or (isinstance(dev, (int, float)) and (best_score is None or dev > best_score)):
            best, best_score = folder, dev if isinstance(dev, (int, float)) else best_score
    return best


def main():
    """The console script `electra-finetune`."""
    run_tool(run, __name__)


if __name__ == "__main__":  # python -m electra_tf.tools.run_finetuning
    main()
