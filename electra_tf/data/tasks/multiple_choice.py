"""Multiple-choice data (SWAG and files shaped like it): a context, N endings, the index of the right one; each
choice is the pair `[CLS] sent1 [SEP] sent2 ending_i [SEP]`, as Hugging Face's `run_swag`.

Example:
>>> examples = ChoiceExamples(contexts=("She opens the door.",), choices=(("She walks in.", "It rains."),),
...                           labels=np.array([0]))
>>> examples.num_choices
2
"""

import dataclasses

import numpy as np
import tensorflow as tf

from electra_tf.data import batching
from electra_tf.data.tasks.classification import UNLABELLED, is_blank, read_rows, require_columns


@dataclasses.dataclass(frozen=True)
class ChoiceExamples:
    contexts: tuple
    choices: tuple  # one tuple of num_choices strings per example
    labels: np.ndarray  # the right choice's index; -1 when unlabelled

    def __post_init__(self):
        if not self.contexts:
            raise ValueError("no examples")
        counts = {len(c) for c in self.choices}
        if len(counts) != 1 or len({len(self.choices), len(self.contexts), len(self.labels)}) != 1:
            raise ValueError("every example needs a context, a label and the same number of choices")
        bad = [i for i, label in enumerate(self.labels) if not UNLABELLED <= label < self.num_choices]
        if bad:
            raise ValueError(f"examples {bad[:10]}: label outside 0..{self.num_choices - 1}")

    @property
    def num_choices(self):
        return len(self.choices[0])

    def __len__(self):
        return len(self.contexts)

    def subset(self, indices):
        """The examples at `indices`, in that order."""
        return ChoiceExamples(tuple(self.contexts[i] for i in indices), tuple(self.choices[i] for i in indices),
                              self.labels[indices])


def read_swag(path, num_choices=4):
    """SWAG-format examples from a CSV/TSV/JSONL file (columns `sent1`, `sent2`, `ending0`…, optional `label`)."""
    rows = read_rows(path)
    if not rows:
        raise ValueError(f"{path}: no examples")
    endings = [f"ending{i}" for i in range(num_choices)]
    require_columns(rows, ["sent1", "sent2", *endings], path)
    contexts, choices, labels = [], [], []
    for row, line in zip(rows, rows.line_numbers):
        if is_blank(str(row["sent1"])):
            raise ValueError(f"{path}:{line}: 'sent1' is empty")
        contexts.append(str(row["sent1"]))
        choices.append(tuple(f"{row['sent2']} {row[e]}".strip() for e in endings))
        label = row.get("label", "")
        try:
            labels.append(int(label) if str(label).strip() != "" else UNLABELLED)
        except ValueError:
            raise ValueError(f"{path}:{line}: label {label!r} is not a choice index") from None
    return ChoiceExamples(tuple(contexts), tuple(choices), np.asarray(labels, np.int32))


def packed_lengths(examples, tokenizer, sequence_length):
    """Each example's longest choice packed as `[CLS] context [SEP] choice [SEP]`, at most `sequence_length`."""
    contexts = tokenizer(tf.constant(examples.contexts)).row_lengths().numpy()
    choices = tokenizer(tf.constant([c for row in examples.choices for c in row])).row_lengths().numpy()
    longest = choices.reshape(len(examples), examples.num_choices).max(axis=1)
    return np.minimum(contexts + longest + 3, sequence_length)


def choice_dataset(examples, tokenizer, sequence_length=128, batch_size=16, shuffle=False, seed=0,
                   pad_to_max_length=True):
    """`(inputs, labels)` batches with inputs `[batch, choices, sequence]`, tokenized in-graph; with
    `pad_to_max_length=False` length-aware (`electra_tf.data.batching`; training batches endless); shuffled
    training drops the last partial batch (`batching.batch_examples`)."""
    n = examples.num_choices
    contexts = np.repeat(np.asarray(examples.contexts, object)[:, None], n, axis=1)
    dataset = tf.data.Dataset.from_tensor_slices(((contexts, np.asarray(examples.choices, object)), examples.labels))
    keys = None if pad_to_max_length else batching.bucket_keys(packed_lengths(examples, tokenizer, sequence_length))
    dataset = batching.batch_examples(dataset, batch_size, shuffle, seed, keys)
    encode_pairs = tokenizer.encode_function(sequence_length, True, pad_to_max_length)

    def encode(texts, labels):
        flat = encode_pairs(tf.reshape(texts[0], [-1]), tf.reshape(texts[1], [-1]))
        return {k: tf.reshape(v, [-1, n, tf.shape(v)[-1]]) for k, v in flat.items()}, labels

    return dataset.map(encode, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)
