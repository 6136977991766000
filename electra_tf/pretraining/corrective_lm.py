"""Corrective language modeling (objective `clm`; COCO-LM, Meng et al., NeurIPS 2021, §3.1).

The discriminator predicts the original token at every position of the corrupted batch, with COCO-LM's binary
copy mechanism: the RTD head's sigmoid is the probability of copying the input token, `p_copy`, and
`p(x_orig) = 1[x_input = x_orig]·p_copy + (1 - p_copy)·softmax(x_orig)`. Unlike All-Tokens MLM
(`all_tokens_mlm`, which it otherwise shares: heads, metrics, FLOPs), the copy head learns from its own loss
only: `L = L_LM + disc_weight·L_copy`, where `L_copy` is the copy head's binary cross-entropy (RTD's, the labels
being "replaced"), and `L_LM` reads `p_copy` through a stop-gradient. COCO-LM's other task, sequence
contrastive learning, is not part of this objective.

Example:
>>> from electra_tf.config import PretrainingConfig
>>> objective = CorrectiveLanguageModel()
>>> objective.trains_rtd, objective.main_loss({"main_mlm_loss": 2.0, "rtd_loss": 0.1}, PretrainingConfig())
(True, 7.0)
"""

import tensorflow as tf

from electra_tf.pretraining import objectives
from electra_tf.pretraining.all_tokens_mlm import AllTokensMLM


class CorrectiveLanguageModel(AllTokensMLM):
    """Objective `clm`: every original token predicted with a copy gate trained by its own loss."""

    @staticmethod
    def main_mlm_loss(outputs, denominators):
        """`L_LM`: the copy mechanism's cross-entropy over every real token, `p_copy` held constant."""
        return objectives.copy_mlm_loss(outputs._replace(rtd_logits=tf.stop_gradient(outputs.rtd_logits)),
                                        denominators)

    def main_loss(self, losses, pretraining_config):
        """`L_LM + disc_weight × L_copy` (0 when the step did not discriminate)."""
        if "main_mlm_loss" not in losses:
            return 0.0
        return losses["main_mlm_loss"] + pretraining_config.disc_weight * losses["rtd_loss"]
