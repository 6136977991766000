"""Token tagging: CoNLL-2003 NER (`conll2003`) and CoNLL-2000 chunking (`chunk`), trained on BIOES tags (the
original's), each word labelled at its first sub-token, scored by entity-level F1 as `conlleval`; predictions are
written in the tag scheme of the file predicted. Readers, tag schemes and word units: `electra_tf.data.tasks.tagging`.

Example:
>>> TaggingTask.default_files["dev"], ChunkingTask.default_files["dev"], ChunkingTask.default_max_seq_length
('dev.txt', 'test.txt', 256)
"""

import dataclasses
import os

import keras
import numpy as np

from electra_tf.util.atomic import write_text
from electra_tf.data import batching
from electra_tf.data.tasks import tagging
from electra_tf.finetuning.task import FinetuningTask
from electra_tf.finetuning.metrics import entity_f1
from electra_tf.models.token_classification import ElectraTokenClassifier


class TagPredictions(list):
    """Per sentence, its predicted tags (a list), with `probabilities` beside them."""

    def __init__(self, tags, probabilities):
        super().__init__(tags)
        self.probabilities = probabilities


@dataclasses.dataclass(frozen=True)
class TaggingOptions:
    """tag_column: the tag's column: a CoNLL file's by number (-1: the last, CoNLL-2003's NER and CoNLL-2000's chunk
        tag), a 🤗 dataset's by name (-1: the task's, `ner_tags` or `chunk_tags`).
    scheme: the tag scheme trained on ("bioes", "iob2", or "none" for plain tags such as POS)."""

    tag_column: int | str = -1
    scheme: str = "bioes"


class TaggingTask(FinetuningTask):
    """CoNLL-format tagging (CoNLL-2003 NER by default); its options: `TaggingOptions`."""

    Options = TaggingOptions
    model_class = ElectraTokenClassifier
    # Unset epochs train at least this many steps: the paper's 3 epochs of a small training set tag all O.
    min_train_steps = 200
    default_files = {"train": "train.txt", "dev": "dev.txt", "test": "test.txt"}
    dataset_tags = "ner_tags"  # the tag column of a 🤗 dataset (conll2003's), unless --tag_column names one

    def __init__(self, config, tokenizer, files=None, data_dir=None, options=None):
        super().__init__(config, tokenizer, files, data_dir, options)
        self.tag_column, self.scheme, self._label_names = self.options.tag_column, self.options.scheme, None
        self._train_scheme = None  # the training file's tag scheme (`tagging.detect_scheme`)
        self._word_unit = None  # how the training file's words are formed (`tagging.word_unit`)

    @property
    def label_names(self):
        """The training file's labels, whichever split is read first."""
        if self._label_names is None:
            self.load("train")
        return self._label_names

    def load(self, split):
        sentences = tagging.read_sentences(self.path(split), self.tag_column, self.dataset_tags)
        if split == "train" and self._label_names is None:
            self._label_names = tagging.label_names(sentences, self.scheme)
            self._train_scheme = tagging.detect_scheme(s.tags for s in sentences)
            self._word_unit = tagging.word_unit(sentences)
        return sentences

    def serving_options(self):
        """`word_unit`: how the training file's words are formed, so that the export and the pipeline cut raw text
        into such words."""
        if self._word_unit is None:
            self.load("train")
        return {"word_unit": self._word_unit}

    def file_scheme(self, sentences):
        """The tag scheme predictions of `sentences` are written in: their file's, else (a file of "O" tags only)
        the training file's, else IOB2; "none" (tags as trained) for plain tags such as POS."""
        if self.scheme == "none":
            return "none"
        if self._label_names is None:
            self.load("train")  # its scheme is the fallback
        return tagging.detect_scheme(s.tags for s in sentences) or self._train_scheme or "iob2"

    def texts(self, sentences):
        return [" ".join(sentence.words) for sentence in sentences]

    def data_stats(self, split, sentences):
        """`<split>_sentences`, `_words`, the words and sentences cut by truncation (`tagging.word_stats`), and
        `<split>_tag_scheme`, the file's (that of its predictions)."""
        positions, _ = tagging.first_token_positions_and_lengths(sentences, self.tokenizer, self.sequence_length)
        stats = {f"{split}_{name}": value for name, value in tagging.word_stats(positions).items()}
        return {**stats, f"{split}_tag_scheme": self.file_scheme(sentences)}

    def _dataset(self, sentences, training):
        dataset, stats = tagging.tagging_dataset(
            sentences, self.tokenizer, self.label_names, self.sequence_length,
            self.config.batch_size if training else self.config.predict_batch_size, shuffle=training,
            seed=self.config.seed, scheme=self.scheme,
            pad_to_max_length=self.config.pad_to_max_length)
        return dataset, stats

    def train_dataset(self, sentences):
        return self._dataset(sentences, training=True)[0], len(sentences) // self.config.batch_size

    def model_arguments(self):
        return {"num_labels": len(self.label_names), "head": self.config.head}

    def losses(self):
        return {"loss": {"logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True)}}

    def _prediction_inputs(self, sentences):
        """`(order, batches, first_token_positions)`: the model inputs of `sentences` in length order."""
        order = self.length_order(tagging.first_token_positions_and_lengths(
            sentences, self.tokenizer, self.sequence_length)[1])
        dataset, stats = self._dataset([sentences[i] for i in order], training=False)
        return order, [inputs for inputs, _, _ in dataset], stats["first_token_positions"]

    def predict(self, model, sentences):
        """The tags of each sentence, one per word, with `.probabilities`: each tag's probability (0.0 for
        words cut by truncation, tagged O)."""
        order, batches, positions = self._prepared(sentences, self._prediction_inputs)
        tags, probabilities = [], []
        for inputs in batches:  # batches of their own lengths: decoded one by one
            logits = model.predict_on_batch(inputs)["logits"]
            rows = positions[len(tags):len(tags) + len(logits)]
            tags += tagging.decode_tags(logits, rows, self.label_names)
            best = keras.ops.convert_to_numpy(keras.ops.max(keras.ops.softmax(logits, axis=-1), axis=-1))
            probabilities += [np.where(row >= 0, scores[np.maximum(row, 0)], 0.0) for row, scores in zip(rows, best)]
        return TagPredictions(batching.restore_order(tags, order), batching.restore_order(probabilities, order))

    def main_metric(self, scores):
        return "f1"

    def labelled(self, sentences):
        """Whether any tag is not "O" (a column of "O" only is a placeholder)."""
        return any(tag != "O" for sentence in sentences for tag in sentence.tags)

    def score(self, sentences, predictions):
        return entity_f1([list(s.tags) for s in sentences], predictions)

    def write_predictions(self, sentences, predictions, folder, split):
        """CoNLL format: `word<TAB>predicted tag<TAB>its probability`, a blank line after each sentence; the tags
        in the file's scheme (`file_scheme`), whichever the model was trained in."""
        path = os.path.join(folder, f"{self.name}_{split}.txt")
        scheme = self.file_scheme(sentences)
        write_text(path, "".join(
            "".join(f"{w}\t{t}\t{p:.4f}\n"
                    for w, t, p in zip(s.words, tagging.convert_tags(tags, scheme), probabilities)) + "\n"
            for s, tags, probabilities in zip(sentences, predictions, predictions.probabilities)))
        return path


class ChunkingTask(TaggingTask):
    """CoNLL-2000 chunking: no dev file (the test file is scored), sentences up to 256 tokens."""

    default_files = {"train": "train.txt", "dev": "test.txt", "test": "test.txt"}
    default_max_seq_length = 256
    dataset_tags = "chunk_tags"  # conll2000's
