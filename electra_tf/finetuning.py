"""Fine-tuning a pre-trained discriminator: one class per kind of task, and `finetune` to train it.

Each task knows how to read its splits, encode them (in-graph), build its
model on the pre-trained encoder, and predict, score and write predictions:

- `ClassificationTask`: GLUE (TSV files or TFDS) and CSV/TSV/JSONL files;
- `TaggingTask`: CoNLL-2003 NER, CoNLL-2000 chunking (entity-level F1);
- `QuestionAnsweringTask`: SQuAD 1.1 / 2.0;
- `MultipleChoiceTask`: SWAG-format files.

`make_task` picks one by name. `finetune` trains with AdamW, 10 % warm-up,
linear decay and layer-wise learning-rate decay, for
`len(train) // batch_size * epochs` steps, as the original.

Example (with a model from `make demo` and the GLUE files in `glue_data/`):
>>> from electra_tf import ElectraTokenizer, FinetuningConfig
>>> config = FinetuningConfig.for_task("sst2", model_size="small")
>>> task = make_task(config, ElectraTokenizer.from_pretrained("runs/demo/model"),
...                  data_dir="glue_data")  # doctest: +SKIP
>>> model = finetune(task, "runs/demo/model", task.load("train"))  # doctest: +SKIP
>>> dev = task.load("dev")  # doctest: +SKIP
>>> task.score(dev, task.predict(model, dev))  # doctest: +SKIP
{'accuracy': 0.81...}
"""

import json
import os

import keras
import numpy as np
from absl import logging

from electra_tf.atomic import write_text
from electra_tf.data.tasks import classification, multiple_choice, squad, tagging
from electra_tf.metrics import classification_scores, entity_f1, squad_scores
from electra_tf.models.qa_head import question_answering_losses
from electra_tf.models.tasks import (ElectraForMultipleChoice, ElectraForQuestionAnswering,
                                     ElectraForSequenceClassification, ElectraForTokenClassification)
from electra_tf.training.layerwise_decay import layerwise_lr_multipliers
from electra_tf.training.optimization import create_optimizer

# Tasks other than GLUE's, with their files' default names in --data_dir.
TAGGING_TASKS = {"conll2003": {"train": "train.txt", "dev": "dev.txt", "test": "test.txt"},
                 "chunk": {"train": "train.txt", "dev": "test.txt", "test": "test.txt"}}
QA_TASKS = {"squad": {"train": "train-v2.0.json", "dev": "dev-v2.0.json"},
            "squadv1": {"train": "train-v1.1.json", "dev": "dev-v1.1.json"}}
CHOICE_TASKS = {"swag": {"train": "train.csv", "dev": "val.csv", "test": "test.csv"}}
TEXT_CLASSIFICATION = "text_classification"


class FinetuningTask:
    """What `finetune` and `tools/run_finetuning.py` need of a task. Subclasses fill in the data and model parts.

    Args:
        config: a `FinetuningConfig`.
        tokenizer: the pre-trained model's `ElectraTokenizer`.
        files: split name → file path, for splits not in `data_dir`'s default names.
        data_dir: a folder with the task's files under their usual names.
    """

    default_files = {}

    def __init__(self, config, tokenizer, files=None, data_dir=None):
        self.config = config
        self.tokenizer = tokenizer
        self.files = {split: os.path.join(data_dir, name) for split, name in self.default_files.items()} \
            if data_dir else {}
        self.files.update({split: path for split, path in (files or {}).items() if path})
        self.stats = {}

    @property
    def splits(self):
        return tuple(self.files)

    def path(self, split):
        if split not in self.files:
            raise ValueError(f"{self.config.task}: no file for split {split!r} (give --{split}_file or --data_dir)")
        return self.files[split]

    @property
    def sequence_length(self):
        return self.config.max_seq_length

    def compile(self, model, optimizer):
        model.compile(optimizer=optimizer, **self.losses())

    def scored(self, split):
        """Whether `split` has labels to score (test splits and GLUE's diagnostic set do not)."""
        return split != "train" and not split.startswith("test") and split != "ax"

    def write_predictions(self, examples, predictions, folder, split):
        """Writes `predictions` of `split` into `folder`; returns the file's path."""
        raise NotImplementedError


class ClassificationTask(FinetuningTask):
    """GLUE tasks (TSV files or `tfds=True`) and CSV/TSV/JSONL text classification (`text_columns`, ...)."""

    def __init__(self, config, tokenizer, files=None, data_dir=None, tfds=False, tfds_data_dir=None,
                 text_columns=("text",), label_column="label", label_names=None, regression=False):
        self.glue = None if config.task == TEXT_CLASSIFICATION else classification.glue_task(config.task)
        self.use_tfds, self.tfds_data_dir, self.data_dir = tfds, tfds_data_dir, data_dir
        super().__init__(config, tokenizer, files)
        self.text_columns, self.label_column, self.regression = tuple(text_columns), label_column, regression
        self.label_names = self.glue.label_names if self.glue else label_names and tuple(label_names)
        if self.glue:
            self.regression = self.glue.label_names is None

    @property
    def splits(self):
        if not (self.glue and (self.use_tfds or self.data_dir)):
            return tuple(self.files)
        # An MNLI model also predicts GLUE's diagnostic set (AX), when it is there.
        ax = self.glue.name == "mnli" and (self.use_tfds or os.path.exists(
            os.path.join(self.data_dir, classification.GLUE_FOLDERS["ax"])))
        return (*self.glue.splits, *(("ax",) if ax else ()))

    @property
    def num_labels(self):
        return 1 if self.regression else len(self.label_names)

    def load(self, split):
        if self.glue and split not in self.files:
            task, split = (classification.GLUE_TASKS["ax"], "test") if split == "ax" else (self.glue, split)
            if self.use_tfds:
                return classification.read_glue_tfds(task, split, self.tfds_data_dir)
            return classification.read_glue_tsv(self.data_dir or "", task, split)
        examples, names = classification.read_text_file(
            self.path(split), self.text_columns, self.label_column if split != "test" else None,
            label_names=self.label_names, regression=self.regression)
        if self.label_names is None and not self.regression:
            self.label_names = names  # from the training file, which is read first
        return examples

    def train_dataset(self, examples):
        if self.glue and self.glue.double_unordered and self.config.double_unordered:
            examples = examples.swapped()
        dataset = classification.classification_dataset(
            examples, self.tokenizer, self.sequence_length, self.config.batch_size, shuffle=True,
            seed=self.config.seed, drop_remainder=True)
        return dataset, len(examples) // self.config.batch_size

    def build_model(self, init_checkpoint):
        return ElectraForSequenceClassification.from_pretrained(init_checkpoint, num_labels=self.num_labels,
                                                                head=self.config.head)

    def losses(self):
        loss = "mse" if self.regression else keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        return {"loss": {"logits": loss}}

    def predict(self, model, examples):
        dataset = classification.classification_dataset(examples, self.tokenizer, self.sequence_length,
                                                        self.config.predict_batch_size)
        logits = model.predict(dataset.map(lambda x, y: x), verbose=0)["logits"]
        return logits[:, 0] if self.regression else logits.argmax(-1)

    def score(self, examples, predictions):
        metrics = self.glue.metrics if self.glue else ("pearson", "spearman") if self.regression else ("accuracy",)
        return classification_scores(examples.labels, predictions, metrics)

    def write_predictions(self, examples, predictions, folder, split):
        """A TSV of `index<TAB>prediction` (label names or scores); GLUE test splits get the names the
        GLUE server expects (`CoLA.tsv`, `MNLI-m.tsv`, `MNLI-mm.tsv`, `AX.tsv`, ...)."""
        values = [f"{p:.3f}" for p in predictions] if self.regression else [self.label_names[p] for p in predictions]
        name = f"{self.config.task}_{split}"
        if self.glue and not self.scored(split):
            name = {"test_mismatched": "MNLI-mm", "ax": "AX"}.get(
                split, "MNLI-m" if self.glue.name == "mnli" else classification.GLUE_FOLDERS[self.glue.name])
        path = os.path.join(folder, f"{name}.tsv")
        write_text(path, "index\tprediction\n" + "".join(f"{i}\t{v}\n" for i, v in zip(examples.ids, values)))
        return path


class TaggingTask(FinetuningTask):
    """CoNLL-format tagging, trained on BIOES tags (the original's encoding), scored by entity-level F1."""

    def __init__(self, config, tokenizer, files=None, data_dir=None, tag_column=-1, scheme="bioes"):
        self.default_files = TAGGING_TASKS.get(config.task, TAGGING_TASKS["conll2003"])
        super().__init__(config, tokenizer, files, data_dir)
        self.tag_column, self.scheme, self.label_names = tag_column, scheme, None

    def load(self, split):
        sentences = tagging.read_conll(self.path(split), self.tag_column)
        if self.label_names is None:
            self.label_names = tagging.label_names(sentences, self.scheme)  # from the training file
        return sentences

    def _dataset(self, sentences, training):
        dataset, stats = tagging.tagging_dataset(
            sentences, self.tokenizer, self.label_names, self.sequence_length,
            self.config.batch_size if training else self.config.predict_batch_size, shuffle=training,
            seed=self.config.seed, scheme=self.scheme, drop_remainder=training)
        self.stats.update({k: v for k, v in stats.items() if k != "first_token_positions"})
        return dataset, stats

    def train_dataset(self, sentences):
        return self._dataset(sentences, training=True)[0], len(sentences) // self.config.batch_size

    def build_model(self, init_checkpoint):
        return ElectraForTokenClassification.from_pretrained(init_checkpoint, num_labels=len(self.label_names),
                                                             head=self.config.head)

    def losses(self):
        return {"loss": {"logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True)}}

    def predict(self, model, sentences):
        dataset, stats = self._dataset(sentences, training=False)
        logits = model.predict(dataset.map(lambda x, y, w: x), verbose=0)["logits"]
        return tagging.decode_tags(logits, stats["first_token_positions"], self.label_names)

    def score(self, sentences, predictions):
        return entity_f1([list(s.tags) for s in sentences], predictions)

    def write_predictions(self, sentences, predictions, folder, split):
        """CoNLL format: `word<TAB>predicted tag`, a blank line after each sentence."""
        path = os.path.join(folder, f"{self.config.task}_{split}.txt")
        write_text(path, "".join("".join(f"{w}\t{t}\n" for w, t in zip(s.words, tags)) + "\n"
                                    for s, tags in zip(sentences, predictions)))
        return path


class QuestionAnsweringTask(FinetuningTask):
    """SQuAD 2.0 (`squad`) or 1.1 (`squadv1`): doc-stride windows, n-best spans, the null-score threshold."""

    def __init__(self, config, tokenizer, files=None, data_dir=None):
        self.default_files = QA_TASKS.get(config.task, QA_TASKS["squad"])
        super().__init__(config, tokenizer, files, data_dir)
        self.version_2 = config.task != "squadv1"

    def load(self, split):
        examples = squad.read_squad(self.path(split), on_bad_answer="skip" if split == "train" else "error")
        if examples.skipped_ids:
            self.stats[f"{split}_skipped_questions"] = len(examples.skipped_ids)
        return examples

    def _features(self, examples, training):
        c = self.config
        features = squad.squad_features(examples, self.tokenizer, self.sequence_length, c.doc_stride,
                                        c.max_query_length, training=training)
        self.stats["truncated_questions"] = features.truncated_questions
        return features

    def train_dataset(self, examples):
        features = self._features(examples, training=True)
        dataset = squad.squad_dataset(features, self.config.batch_size, training=True, shuffle=True,
                                      seed=self.config.seed)
        keep_start = self.config.head == "original"  # the joint head conditions its end logits on it

        def to_outputs(x, y):
            inputs = {k: v for k, v in x.items() if keep_start or k != "start_positions"}
            labels = {"start_logits": y["start_positions"], "end_logits": y["end_positions"]}
            if self.answerable_classifier:
                labels["answerable_logits"] = y["is_impossible"]
            return inputs, labels

        return dataset.map(to_outputs), len(features) // self.config.batch_size

    @property
    def answerable_classifier(self):
        return self.version_2 and self.config.answerable_classifier and self.config.head == "original"

    def build_model(self, init_checkpoint):
        return ElectraForQuestionAnswering.from_pretrained(
            init_checkpoint, head=self.config.head, beam_size=self.config.beam_size,
            answerable_classifier=self.answerable_classifier)

    def losses(self):
        loss, weights = question_answering_losses(self.config.answerable_weight, self.answerable_classifier)
        return {"loss": loss, "loss_weights": weights}

    def predict(self, model, examples):
        features = self._features(examples, training=False)
        outputs = model.predict(squad.squad_dataset(features, self.config.predict_batch_size, training=False),
                                verbose=0)
        predictions, _, null_odds = squad.postprocess(
            examples, features, outputs, self.config.n_best_size, self.config.max_answer_length,
            self.config.qa_na_threshold if self.answerable_classifier else None, version_2=self.version_2)
        return predictions

    def score(self, examples, predictions):
        return squad_scores(predictions, examples)

    def write_predictions(self, examples, predictions, folder, split):
        """SQuAD's `predictions.json` (question id → answer text)."""
        path = os.path.join(folder, f"{self.config.task}_{split}_predictions.json")
        squad.write_predictions(predictions, path)
        return path


class MultipleChoiceTask(FinetuningTask):
    """SWAG-format multiple choice, scored by accuracy."""

    default_files = CHOICE_TASKS["swag"]

    def __init__(self, config, tokenizer, files=None, data_dir=None, num_choices=4):
        super().__init__(config, tokenizer, files, data_dir)
        self.num_choices = num_choices

    def load(self, split):
        return multiple_choice.read_swag(self.path(split), self.num_choices)

    def _dataset(self, examples, batch_size, shuffle=False):
        return multiple_choice.choice_dataset(examples, self.tokenizer, self.sequence_length, batch_size,
                                              shuffle=shuffle, seed=self.config.seed)

    def train_dataset(self, examples):
        return self._dataset(examples, self.config.batch_size, shuffle=True), len(examples) // self.config.batch_size

    def build_model(self, init_checkpoint):
        return ElectraForMultipleChoice.from_pretrained(init_checkpoint, num_choices=self.num_choices)

    def losses(self):
        return {"loss": {"logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True)}}

    def predict(self, model, examples):
        dataset = self._dataset(examples, self.config.predict_batch_size).map(lambda x, y: x)
        return model.predict(dataset, verbose=0)["logits"].argmax(-1)

    def score(self, examples, predictions):
        return classification_scores(examples.labels, predictions, ("accuracy",))

    def write_predictions(self, examples, predictions, folder, split):
        path = os.path.join(folder, f"{self.config.task}_{split}.tsv")
        write_text(path, "index\tprediction\n" + "".join(f"{i}\t{p}\n" for i, p in enumerate(predictions)))
        return path


# The data options each task class takes beyond (config, tokenizer, files, data_dir).
_OPTIONS = {"classification": ("tfds", "tfds_data_dir", "text_columns", "label_column", "label_names", "regression"),
            "tagging": ("tag_column",), "qa": (), "choice": ("num_choices",)}


def make_task(config, tokenizer, files=None, data_dir=None, **options):
    """The task named by `config.task`: a GLUE task, `text_classification`, `conll2003`, `chunk`, `squad`,
    `squadv1` or `swag`. `options` may hold any task's data options; each task takes its own."""
    name = config.task
    kinds = {**dict.fromkeys(TAGGING_TASKS, ("tagging", TaggingTask)),
             **dict.fromkeys(QA_TASKS, ("qa", QuestionAnsweringTask)),
             **dict.fromkeys(CHOICE_TASKS, ("choice", MultipleChoiceTask))}
    if name not in kinds and name != TEXT_CLASSIFICATION:
        classification.glue_task(name)  # an error naming the known tasks when it is none of them
    kind, cls = kinds.get(name, ("classification", ClassificationTask))
    return cls(config, tokenizer, files, data_dir, **{k: v for k, v in options.items() if k in _OPTIONS[kind]})


def finetune(task, init_checkpoint, train_examples, callbacks=()):
    """Fine-tunes `task`'s model from `init_checkpoint` on `train_examples`; returns the model.

    Steps: `len(train) // batch_size * epochs` (at least 1); warm-up over
    `warmup_proportion` of them; layer-wise decay as `task.config` says.
    """
    config = task.config
    keras.utils.set_random_seed(config.seed)
    dataset, batches_per_epoch = task.train_dataset(train_examples)
    if batches_per_epoch < 1:
        raise ValueError(f"{len(train_examples)} training examples make no batch of {config.batch_size}")
    steps = max(1, int(batches_per_epoch * config.epochs))
    model = task.build_model(init_checkpoint)
    if task.tokenizer.vocabulary_size() > model.config.vocab_size:
        raise ValueError(f"the tokenizer has {task.tokenizer.vocabulary_size()} tokens but {init_checkpoint} embeds "
                         f"only {model.config.vocab_size}: is its vocab.txt the one the model was trained with?")
    rates = layerwise_lr_multipliers(model, config.layerwise_lr_decay, config.original_top_layer_decay)
    optimizer = create_optimizer(config.learning_rate, steps, int(config.warmup_proportion * steps),
                                 weight_decay=config.weight_decay_rate, epsilon=config.adam_epsilon,
                                 lr_multipliers=rates)
    task.compile(model, optimizer)
    logging.info("fine-tuning %s: %d steps of %d examples", config.task, steps, config.batch_size)
    history = model.fit(dataset.repeat(), steps_per_epoch=steps, epochs=1, verbose=0, callbacks=list(callbacks))
    loss = history.history["loss"][-1]
    if not np.isfinite(loss):
        raise FloatingPointError(f"fine-tuning {config.task}: the training loss is {loss}")
    return model


def write_json(path, values):
    """Writes `values` as indented JSON, atomically."""
    write_text(path, json.dumps(values, indent=2, sort_keys=True) + "\n")
