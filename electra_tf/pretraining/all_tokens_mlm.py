"""All-Tokens MLM (objective `all_tokens_mlm`, Clark et al., 2020, §3.5): every token's identity predicted from
the corrupted batch with the copy mechanism: the RTD head's sigmoid is the probability `D` of copying the input
token, `p(x_t) = D·[x_t = input_t] + (1 - D)·softmax_t(x_t)` (`losses.copy_log_probabilities`).

Minimises `gen_weight·L_MLM + L_main`: the generator's masked-LM loss (added by the step) and the copy
mechanism's cross-entropy over every real token (`losses.copy_mlm_loss`), through which the RTD head (the copy
gate) learns too. The RTD loss is reported, not minimised.

Example:
>>> [m.name for m in AllTokensMLM().make_metrics()][-2:]
['main_mlm_loss', 'main_mlm_accuracy']
"""

from electra_tf.models.discriminator import ElectraDiscriminator
from electra_tf.pretraining import losses
from electra_tf.pretraining.kept_mlm import kept_mlm_head, kept_mlm_logits, kept_mlm_trackers, update_kept_mlm_trackers
from electra_tf.pretraining.step_metrics import rtd_trackers, update_rtd_trackers
from electra_tf.training.flops import encoder_forward_flops, masked_lm_head_flops, rtd_head_flops


class AllTokensMLM:
    """Objective `all_tokens_mlm`: the kept masked LM at every position, mixed with copying the input."""

    discriminates = True

    def networks(self, config, source):
        discriminator, generator = source.networks(config, ElectraDiscriminator)
        self.main_mlm_head = kept_mlm_head(discriminator, config)
        return discriminator, generator, {"main_mlm_head": self.main_mlm_head}

    def untrained_variables(self, discriminator):
        return []  # the RTD head is the copy gate

    def read_discriminator(self, discriminated, outputs):
        return outputs._replace(main_mlm_logits=kept_mlm_logits(self.main_mlm_head, discriminated))

    def losses(self, outputs, denominators, pretraining_config):
        main_mlm_loss = losses.copy_mlm_loss(outputs, denominators)
        return {"rtd_loss": losses.rtd_loss(outputs, denominators), "main_mlm_loss": main_mlm_loss}, main_mlm_loss

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
