"""Replaced token detection (objective `electra`, Clark et al., 2020): the paper's objective.

Minimises `gen_weight·L_MLM + disc_weight·L_RTD`: the generator's masked-LM loss (the step adds it for every
objective, `step_losses`) and the discriminator's sigmoid cross-entropy "replaced or original" over every real
token of the corrupted batch (`losses.rtd_loss`), each over its global count; RTD is scored there too.

An objective is one flat class with three members (its row in `config.variants` names it): `networks` (the networks, the
heads it adds, what it leaves untrained: `outputs.Networks`), `losses` (its losses, its term of the loss and what
it scores: `outputs.ObjectiveLosses`, read off the step's `PretrainingOutputs`) and `reports` (its trackers,
`step_metrics.REPORTS`). The step asks for its losses only when it ran the discriminator.

Example:
>>> from electra_tf.config import ElectraConfig, PretrainingConfig
>>> from electra_tf.pretraining.generator_sources import GeneratorNetwork
>>> objective = ReplacedTokenDetection()
>>> networks = objective.networks(ElectraConfig(), GeneratorNetwork(ElectraConfig(), PretrainingConfig(), (0,)))
>>> objective.reports, networks.discriminator.name, networks.heads
(('rtd',), 'discriminator', {})
"""

from electra_tf.pretraining import losses
from electra_tf.pretraining.outputs import Networks, ObjectiveLosses
from electra_tf.pretraining.step_metrics import every_token_rtd


class ReplacedTokenDetection:
    """Objective `electra`: replaced token detection over every real token."""

    reports = ("rtd",)

    def networks(self, config, source):
        """The generator source's networks; no head of its own."""
        return Networks(*source.networks(config))

    def losses(self, outputs, denominators, pretraining_config):
        """This replica's share of the RTD loss, `disc_weight ×` it as the term minimised, RTD scored on every
        real token."""
        rtd_loss = losses.rtd_loss(outputs, denominators)
        return ObjectiveLosses({"rtd_loss": rtd_loss}, pretraining_config.disc_weight * rtd_loss,
                               {"rtd": every_token_rtd(outputs)})
