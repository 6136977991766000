"""ELECTRA 15 % (Clark et al., 2020, §3.5): the RTD loss, and its scores, over the masked positions only.

Example:
>>> MaskedReplacedTokenDetection().trains_rtd
True
"""

from electra_tf.pretraining import objectives
from electra_tf.pretraining.objective import ReplacedTokenDetection


class MaskedReplacedTokenDetection(ReplacedTokenDetection):
    """Objective `electra_15`: replaced token detection at the masked positions."""

    rtd_loss = staticmethod(objectives.masked_rtd_loss)

    @staticmethod
    def scored_tokens(outputs):
        masked = outputs.masked
        return (objectives.at_slots(outputs.rtd_labels, masked), masked.weights,
                objectives.at_slots(outputs.rtd_logits, masked))
