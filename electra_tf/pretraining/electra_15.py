"""ELECTRA 15 % (objective `electra_15`, Clark et al., 2020, §3.5): replaced token detection at the masked
positions only.

Minimises `gen_weight·L_MLM + disc_weight·L_RTD15`: the generator's masked-LM loss (added by the step) and the
discriminator's sigmoid cross-entropy over the masked positions, over their global count (`losses.masked_rtd_loss`).

Example:
>>> MaskedReplacedTokenDetection().reports
('rtd',)
"""

from electra_tf.pretraining import losses
from electra_tf.pretraining.outputs import Networks, ObjectiveLosses


class MaskedReplacedTokenDetection:
    """Objective `electra_15`: replaced token detection at the masked positions."""

    reports = ("rtd",)

    def networks(self, config, source):
        return Networks(*source.networks(config))

    def losses(self, outputs, denominators, pretraining_config):
        rtd_loss = losses.masked_rtd_loss(outputs, denominators)
        masked = outputs.masked
        scored = (losses.at_slots(outputs.rtd_labels, masked), masked.weights,
                  losses.at_slots(outputs.rtd_logits, masked))
        return ObjectiveLosses({"rtd_loss": rtd_loss}, pretraining_config.disc_weight * rtd_loss, {"rtd": scored})
