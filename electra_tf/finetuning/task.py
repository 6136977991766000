"""`FinetuningTask`: what `finetune` and `electra-finetune` need to know of a task, in one class: its data
(`load`, `train_dataset`, `predict`), model (`model_class`), loss, metrics, prediction files, defaults, and its
data options (`Options`, a frozen dataclass; `make_task` refuses an option the task does not declare).

Example:
>>> from electra_tf import FinetuningConfig
>>> from electra_tf.finetuning.registry import TASKS
>>> task_class = TASKS["conll2003"]
>>> task_class.model_class.serving_task, task_class.default_max_seq_length
('tagging', 128)
"""

import abc
import dataclasses
import os

import numpy as np

from electra_tf.util.atomic import write_text
from electra_tf.data import batching
from electra_tf.data.tasks.tables import with_split


@dataclasses.dataclass(frozen=True)
class NoOptions:
    """The options of a task that takes none."""


def held_out(split):
    """Whether `split` is a test split (or GLUE's diagnostic set, AX): predicted, and scored only when its file
    is labelled.

    >>> [held_out(split) for split in ("dev", "dev_mismatched", "test", "test_mismatched", "ax")]
    [False, False, True, True, True]
    """
    return split.startswith("test") or split == "ax"


def option_names(options_class):
    """The options an `Options` dataclass declares, in order."""
    return tuple(field.name for field in dataclasses.fields(options_class))


class FinetuningTask(abc.ABC):
    """A fine-tuning task.

    Args:
        config: a `FinetuningConfig`; an unset `max_seq_length` takes the task's default.
        files: split name → file (or Parquet file, 🤗 dataset folder or hub id), for splits not in `data_dir`.
        data_dir: a folder with the task's files under their usual names (`default_files`).
        options: an instance of the task's `Options` (default: `Options()`).
    """

    Options = NoOptions
    model_class = None
    default_files = {}
    default_epochs = 3.0
    default_max_seq_length = 128
    min_train_steps = 0  # the fewest training steps unset epochs give (`electra_tf.finetuning.defaults`)

    def __init__(self, config, tokenizer, files=None, data_dir=None, options=None):
        if options is not None and not isinstance(options, self.Options):
            raise TypeError(f"{type(self).__name__} takes {self.Options.__name__} options, not "
                            f"{type(options).__name__}")
        self.options = self.Options() if options is None else options
        self.config = config.replace(max_seq_length=config.max_seq_length or self.default_max_seq_length)
        self.tokenizer = tokenizer
        self.data_dir = data_dir
        self.files = {split: os.path.join(data_dir, name) for split, name in self.default_files.items()} \
            if data_dir else {}
        self.files.update({split: path for split, path in (files or {}).items() if path})
        self._last_prepared = None  # (examples, config, their items if a list, what `_prepared` made of them)

    def _prepared(self, examples, prepare):
        """`prepare(examples)` (their model inputs), made once for the examples last given under the same config: a
        dev set is predicted at every evaluation, and featurizing it takes seconds. A list given again is the same
        examples only while it holds the same items (one appended, removed or replaced since: made afresh)."""
        items = list(examples) if isinstance(examples, list) else None
        last = self._last_prepared
        if last is None or last[0] is not examples or last[1] != self.config or (
                items is not None and (len(items) != len(last[2]) or any(a is not b for a, b in zip(items, last[2])))):
            self._last_prepared = last = (examples, self.config, items, prepare(examples))
        return last[3]

    def task_epochs(self, name):
        """The default number of epochs for the task `name` (a task class may serve several names)."""
        return self.default_epochs

    @property
    def name(self):
        return self.config.task

    @property
    def splits(self):
        """The splits there are files for, training first."""
        return tuple(self.files)

    def path(self, split):
        """The file of `split`; a dataset (`electra_tf.data.tasks.tables`) that names no split: its split `split`."""
        if split not in self.files:
            raise ValueError(f"{self.name}: no file for split {split!r} (give --{split}_file or --data_dir)")
        return with_split(self.files[split], split)

    @property
    def sequence_length(self):
        return self.config.max_seq_length

    @property
    def label_names(self):
        """Class or tag names in id order (known after the training split is loaded), or None."""
        return None

    def class_labels(self, examples):
        """The class id of each example, for the majority-class baseline (`None`: the task has no one class per
        example, as tagging, question answering and regression)."""
        return None

    def predicted_classes(self, predictions):
        """The class id `predict` chose for each example (`None` where `class_labels` is)."""
        return None

    def main_metric(self, scores):
        """The metric the best model is chosen by (the first of `score`'s unless a task says otherwise)."""
        return next(iter(scores))

    def scored(self, split, examples=None):
        """Whether `split` is scored: every split but train, a test split (`held_out`) only when its `examples`
        are `labelled`."""
        if held_out(split):
            return examples is not None and self.labelled(examples)
        return split != "train"

    def labelled(self, examples):
        """Whether `examples` (a test file's) carry labels to score."""
        return True

    def compile(self, model, optimizer):
        model.compile(optimizer=optimizer, **self.losses())

    def build_model(self, init_checkpoint):
        """The task model with the encoder (and, from a checkpoint of the same task, the head) of
        `init_checkpoint`, and the task's `preprocessor`."""
        return self.model_class.from_pretrained(init_checkpoint, preprocessor=self.preprocessor(),
                                                **self.model_arguments())

    def preprocessor(self):
        """What turns raw text into the model's inputs after training (`None`: the model takes ids only)."""
        return None

    def length_order(self, lengths):
        """The order evaluation and prediction run examples in: by length (see `electra_tf.data.batching`), or
        as given with `pad_to_max_length`."""
        return np.arange(len(lengths)) if self.config.pad_to_max_length else batching.length_order(lengths)

    def serving_options(self):
        """What the exported serving signatures need to know of the task (`electra_tf.export`'s options)."""
        return {}

    @abc.abstractmethod
    def model_arguments(self):
        """The task model's constructor arguments (number of labels, head, ...)."""

    @abc.abstractmethod
    def load(self, split):
        """The examples of `split`."""

    def advice(self, split, examples):
        """A line of advice on `split`'s `examples`, printed before training (`None`: nothing to say)."""
        return None

    @abc.abstractmethod
    def texts(self, examples):
        """The raw texts of `examples` the model reads (each once), in order: what `finetune` measures the
        `[UNK]` rate of before it trains."""

    def data_stats(self, split, examples):
        """What `results.json`'s `data` records of `split`'s `examples` (counts, e.g. of truncated texts)."""
        return {}

    @abc.abstractmethod
    def train_dataset(self, examples):
        """`(dataset, batches per epoch)`: shuffled training batches of `(inputs, labels[, weights])`."""

    @abc.abstractmethod
    def losses(self):
        """`compile` arguments: `{"loss": ..., ["loss_weights": ...]}`."""

    @abc.abstractmethod
    def predict(self, model, examples):
        """Predictions for `examples`, in the form `score` and `write_predictions` take."""

    @abc.abstractmethod
    def score(self, examples, predictions):
        """The task's metrics, `{name: value}`."""

    @abc.abstractmethod
    def write_predictions(self, examples, predictions, folder, split):
        """Writes `predictions` of `split` into `folder`; returns the file's path."""

    def write_tsv(self, folder, name, ids, values, probabilities=None):
        """A TSV of `index<TAB>prediction` (and `<TAB>probability` given probabilities); returns its path."""
        path = os.path.join(folder, f"{name}.tsv")
        rows = zip(ids, values) if probabilities is None else zip(ids, values, probabilities)
        header = "index\tprediction" + ("" if probabilities is None else "\tprobability")
        write_text(path, header + "\n" + "".join("\t".join(map(str, row)) + "\n" for row in rows))
        return path
