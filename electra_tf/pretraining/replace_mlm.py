"""Replace MLM (Clark et al., 2020, §3.5): a masked LM kept on the discriminator's encoder, predicting the
masked positions from the generator's replacements; the RTD head is neither trained nor scored.

Example:
>>> ReplaceMLM().trains_rtd
False
"""

import keras
import tensorflow as tf

from electra_tf.layers.heads import masked_lm_head
from electra_tf.pretraining.objective import ReplacedTokenDetection, mlm_loss
from electra_tf.training.flops import masked_lm_forward_flops


class ReplaceMLM(ReplacedTokenDetection):
    """Objective `replace_mlm`: the kept masked LM at the masked positions of the corrupted batch."""

    trains_rtd = False

    def heads(self, discriminator, config):
        head = masked_lm_head(discriminator.backbone.embedding.word_embeddings, config, name="main_mlm_head")
        head.build((None, None, config.hidden_size))
        self.main_mlm_head = head
        return {"main_mlm_head": head}

    def untrained_variables(self, discriminator):
        return discriminator.head.trainable_variables

    def discriminated_outputs(self, discriminated, outputs):
        logits = self.main_mlm_head(discriminated["last_hidden_state"], mask_positions=outputs.masked.positions)
        return {"main_mlm_logits": tf.cast(logits, tf.float32)}

    def losses(self, outputs, denominators):
        losses = super().losses(outputs, denominators)
        if outputs.main_mlm_logits is not None:
            losses["main_mlm_loss"] = self.main_mlm_loss(outputs, denominators)
        return losses

    @staticmethod
    def main_mlm_loss(outputs, denominators):
        return mlm_loss(outputs.masked, outputs.main_mlm_logits, denominators)

    def main_loss(self, losses, pretraining_config):
        """The kept masked LM's loss alone (unweighted, as the original)."""
        return losses["main_mlm_loss"] if "main_mlm_loss" in losses else 0.0

    def make_metrics(self):
        metrics = super().make_metrics() if self.trains_rtd else []
        self.main_mlm_loss_tracker = keras.metrics.Mean(name="main_mlm_loss")
        self.main_mlm_accuracy = keras.metrics.Accuracy(name="main_mlm_accuracy")
        return [*metrics, self.main_mlm_loss_tracker, self.main_mlm_accuracy]

    def update_metrics(self, outputs, losses, replicas):
        super().update_metrics(outputs, losses, replicas)
        if "main_mlm_loss" in losses:
            self.main_mlm_loss_tracker.update_state(losses["main_mlm_loss"] * replicas)
            self.main_mlm_accuracy.update_state(*self.main_mlm_predictions(outputs))

    @staticmethod
    def main_mlm_predictions(outputs):
        """`(labels, predictions, weights)` the kept masked LM is scored on."""
        masked = outputs.masked
        return masked.labels, tf.argmax(outputs.main_mlm_logits, axis=-1, output_type=tf.int32), masked.weights

    def main_forward_flops(self, config, pretraining_config):
        return masked_lm_forward_flops(config, pretraining_config)
