"""Replaced token detection (objective `electra`, Clark et al., 2020): the paper's objective.

Minimises `gen_weight·L_MLM + disc_weight·L_RTD`: the generator's masked-LM loss (the step adds it for every
objective, `step_losses`) and the discriminator's sigmoid cross-entropy "replaced or original" over every real
token of the corrupted batch (`losses.rtd_loss`), each over its global count.

An objective is one flat class with the same members (`registry.OBJECTIVES` names them): `discriminates`,
`networks` (and the heads it adds), `untrained_variables`, `read_discriminator`, `losses`, `make_metrics`,
`update_metrics`, `forward_flops`. The step asks for its losses and metrics only when it ran the discriminator.

Example:
>>> from electra_tf.config import ElectraConfig, PretrainingConfig
>>> objective = ReplacedTokenDetection()
>>> objective.discriminates, [m.name for m in objective.make_metrics()][:2]
(True, ['sampled_mlm_accuracy', 'rtd_loss'])
>>> round(objective.forward_flops(ElectraConfig(), PretrainingConfig()) / 1e6)
21
"""

from electra_tf.models.discriminator import ElectraDiscriminator
from electra_tf.pretraining import losses
from electra_tf.pretraining.step_metrics import rtd_trackers, update_rtd_trackers
from electra_tf.training.flops import encoder_forward_flops, rtd_head_flops


class ReplacedTokenDetection:
    """Objective `electra`: replaced token detection over every real token."""

    discriminates = True  # the step corrupts the batch and runs the discriminator

    def networks(self, config, source):
        """`(discriminator, generator, heads)`: the generator source's networks, and `{attribute: layer}` of the
        heads this objective adds (the pre-trainer holds them under these names; checkpoints use them)."""
        return (*source.networks(config, ElectraDiscriminator), {})

    def untrained_variables(self, discriminator):
        """Variables of the networks this objective leaves as they are."""
        return []

    def read_discriminator(self, discriminated, outputs):
        """`outputs` with what the objective's heads read off the discriminator's outputs (nothing here)."""
        return outputs

    def losses(self, outputs, denominators, pretraining_config):
        """`({name: loss}, term)`: this replica's shares of the objective's losses, and its term of the loss
        minimised."""
        rtd_loss = losses.rtd_loss(outputs, denominators)
        return {"rtd_loss": rtd_loss}, pretraining_config.disc_weight * rtd_loss

    def make_metrics(self):
        """The objective's trackers, made once by the pre-trainer."""
        self.trackers = rtd_trackers()
        return self.trackers

    def update_metrics(self, outputs, step_losses, replicas):
        """Updates the trackers; `replicas` turns each replica's share of a loss into the global value."""
        scored = (outputs.rtd_labels, outputs.real_tokens, outputs.rtd_logits)  # every real token
        update_rtd_trackers(self.trackers, outputs, step_losses["rtd_loss"], scored, replicas)

    def forward_flops(self, config, pretraining_config):
        """Forward FLOPs per input token of the trained network (discriminator encoder and heads)."""
        return encoder_forward_flops(config, pretraining_config.max_seq_length) + rtd_head_flops(config)
