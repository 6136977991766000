"""Multiple choice: SWAG (`swag`) and files shaped like it, scored by accuracy.

Readers: `electra_tf.data.tasks.multiple_choice`. Head: `ElectraChoiceClassifier`.

Example:
>>> MultipleChoiceTask.default_files["dev"], MultipleChoiceTask.model_class.serving_task
('val.csv', 'multiple_choice')
"""

import dataclasses

import keras
import numpy as np

from electra_tf.data import batching
from electra_tf.data.tasks import multiple_choice
from electra_tf.data.tasks.classification import UNLABELLED
from electra_tf.finetuning.task import FinetuningTask
from electra_tf.finetuning.metrics import classification_scores
from electra_tf.models.multiple_choice import ElectraChoiceClassifier


@dataclasses.dataclass(frozen=True)
class MultipleChoiceOptions:
    """num_choices: endings per example (`ending0` … in the files)."""

    num_choices: int = 4


class MultipleChoiceTask(FinetuningTask):
    """SWAG-format multiple choice; its options: `MultipleChoiceOptions`."""

    Options = MultipleChoiceOptions
    model_class = ElectraChoiceClassifier
    default_files = {"train": "train.csv", "dev": "val.csv", "test": "test.csv"}

    def __init__(self, config, tokenizer, files=None, data_dir=None, options=None):
        super().__init__(config, tokenizer, files, data_dir, options)
        self.num_choices = self.options.num_choices

    def load(self, split):
        return multiple_choice.read_swag(self.path(split), self.num_choices)

    def texts(self, examples):
        return [*examples.contexts, *(choice for choices in examples.choices for choice in choices)]

    def _dataset(self, examples, batch_size, shuffle=False):
        return multiple_choice.choice_dataset(examples, self.tokenizer, self.sequence_length, batch_size,
                                              shuffle=shuffle, seed=self.config.seed,
                                              pad_to_max_length=self.config.pad_to_max_length)

    def train_dataset(self, examples):
        return self._dataset(examples, self.config.batch_size, shuffle=True), len(examples) // self.config.batch_size

    def model_arguments(self):
        return {"num_choices": self.num_choices}

    def losses(self):
        return {"loss": {"logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True)}}

    def predict(self, model, examples):
        """The probability of each choice, `[N, choices]`."""
        order = self.length_order(multiple_choice.packed_lengths(examples, self.tokenizer, self.sequence_length))
        dataset = self._dataset(examples.subset(order), self.config.predict_batch_size).map(lambda x, y: x)
        logits = batching.restore_order(model.predict(dataset, verbose=0)["logits"], order)
        return keras.ops.convert_to_numpy(keras.ops.softmax(logits, axis=-1))

    def labelled(self, examples):
        return bool(np.all(examples.labels != UNLABELLED))

    def class_labels(self, examples):
        return examples.labels

    def predicted_classes(self, predictions):
        return predictions.argmax(-1)

    def score(self, examples, predictions):
        return classification_scores(examples.labels, predictions.argmax(-1), ("accuracy",))

    def write_predictions(self, examples, predictions, folder, split):
        """A TSV of `index<TAB>prediction<TAB>probability` (the chosen ending's index and probability)."""
        return self.write_tsv(folder, f"{self.name}_{split}", range(len(predictions)), predictions.argmax(-1),
                              [f"{p:.4f}" for p in predictions.max(-1)])
