"""Replace MLM (objective `replace_mlm`, Clark et al., 2020, §3.5): a masked LM kept on the discriminator's
encoder predicts the original tokens at the masked positions of the corrupted batch (generator samples there
instead of [MASK]).

Minimises `gen_weight·L_MLM + L_main`: the generator's masked-LM loss (added by the step) and the kept masked
LM's cross-entropy at the masked positions (`losses.mlm_loss`), unweighted as in the original. The
discriminator's RTD head is neither trained nor scored.

Example:
>>> [m.name for m in ReplaceMLM().make_metrics()]
['main_mlm_loss', 'main_mlm_accuracy']
"""

import tensorflow as tf

from electra_tf.models.discriminator import ElectraDiscriminator
from electra_tf.pretraining import losses
from electra_tf.pretraining.kept_mlm import kept_mlm_head, kept_mlm_logits, kept_mlm_trackers, update_kept_mlm_trackers
from electra_tf.training.flops import masked_lm_forward_flops


class ReplaceMLM:
    """Objective `replace_mlm`: the kept masked LM at the masked positions of the corrupted batch."""

    discriminates = True

    def networks(self, config, source):
        discriminator, generator = source.networks(config, ElectraDiscriminator)
        self.main_mlm_head = kept_mlm_head(discriminator, config)
        return discriminator, generator, {"main_mlm_head": self.main_mlm_head}

    def untrained_variables(self, discriminator):
        return discriminator.head.trainable_variables  # the RTD head

    def read_discriminator(self, discriminated, outputs):
        return outputs._replace(main_mlm_logits=kept_mlm_logits(self.main_mlm_head, discriminated,
                                                                outputs.masked.positions))

    def losses(self, outputs, denominators, pretraining_config):
        main_mlm_loss = losses.mlm_loss(outputs.masked, outputs.main_mlm_logits, denominators)
        return {"main_mlm_loss": main_mlm_loss}, main_mlm_loss

    def make_metrics(self):
        self.trackers = kept_mlm_trackers()
        return self.trackers

    def update_metrics(self, outputs, step_losses, replicas):
        masked = outputs.masked
        predictions = tf.argmax(outputs.main_mlm_logits, axis=-1, output_type=tf.int32)
        update_kept_mlm_trackers(self.trackers, step_losses["main_mlm_loss"],
                                 (masked.labels, predictions, masked.weights), replicas)

    def forward_flops(self, config, pretraining_config):
        return masked_lm_forward_flops(config, pretraining_config)
