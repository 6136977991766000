"""The pre-trainer's metrics: the loss, the generator's MLM loss and accuracy, and what the objective reports
(RTD's trackers are made and updated by the plain functions here; the kept masked LM's, `kept_mlm.py`).

Each replica holds its share of a global loss, and Keras's `Mean` trackers average over replicas, so a share
is tracked times the number of replicas: the global value.

Example:
>>> from electra_tf.pretraining.electra import ReplacedTokenDetection
>>> [metric.name for metric in StepMetrics(ReplacedTokenDetection(), has_generator=True).metrics][:4]
['loss', 'mlm_loss', 'mlm_accuracy', 'sampled_mlm_accuracy']
"""

import keras
import tensorflow as tf

from electra_tf.pretraining.replicas import num_replicas


class StepMetrics:
    """The trackers of a pre-trainer with `objective` (and a generator network if `has_generator`)."""

    def __init__(self, objective, has_generator):
        self.objective = objective
        self.loss = keras.metrics.Mean(name="loss")
        self.mlm_loss = keras.metrics.Mean(name="mlm_loss")
        self.mlm_accuracy = keras.metrics.SparseCategoricalAccuracy(name="mlm_accuracy")
        generator_metrics = [self.mlm_loss, self.mlm_accuracy] if has_generator else []
        self.metrics = [self.loss, *generator_metrics, *objective.make_metrics()]

    def update(self, outputs, losses):
        """Updates every tracker from one step's outputs and losses; the logs `{name: value}`."""
        replicas = tf.cast(num_replicas(), tf.float32)
        self.loss.update_state(losses["loss"] * replicas)
        masked = outputs.masked
        if outputs.mlm_logits is not None:
            self.mlm_loss.update_state(losses["mlm_loss"] * replicas)
            self.mlm_accuracy.update_state(masked.labels, outputs.mlm_logits, sample_weight=masked.weights)
        if outputs.discriminated:
            self.objective.update_metrics(outputs, losses, replicas)
        logs = {metric.name: metric.result() for metric in self.metrics}
        if isinstance(tf.distribute.get_strategy(), tf.distribute.MultiWorkerMirroredStrategy):
            # Keras (3.15) reduces logs across workers with `reduce("MEAN", v, axis=0)`, which needs a batch
            # axis: give each value one.
            logs = {name: tf.reshape(value, [1]) for name, value in logs.items()}
        return logs


def rtd_trackers():
    """The trackers of replaced token detection: the generator samples' accuracy, the RTD loss and its scores."""
    return [keras.metrics.Accuracy(name="sampled_mlm_accuracy"), keras.metrics.Mean(name="rtd_loss"),
            keras.metrics.BinaryAccuracy(name="rtd_accuracy"), keras.metrics.Precision(name="rtd_precision"),
            keras.metrics.Recall(name="rtd_recall"), keras.metrics.AUC(name="rtd_auc")]


def update_rtd_trackers(trackers, outputs, rtd_loss, scored, replicas):
    """Updates `rtd_trackers()` with one step's outputs, its RTD loss share and the tokens RTD is `scored` on,
    `(labels, weights, logits)`."""
    sampled_accuracy, loss, *scores = trackers
    masked = outputs.masked
    sampled_accuracy.update_state(masked.labels, outputs.sampled, sample_weight=masked.weights)
    loss.update_state(rtd_loss * replicas)
    labels, weights, logits = scored
    probabilities = tf.sigmoid(logits)
    for metric in scores:
        metric.update_state(labels, probabilities, sample_weight=weights)

