"""What a pre-training objective owns: its extra heads, its losses, its metrics and its FLOPs.

The pre-trainer runs mask → generate → corrupt → discriminate and asks its objective the rest: whether it
discriminates at all, which heads it adds on the discriminator's encoder, which losses it computes from the
step's outputs and how they enter the loss minimised, which metrics it reports and what its main network
costs. `ReplacedTokenDetection` is the paper's objective (`electra`); each variant subclasses it in a module of
its own, and `registry.OBJECTIVES` names them.

Example:
>>> from electra_tf.config import ElectraConfig, PretrainingConfig
>>> objective = ReplacedTokenDetection()
>>> objective.discriminates, objective.trains_rtd, [m.name for m in objective.make_metrics()][:2]
(True, True, ['sampled_mlm_accuracy', 'rtd_loss'])
>>> round(objective.main_forward_flops(ElectraConfig(), PretrainingConfig()) / 1e6)
21
"""

import keras
import tensorflow as tf

from electra_tf.models.discriminator import ElectraDiscriminator
from electra_tf.pretraining import objectives
from electra_tf.training.flops import encoder_forward_flops, rtd_head_flops


def mlm_loss(masked, logits, denominators):
    """A masked LM's cross-entropy summed over this replica's masked slots, over the global count."""
    per_slot = keras.losses.sparse_categorical_crossentropy(masked.labels, logits, from_logits=True)
    return tf.reduce_sum(per_slot * masked.weights) / (denominators["predictions"] + objectives.EPSILON)


def rtd_loss(outputs, denominators):
    """The discriminator's sigmoid cross-entropy summed over this replica's real tokens, over the global count."""
    return tf.reduce_sum(objectives.rtd_per_token(outputs) * outputs.real_tokens) / (
        denominators["tokens"] + objectives.EPSILON)


class ReplacedTokenDetection:
    """Replaced token detection over every real token (objective `electra`, Clark et al., 2020)."""

    discriminates = True  # runs corrupt → discriminate
    trains_rtd = True  # the discriminator's RTD head is trained and scored

    def networks(self, config, source):
        """`(discriminator, generator)`: the generator source's (a subclass may build its own)."""
        return source.networks(config, ElectraDiscriminator)

    def heads(self, discriminator, config):
        """`{attribute: layer}` the objective adds and keeps (the pre-trainer holds them under these names,
        which its checkpoints use)."""
        return {}

    def untrained_variables(self, discriminator):
        """Variables of the networks this objective leaves as they are."""
        return []

    def discriminated_outputs(self, discriminated, outputs):
        """What the objective reads off the discriminator's outputs besides its RTD logits."""
        return {}

    def losses(self, outputs, denominators):
        """This replica's shares of the objective's global losses (`{}` when the step did not discriminate)."""
        if not outputs.discriminated or not self.trains_rtd:
            return {}
        return {"rtd_loss": self.rtd_loss(outputs, denominators)}

    rtd_loss = staticmethod(rtd_loss)

    def main_loss(self, losses, pretraining_config):
        """The objective's part of the loss minimised: `disc_weight ×` RTD (0 when there is none)."""
        return pretraining_config.disc_weight * losses["rtd_loss"] if "rtd_loss" in losses else 0.0

    def make_metrics(self):
        """The objective's trackers, made once by the pre-trainer."""
        self.sampled_mlm_accuracy = keras.metrics.Accuracy(name="sampled_mlm_accuracy")
        self.rtd_loss_tracker = keras.metrics.Mean(name="rtd_loss")
        self.rtd_scores = [keras.metrics.BinaryAccuracy(name="rtd_accuracy"),
                           keras.metrics.Precision(name="rtd_precision"), keras.metrics.Recall(name="rtd_recall"),
                           keras.metrics.AUC(name="rtd_auc")]
        return [self.sampled_mlm_accuracy, self.rtd_loss_tracker, *self.rtd_scores]

    def update_metrics(self, outputs, losses, replicas):
        """Updates the trackers; `replicas` turns each replica's share of a loss into the global value."""
        if "rtd_loss" not in losses:
            return
        masked = outputs.masked
        self.sampled_mlm_accuracy.update_state(masked.labels, outputs.sampled, sample_weight=masked.weights)
        self.rtd_loss_tracker.update_state(losses["rtd_loss"] * replicas)
        labels, real, logits = self.scored_tokens(outputs)
        probabilities = tf.sigmoid(logits)
        for metric in self.rtd_scores:
            metric.update_state(labels, probabilities, sample_weight=real)

    @staticmethod
    def scored_tokens(outputs):
        """`(labels, weights, logits)` of the tokens RTD is scored on: every real token."""
        return outputs.rtd_labels, outputs.real_tokens, outputs.rtd_logits

    def main_forward_flops(self, config, pretraining_config):
        """Forward FLOPs per input token of the trained network (discriminator encoder and heads)."""
        return encoder_forward_flops(config, pretraining_config.max_seq_length) + rtd_head_flops(config)
