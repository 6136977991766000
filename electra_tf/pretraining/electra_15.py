"""ELECTRA 15 % (objective `electra_15`, Clark et al., 2020, §3.5): replaced token detection at the masked
positions only.

Minimises `gen_weight·L_MLM + disc_weight·L_RTD15`: the generator's masked-LM loss (added by the step) and the
discriminator's sigmoid cross-entropy over the masked positions only, over the global number of predictions
(`losses.masked_rtd_loss`); RTD is scored there too.

Example:
>>> [m.name for m in MaskedReplacedTokenDetection().make_metrics()][1]
'rtd_loss'
"""

from electra_tf.models.discriminator import ElectraDiscriminator
from electra_tf.pretraining import losses
from electra_tf.pretraining.step_metrics import rtd_trackers, update_rtd_trackers
from electra_tf.training.flops import encoder_forward_flops, rtd_head_flops


class MaskedReplacedTokenDetection:
    """Objective `electra_15`: replaced token detection at the masked positions."""

    discriminates = True

    def networks(self, config, source):
        return (*source.networks(config, ElectraDiscriminator), {})

    def untrained_variables(self, discriminator):
        return []

    def read_discriminator(self, discriminated, outputs):
        return outputs

    def losses(self, outputs, denominators, pretraining_config):
        rtd_loss = losses.masked_rtd_loss(outputs, denominators)
        return {"rtd_loss": rtd_loss}, pretraining_config.disc_weight * rtd_loss

    def make_metrics(self):
        self.trackers = rtd_trackers()
        return self.trackers

    def update_metrics(self, outputs, step_losses, replicas):
        masked = outputs.masked  # scored at the masked positions
        scored = (losses.at_slots(outputs.rtd_labels, masked), masked.weights,
                  losses.at_slots(outputs.rtd_logits, masked))
        update_rtd_trackers(self.trackers, outputs, step_losses["rtd_loss"], scored, replicas)

    def forward_flops(self, config, pretraining_config):
        return encoder_forward_flops(config, pretraining_config.max_seq_length) + rtd_head_flops(config)
