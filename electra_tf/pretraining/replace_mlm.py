"""Replace MLM (objective `replace_mlm`, Clark et al., 2020, §3.5): a masked LM on the discriminator's encoder
predicts the original tokens at the masked positions of the corrupted batch (generator samples, not [MASK]).

Minimises `gen_weight·L_MLM + L_main`: the generator's masked-LM loss (added by the step) and the kept masked LM's
cross-entropy at the masked positions (`losses.mlm_loss`), unweighted as in the original; the RTD head is unused.

Example:
>>> ReplaceMLM().reports
('main_mlm',)
"""

import tensorflow as tf

from electra_tf.pretraining import losses
from electra_tf.pretraining.kept_mlm import KeptMaskedLM
from electra_tf.pretraining.outputs import ObjectiveLosses


class ReplaceMLM:
    """Objective `replace_mlm`: the kept masked LM at the masked positions of the corrupted batch."""

    reports = ("main_mlm",)

    def __init__(self):
        self.kept = KeptMaskedLM()

    def networks(self, config, source):
        return self.kept.networks(config, source, untrained_rtd_head=True)

    def losses(self, outputs, denominators, pretraining_config):
        masked = outputs.masked
        logits = self.kept.logits(outputs, masked.positions)
        main_mlm_loss = losses.mlm_loss(masked, logits, denominators)
        predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)
        return ObjectiveLosses({"main_mlm_loss": main_mlm_loss}, main_mlm_loss,
                               {"main_mlm": (masked.labels, predictions, masked.weights)})
