"""Sentence (pair) classification and regression: `TextClassificationTask` (CSV, TSV or JSONL files) and
`GlueTask` (the GLUE download or TFDS, each task's metrics, MRPC/STS-B trained on both orders, test predictions in
the GLUE server's files).

Example:
>>> from electra_tf import ElectraTokenizer, FinetuningConfig
>>> tokenizer = ElectraTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "good", "bad"])
>>> task = GlueTask(FinetuningConfig(task="rte"), tokenizer)
>>> task.task_epochs(task.name), task.num_labels, task.label_names
(10, 2, ('entailment', 'not_entailment'))
"""

import dataclasses
import os

import keras
import numpy as np

from electra_tf.data import batching
from electra_tf.data.tasks import classification
from electra_tf.finetuning.task import FinetuningTask, held_out
from electra_tf.finetuning.metrics import classification_scores
from electra_tf.models.sequence_classification import ElectraSequenceClassifier
from electra_tf.text.preprocessor import ElectraPreprocessor


@dataclasses.dataclass(frozen=True)
class TextClassificationOptions:
    """Where a text-classification file's texts (one column, or two for pairs) and labels are; `label_names`: the
    labels in id order (default: the training file's, sorted); `regression`: float scores.
    """

    text_columns: tuple = ("text",)
    label_column: str = "label"
    label_names: tuple = None
    regression: bool = False

    def __post_init__(self):
        """Refuses a column named twice: as both texts of a pair (each pair would be a text and itself), or as a
        text and the label (the model would read its answers).

        >>> TextClassificationOptions(text_columns=("review", "review"))
        Traceback (most recent call last):
        ValueError: text_columns ['review', 'review'] name 'review' twice; a pair is two columns (give one column for \
single texts)
        """
        columns = list(self.text_columns)
        repeated = [column for column in columns if columns.count(column) > 1]
        if repeated:
            raise ValueError(f"text_columns {columns} name {repeated[0]!r} twice; a pair is two columns (give one "
                             "column for single texts)")
        if self.label_column in columns:
            raise ValueError(f"label_column {self.label_column!r} is also one of text_columns {columns}: the model "
                             "would read its labels; name the labels' own column")


@dataclasses.dataclass(frozen=True)
class GlueOptions:
    """Where a GLUE task is read from: `tfds`, TensorFlow Datasets' `glue/<task>` (else the GLUE download's TSVs)."""

    tfds: bool = False
    tfds_data_dir: str = None


class TextClassificationTask(FinetuningTask):
    """Text classification (or regression) from CSV/TSV/JSONL files."""

    Options = TextClassificationOptions
    model_class = ElectraSequenceClassifier

    def __init__(self, config, tokenizer, files=None, data_dir=None, options=None):
        super().__init__(config, tokenizer, files, data_dir, options)
        columns = self.columns()
        self.text_columns, self.label_column = tuple(columns.text_columns), columns.label_column
        self.regression, label_names = columns.regression, columns.label_names
        self._label_names = tuple(label_names) if label_names else None
        self._declared = self._label_names is not None
        if self._declared and not self.regression:
            classification.check_label_names(self._label_names)
            self._check_classes(self._label_names, "--label_names")

    def columns(self):
        """Where the files' texts and labels are (a `TextClassificationOptions`): the task's options."""
        return self.options

    @staticmethod
    def _check_classes(names, source):
        """A classifier of one class would be a 1-logit model, which reads as regression: refused."""
        if len(names) < 2:
            raise ValueError(f"{source}: every label is {names[0]!r}; a classifier needs two classes or more: "
                             f"declare them with --label_names (e.g. --label_names={names[0]},other), or pass "
                             "--regression for scores")

    @property
    def label_names(self):
        """The declared labels, else the training file's (sorted), whichever split is read first."""
        if self._label_names is None and not self.regression:
            self.load("train")
        return self._label_names

    @property
    def num_labels(self):
        return 1 if self.regression else len(self.label_names)

    @property
    def metrics(self):
        return ("pearson", "spearman") if self.regression else ("accuracy",)

    def texts(self, examples):
        return [text for column in examples.texts for text in column]

    def data_stats(self, split, examples):
        """How many examples there are and how many are truncated (longer than `max_seq_length`):
        `<split>_examples`, `<split>_truncated`."""
        return {f"{split}_examples": len(examples),
                f"{split}_truncated": classification.count_truncated(examples, self.tokenizer, self.sequence_length)}

    def load(self, split):
        """The examples of `split`'s file (a test file's labels when it has the label column)."""
        known = self._label_names if split == "train" or self.regression else self.label_names
        try:
            examples, names = classification.read_text_file(
                self.path(split), self.text_columns, self.label_column, label_names=known,
                regression=self.regression, label_optional=held_out(split))
        except classification.UnknownLabelsError as error:
            if self._declared:
                raise
            raise ValueError(f"{error}, those of the training file {self.path('train')}; declare every label "
                             f"with --label_names={','.join(sorted({*self.label_names, *error.unknown}))}") \
                from None
        if known is None and not self.regression and split == "train":
            self._check_classes(names, self.path(split))
            self._label_names = names
        return examples

    def training_examples(self, examples):
        """The examples training sees (GLUE's MRPC and STS-B add the swapped pairs)."""
        return examples

    def train_dataset(self, examples):
        examples = self.training_examples(examples)
        dataset = classification.classification_dataset(
            examples, self.tokenizer, self.sequence_length, self.config.batch_size, shuffle=True,
            seed=self.config.seed, pad_to_max_length=self.config.pad_to_max_length)
        return dataset, len(examples) // self.config.batch_size

    def model_arguments(self):
        return {"num_labels": self.num_labels, "head": self.config.head}

    def preprocessor(self):
        return ElectraPreprocessor(self.tokenizer, self.sequence_length)

    def serving_options(self):
        return {"text_pair": len(self.text_columns) == 2}

    def losses(self):
        loss = "mse" if self.regression else keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        return {"loss": {"logits": loss}}

    def _prediction_inputs(self, examples):
        """`(order, batches)`: the model inputs of `examples` in length order."""
        order = self.length_order(classification.packed_lengths(examples, self.tokenizer, self.sequence_length))
        dataset = classification.classification_dataset(examples.subset(order), self.tokenizer,
                                                        self.sequence_length, self.config.predict_batch_size,
                                                        pad_to_max_length=self.config.pad_to_max_length)
        return order, [inputs for inputs, _ in dataset]

    def predict(self, model, examples):
        """Class probabilities `[N, labels]`, or scores `[N]` for regression (length-aware: in length order,
        then put back)."""
        order, batches = self._prepared(examples, self._prediction_inputs)
        logits = np.concatenate([keras.ops.convert_to_numpy(model.predict_on_batch(inputs)["logits"])
                                 for inputs in batches])
        logits = batching.restore_order(logits, order)
        return logits[:, 0] if self.regression else keras.ops.convert_to_numpy(keras.ops.softmax(logits, axis=-1))

    def labelled(self, examples):
        return examples.labelled

    def class_labels(self, examples):
        return None if self.regression else examples.labels

    def predicted_classes(self, predictions):
        return None if self.regression else predictions.argmax(-1)

    def score(self, examples, predictions):
        return classification_scores(examples.labels, predictions if self.regression else predictions.argmax(-1),
                                     self.metrics)

    def prediction_values(self, predictions):
        return [f"{p:.3f}" for p in predictions] if self.regression else \
            [self.label_names[p] for p in predictions.argmax(-1)]

    def write_predictions(self, examples, predictions, folder, split):
        """A TSV of `index<TAB>prediction<TAB>probability` (the label and its probability), or of
        `index<TAB>prediction` (the score) for regression."""
        probabilities = None if self.regression else [f"{p:.4f}" for p in predictions.max(-1)]
        return self.write_tsv(folder, f"{self.name}_{split}", examples.ids, self.prediction_values(predictions),
                              probabilities)


class GlueTask(TextClassificationTask):
    """A GLUE task from the GLUE download's TSV files (`data_dir`) or from TFDS (`tfds=True`)."""

    Options = GlueOptions

    def __init__(self, config, tokenizer, files=None, data_dir=None, options=None):
        self.glue = classification.glue_task(config.task)
        super().__init__(config, tokenizer, files, data_dir, options)
        self.use_tfds, self.tfds_data_dir = self.options.tfds, self.options.tfds_data_dir

    def columns(self):
        return TextClassificationOptions(self.glue.tsv_text, self.glue.tsv_label, self.glue.label_names,
                                         regression=self.glue.label_names is None)

    def task_epochs(self, name):
        return classification.glue_task(name).epochs

    @property
    def metrics(self):
        return self.glue.metrics

    @property
    def splits(self):
        if not (self.use_tfds or self.data_dir):
            return tuple(self.files)
        # An MNLI model also predicts GLUE's diagnostic set (AX), when it is there.
        ax = self.glue.name == "mnli" and (self.use_tfds or os.path.exists(
            os.path.join(self.data_dir, classification.GLUE_FOLDERS["ax"])))
        return (*self.glue.splits, *(("ax",) if ax else ()))

    def load(self, split):
        if split in self.files:
            return super().load(split)
        task, split = (classification.GLUE_TASKS["ax"], "test") if split == "ax" else (self.glue, split)
        if self.use_tfds:
            return classification.read_glue_tfds(task, split, self.tfds_data_dir)
        return classification.read_glue_tsv(self.data_dir or "", task, split)

    def training_examples(self, examples):
        return examples.swapped() if self.glue.double_unordered and self.config.double_unordered else examples

    def write_predictions(self, examples, predictions, folder, split):
        """Dev splits as `text_classification`'s; test splits in the files the GLUE server expects
        (`CoLA.tsv`, `MNLI-m.tsv`, `MNLI-mm.tsv`, `AX.tsv`, ...)."""
        if self.scored(split):
            return super().write_predictions(examples, predictions, folder, split)
        name = {"test_mismatched": "MNLI-mm", "ax": "AX"}.get(
            split, "MNLI-m" if self.glue.name == "mnli" else classification.GLUE_FOLDERS[self.glue.name])
        return self.write_tsv(folder, name, examples.ids, self.prediction_values(predictions))
