"""Corrective language modeling (objective `clm`; COCO-LM, Meng et al., NeurIPS 2021, §3.1): the discriminator
predicts the original token at every position of the corrupted batch with a copy mechanism, the RTD head's sigmoid
being `p_copy`: `p(x_orig) = 1[x_input = x_orig]·p_copy + (1 - p_copy)·softmax(x_orig)`.

Minimises `gen_weight·L_MLM + L_LM + disc_weight·L_copy`: the generator's masked-LM loss (added by the step);
`L_LM`, the copy mechanism's cross-entropy over every real token with `p_copy` through a stop-gradient
(`losses.copy_mlm_loss`); `L_copy`, the copy head's own binary cross-entropy (RTD's: `losses.rtd_loss`). Unlike
All-Tokens MLM, the gate learns from `L_copy` only. COCO-LM's sequence contrastive learning is not included.

Example:
>>> CorrectiveLanguageModel().reports
('rtd', 'main_mlm')
"""

import tensorflow as tf

from electra_tf.pretraining import losses
from electra_tf.pretraining.kept_mlm import KeptMaskedLM
from electra_tf.pretraining.outputs import ObjectiveLosses
from electra_tf.pretraining.step_metrics import every_token_rtd


class CorrectiveLanguageModel:
    """Objective `clm`: every original token predicted with a copy gate trained by its own loss."""

    reports = ("rtd", "main_mlm")

    def __init__(self):
        self.kept = KeptMaskedLM()

    def networks(self, config, source):
        return self.kept.networks(config, source)

    def losses(self, outputs, denominators, pretraining_config):
        logits = self.kept.logits(outputs)
        copy_loss = losses.rtd_loss(outputs, denominators)  # L_copy
        lm_loss = losses.copy_mlm_loss(outputs._replace(rtd_logits=tf.stop_gradient(outputs.rtd_logits)), logits,
                                       denominators)  # L_LM, p_copy held constant
        scored = (outputs.input_ids, losses.copy_predictions(outputs, logits), outputs.real_tokens)
        return ObjectiveLosses({"rtd_loss": copy_loss, "main_mlm_loss": lm_loss},
                               lm_loss + pretraining_config.disc_weight * copy_loss,
                               {"rtd": every_token_rtd(outputs), "main_mlm": scored})
