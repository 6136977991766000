"""Corrective language modeling (objective `clm`; COCO-LM, Meng et al., NeurIPS 2021, §3.1).

The discriminator predicts the original token at every position of the corrupted batch, with COCO-LM's binary
copy mechanism: the RTD head's sigmoid is the probability of copying the input token, `p_copy`, and
`p(x_orig) = 1[x_input = x_orig]·p_copy + (1 - p_copy)·softmax(x_orig)` (`losses.copy_log_probabilities`).

Minimises `gen_weight·L_MLM + L_LM + disc_weight·L_copy`: the generator's masked-LM loss (added by the step);
`L_LM`, the copy mechanism's cross-entropy over every real token with `p_copy` read through a stop-gradient
(`losses.copy_mlm_loss`); and `L_copy`, the copy head's own binary cross-entropy (RTD's, the labels being
"replaced": `losses.rtd_loss`). Unlike All-Tokens MLM, the copy gate learns from `L_copy` only. COCO-LM's other
task, sequence contrastive learning, is not part of this objective.

Example:
>>> [m.name for m in CorrectiveLanguageModel().make_metrics()][-2:]
['main_mlm_loss', 'main_mlm_accuracy']
"""

import tensorflow as tf

from electra_tf.models.discriminator import ElectraDiscriminator
from electra_tf.pretraining import losses
from electra_tf.pretraining.kept_mlm import kept_mlm_head, kept_mlm_logits, kept_mlm_trackers, update_kept_mlm_trackers
from electra_tf.pretraining.step_metrics import rtd_trackers, update_rtd_trackers
from electra_tf.training.flops import encoder_forward_flops, masked_lm_head_flops, rtd_head_flops


class CorrectiveLanguageModel:
    """Objective `clm`: every original token predicted with a copy gate trained by its own loss."""

    discriminates = True

    def networks(self, config, source):
        discriminator, generator = source.networks(config, ElectraDiscriminator)
        self.main_mlm_head = kept_mlm_head(discriminator, config)
        return discriminator, generator, {"main_mlm_head": self.main_mlm_head}

    def untrained_variables(self, discriminator):
        return []

    def read_discriminator(self, discriminated, outputs):
        return outputs._replace(main_mlm_logits=kept_mlm_logits(self.main_mlm_head, discriminated))

    def losses(self, outputs, denominators, pretraining_config):
        copy_loss = losses.rtd_loss(outputs, denominators)  # L_copy
        lm_loss = losses.copy_mlm_loss(outputs._replace(rtd_logits=tf.stop_gradient(outputs.rtd_logits)),
                                       denominators)  # L_LM, p_copy held constant
        return ({"rtd_loss": copy_loss, "main_mlm_loss": lm_loss},
                lm_loss + pretraining_config.disc_weight * copy_loss)

    def make_metrics(self):
        self.rtd, self.kept = rtd_trackers(), kept_mlm_trackers()
        return [*self.rtd, *self.kept]

    def update_metrics(self, outputs, step_losses, replicas):
        update_rtd_trackers(self.rtd, outputs, step_losses["rtd_loss"],
                            (outputs.rtd_labels, outputs.real_tokens, outputs.rtd_logits), replicas)
        update_kept_mlm_trackers(self.kept, step_losses["main_mlm_loss"], (
            outputs.input_ids, losses.copy_predictions(outputs), outputs.real_tokens), replicas)

    def forward_flops(self, config, pretraining_config):
        return (encoder_forward_flops(config, pretraining_config.max_seq_length) + rtd_head_flops(config)
                + masked_lm_head_flops(config))
