"""The pre-trainer's metrics: the loss, the generator's MLM loss and accuracy, and what the objective reports.

Each replica holds its share of a global loss, and Keras's `Mean` trackers average over replicas, so a share
is tracked times the number of replicas: the global value.

Example:
>>> from electra_tf.pretraining.objective import ReplacedTokenDetection
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
        if "mlm_loss" in losses:
            self.mlm_loss.update_state(losses["mlm_loss"] * replicas)
            self.mlm_accuracy.update_state(masked.labels, outputs.mlm_logits, sample_weight=masked.weights)
        self.objective.update_metrics(outputs, losses, replicas)
        logs = {metric.name: metric.result() for metric in self.metrics}
        if isinstance(tf.distribute.get_strategy(), tf.distribute.MultiWorkerMirroredStrategy):
            # Keras (3.15) reduces logs across workers with `reduce("MEAN", v, axis=0)`, which needs a batch
            # axis: give each value one.
            logs = {name: tf.reshape(value, [1]) for name, value in logs.items()}
        return logs
