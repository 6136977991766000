"""The pre-trainer's metrics: the loss, the generator's MLM loss and accuracy, and what the objective reports
(`REPORTS`: `"rtd"`, replaced token detection; `"main_mlm"`, the masked LM kept on the discriminator). Keras's
trackers average over replicas, so a replica's share of a global loss is tracked times the number of replicas.

Example:
>>> [metric.name for metric in StepMetrics(("rtd",), has_generator=True).metrics][:4]
['loss', 'mlm_loss', 'mlm_accuracy', 'sampled_mlm_accuracy']
"""

import keras
import tensorflow as tf

from electra_tf.pretraining.replicas import num_replicas


def rtd_trackers():
    """The generator samples' accuracy, the RTD loss and its scores."""
    return [keras.metrics.Accuracy(name="sampled_mlm_accuracy"), keras.metrics.Mean(name="rtd_loss"),
            keras.metrics.BinaryAccuracy(name="rtd_accuracy"), keras.metrics.Precision(name="rtd_precision"),
            keras.metrics.Recall(name="rtd_recall"), keras.metrics.AUC(name="rtd_auc")]


def update_rtd_trackers(trackers, outputs, losses, scored, replicas):
    """Updates `rtd_trackers()`; `scored`: `(labels, weights, logits)`."""
    sampled_accuracy, loss, *scores = trackers
    masked = outputs.masked
    sampled_accuracy.update_state(masked.labels, outputs.sampled, sample_weight=masked.weights)
    loss.update_state(losses["rtd_loss"] * replicas)
    labels, weights, logits = scored
    probabilities = tf.sigmoid(logits)
    for metric in scores:
        metric.update_state(labels, probabilities, sample_weight=weights)


def every_token_rtd(outputs):
    """RTD scored on every real token, `(labels, weights, logits)`."""
    return outputs.rtd_labels, outputs.real_tokens, outputs.rtd_logits


def kept_mlm_trackers():
    """The kept masked LM's loss and accuracy."""
    return [keras.metrics.Mean(name="main_mlm_loss"), keras.metrics.Accuracy(name="main_mlm_accuracy")]


def update_kept_mlm_trackers(trackers, outputs, losses, scored, replicas):
    """Updates `kept_mlm_trackers()`; `scored`: `(labels, predictions, weights)`."""
    loss, accuracy = trackers
    loss.update_state(losses["main_mlm_loss"] * replicas)
    accuracy.update_state(*scored)


REPORTS = {"rtd": (rtd_trackers, update_rtd_trackers), "main_mlm": (kept_mlm_trackers, update_kept_mlm_trackers)}


class StepMetrics:
    """The trackers of a pre-trainer whose objective `reports` these (a generator network too if `has_generator`)."""

    def __init__(self, reports, has_generator):
        self.loss = keras.metrics.Mean(name="loss")
        self.mlm_loss = keras.metrics.Mean(name="mlm_loss")
        self.mlm_accuracy = keras.metrics.SparseCategoricalAccuracy(name="mlm_accuracy")
        generator_metrics = [self.mlm_loss, self.mlm_accuracy] if has_generator else []
        self.reported = {report: REPORTS[report][0]() for report in reports}
        self.metrics = [self.loss, *generator_metrics, *(m for trackers in self.reported.values() for m in trackers)]

    def update(self, outputs, losses, scored):
        """Updates every tracker from one step; returns the logs."""
        replicas = tf.cast(num_replicas(), tf.float32)
        self.loss.update_state(losses["loss"] * replicas)
        masked = outputs.masked
        if outputs.mlm_logits is not None:
            self.mlm_loss.update_state(losses["mlm_loss"] * replicas)
            self.mlm_accuracy.update_state(masked.labels, outputs.mlm_logits, sample_weight=masked.weights)
        if outputs.discriminated:
            for report, trackers in self.reported.items():
                REPORTS[report][1](trackers, outputs, losses, scored[report], replicas)
        logs = {metric.name: metric.result() for metric in self.metrics}
        if isinstance(tf.distribute.get_strategy(), tf.distribute.MultiWorkerMirroredStrategy):
            # Keras (3.15) reduces logs across workers with `reduce("MEAN", v, axis=0)`, which needs a batch
            # axis: give each value one.
            logs = {name: tf.reshape(value, [1]) for name, value in logs.items()}
        return logs
