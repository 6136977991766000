"""All-Tokens MLM (objective `all_tokens_mlm`, Clark et al., 2020, §3.5): every token's identity predicted from
the corrupted batch with a copy mechanism, the RTD head's sigmoid being the probability `D` of copying the input:
`p(x_t) = D·[x_t = input_t] + (1 - D)·softmax_t(x_t)`.

Minimises `gen_weight·L_MLM + L_main`: the generator's masked-LM loss (added by the step) and the copy mechanism's
cross-entropy over every real token (`losses.copy_mlm_loss`), which trains the copy gate too. RTD is only reported.

Example:
>>> AllTokensMLM().reports
('rtd', 'main_mlm')
"""

from electra_tf.pretraining import losses
from electra_tf.pretraining.kept_mlm import KeptMaskedLM
from electra_tf.pretraining.outputs import ObjectiveLosses
from electra_tf.pretraining.step_metrics import every_token_rtd


class AllTokensMLM:
    """Objective `all_tokens_mlm`: the kept masked LM at every position, mixed with copying the input."""

    reports = ("rtd", "main_mlm")

    def __init__(self):
        self.kept = KeptMaskedLM()

    def networks(self, config, source):
        return self.kept.networks(config, source)  # the RTD head is the copy gate

    def losses(self, outputs, denominators, pretraining_config):
        logits = self.kept.logits(outputs)
        main_mlm_loss = losses.copy_mlm_loss(outputs, logits, denominators)
        scored = (outputs.input_ids, losses.copy_predictions(outputs, logits), outputs.real_tokens)
        return ObjectiveLosses({"rtd_loss": losses.rtd_loss(outputs, denominators), "main_mlm_loss": main_mlm_loss},
                               main_mlm_loss, {"rtd": every_token_rtd(outputs), "main_mlm": scored})
