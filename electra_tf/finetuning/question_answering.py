"""Extractive question answering: SQuAD 2.0 (`squad`) and 1.1 (`squadv1`) as the original ELECTRA's `finetune/qa`
(doc-stride windows, n-best spans, the null-score threshold: `electra_tf.data.tasks.squad`), scored by SQuAD's
script or (`qa_metric="cmrc"`/`"drcd"`) CMRC 2018's.

Example:
>>> loss, weights = question_answering_losses()
>>> sorted(loss), weights["answerable_logits"]
(['answerable_logits', 'end_logits', 'start_logits'], 0.5)
"""

import dataclasses
import os

import keras
import numpy as np
import tensorflow as tf

from electra_tf.util.atomic import write_json
from electra_tf.data import batching
from electra_tf.data.tasks import squad
from electra_tf.finetuning.task import FinetuningTask
from electra_tf.finetuning.metrics import QA_METRICS, QA_SCORERS, chinese_share
from electra_tf.models.question_answering import ElectraQuestionAnswerer


@keras.saving.register_keras_serializable(package="electra_tf")
class FirstCandidateLoss(keras.losses.Loss):
    """Cross-entropy of the joint head's end logits given the gold start (their first row; `[B, L]` as they are)."""

    def call(self, y_true, y_pred):
        logits = y_pred[:, 0] if len(y_pred.shape) == 3 else y_pred
        return keras.losses.sparse_categorical_crossentropy(y_true, logits, from_logits=True)


def question_answering_losses(answerable_weight=0.5, answerable_classifier=True):
    """`(loss, loss_weights)` for `compile`: (start CE + end CE) / 2 [+ weight · answerable sigmoid CE]."""
    loss = {"start_logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            "end_logits": FirstCandidateLoss()}
    weights = {"start_logits": 0.5, "end_logits": 0.5}
    if answerable_classifier:
        loss["answerable_logits"] = keras.losses.BinaryCrossentropy(from_logits=True)
        weights["answerable_logits"] = answerable_weight
    return loss, weights


def padded_outputs(batches, length):
    """The outputs of batches cut to their longest window, padded back to `length` positions (logits -10,000,
    missing start candidates of a narrower beam at the last position): `{name: [each batch's array]}`."""
    beam = max((np.shape(batch["end_logits"])[1] for batch in batches if np.ndim(batch["end_logits"]) == 3),
               default=0)
    padded = {name: [] for name in batches[0]}
    for batch in batches:
        for name, values in batch.items():
            values = np.asarray(values)
            if name == "start_candidates":
                values = np.pad(values, [(0, 0), (0, beam - values.shape[1])], constant_values=length - 1)
            elif values.ndim >= 2:
                widths = [(0, 0)] * values.ndim
                widths[-1] = (0, length - values.shape[-1])
                if values.ndim == 3:
                    widths[1] = (0, beam - values.shape[1])
                values = np.pad(values, widths, constant_values=-1e4)
            padded[name].append(values)
    return padded


@dataclasses.dataclass(frozen=True)
class QuestionAnsweringOptions:
    """qa_metric: "squad" (SQuAD's exact match and bag-of-words F1), "cmrc" or "drcd" (CMRC 2018 / DRCD's script:
    F1 over the longest common substring of characters and words, `electra_tf.finetuning.metrics.cmrc_scores`)."""

    qa_metric: str = "squad"


class AnswerPredictions(dict):
    """Question id → answer text, with the n-best answers (`nbest`) and null odds (`null_odds`) beside them."""

    def __init__(self, answers, nbest, null_odds):
        super().__init__(answers)
        self.nbest, self.null_odds = nbest, null_odds


class QuestionAnsweringTask(FinetuningTask):
    """SQuAD 2.0: doc-stride windows, n-best spans, unanswerable questions."""

    Options = QuestionAnsweringOptions
    model_class = ElectraQuestionAnswerer
    default_files = {"train": "train-v2.0.json", "dev": "dev-v2.0.json"}
    default_epochs = 2.0
    default_max_seq_length = 512
    version_2 = True

    def __init__(self, config, tokenizer, files=None, data_dir=None, options=None):
        super().__init__(config, tokenizer, files, data_dir, options)
        if self.options.qa_metric not in QA_METRICS:
            raise ValueError(f"qa_metric must be one of {QA_METRICS}, got {self.options.qa_metric!r}")

    def load(self, split):
        return squad.read_squad(self.path(split), on_bad_answer="skip" if split == "train" else "error")

    def texts(self, examples):
        contexts = dict.fromkeys(example.context for example in examples)  # a paragraph's questions share it
        return [example.question for example in examples] + list(contexts)

    def data_stats(self, split, examples):
        """`<split>_truncated_questions` (cut to `max_query_length`), and `<split>_skipped_questions` (a training
        answer not where it says) when there are any."""
        lengths = self.tokenizer(tf.constant([example.question for example in examples])).row_lengths().numpy()
        stats = {f"{split}_truncated_questions": int(np.sum(lengths > self.config.max_query_length))}
        if examples.skipped_ids:
            stats[f"{split}_skipped_questions"] = len(examples.skipped_ids)
        return stats

    def _features(self, examples, training):
        c = self.config
        return squad.squad_features(examples, self.tokenizer, self.sequence_length, c.doc_stride,
                                    c.max_query_length, training=training)

    @property
    def answerable_classifier(self):
        return self.version_2 and self.config.answerable_classifier and self.config.head == "original"

    def train_dataset(self, examples):
        features = self._features(examples, training=True)
        dataset = squad.squad_dataset(features, self.config.batch_size, training=True, shuffle=True,
                                      seed=self.config.seed, pad_to_max_length=self.config.pad_to_max_length)
        keep_start = self.config.head == "original"  # the joint head conditions its end logits on it

        def to_outputs(x, y):
            inputs = {k: v for k, v in x.items() if keep_start or k != "start_positions"}
            labels = {"start_logits": y["start_positions"], "end_logits": y["end_positions"]}
            if self.answerable_classifier:
                labels["answerable_logits"] = y["is_impossible"]
            return inputs, labels

        return dataset.map(to_outputs), len(features) // self.config.batch_size

    def model_arguments(self):
        return {"head": self.config.head, "beam_size": self.config.beam_size,
                "answerable_classifier": self.answerable_classifier}

    def serving_options(self):
        return {"max_query_length": self.config.max_query_length, "max_answer_length": self.config.max_answer_length,
                "version_2": self.version_2,
                "null_threshold": self.config.qa_na_threshold if self.answerable_classifier else None}

    def losses(self):
        loss, weights = question_answering_losses(self.config.answerable_weight, self.answerable_classifier)
        return {"loss": loss, "loss_weights": weights}

    def _prediction_inputs(self, examples):
        """`(features, order, batches)`: the windows of `examples`, and their model inputs in length order."""
        features = self._features(examples, training=False)
        order = self.length_order(features.attention_mask.sum(axis=1))
        dataset = squad.squad_dataset(features.subset(order), self.config.predict_batch_size, training=False,
                                      pad_to_max_length=self.config.pad_to_max_length)
        return features, order, list(dataset)

    def predict(self, model, examples):
        features, order, inputs = self._prepared(examples, self._prediction_inputs)
        batches = [model.predict_on_batch(batch) for batch in inputs]  # each cut to its longest window
        outputs = {name: batching.restore_order(np.concatenate(values), order)
                   for name, values in padded_outputs(batches, features.input_ids.shape[1]).items()}
        predictions, nbest, null_odds = squad.postprocess(
            examples, features, outputs, self.config.n_best_size, self.config.max_answer_length,
            self.config.qa_na_threshold if self.answerable_classifier else None, version_2=self.version_2)
        return AnswerPredictions(predictions, nbest, null_odds)

    def main_metric(self, scores):
        return "f1"

    def labelled(self, examples):
        """Whether any question has an answer or is marked unanswerable (a file without either is unlabelled)."""
        return any(example.answers or example.is_impossible for example in examples)

    def score(self, examples, predictions):
        return QA_SCORERS[self.options.qa_metric](predictions, examples)

    def advice(self, split, examples):
        """A hint when the dev questions are mostly Chinese and scored as SQuAD (whose F1 splits at spaces)."""
        texts = [example.question for example in examples] + [text for e in examples for text, _ in e.answers]
        if split == "dev" and self.options.qa_metric == "squad" and chinese_share(texts) > 0.5:
            return ("note: the dev questions and answers are mostly Chinese; SQuAD's F1 splits answers at spaces "
                    "only: --qa_metric=cmrc (or drcd) scores them as CMRC 2018 / DRCD's official script does")
        return None

    def write_predictions(self, examples, predictions, folder, split):
        """SQuAD's `predictions.json` (question id → answer text), and beside it, as the original writes them,
        `..._nbest.json` (each question's best answers with probabilities and scores) and `..._null_odds.json`."""
        path = os.path.join(folder, f"{self.name}_{split}_predictions.json")
        squad.write_predictions(dict(predictions), path)
        write_json(os.path.join(folder, f"{self.name}_{split}_nbest.json"), predictions.nbest)
        write_json(os.path.join(folder, f"{self.name}_{split}_null_odds.json"), predictions.null_odds)
        return path


class SquadV1Task(QuestionAnsweringTask):
    """SQuAD 1.1: every question has an answer."""

    default_files = {"train": "train-v1.1.json", "dev": "dev-v1.1.json"}
    version_2 = False
