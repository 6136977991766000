"""Replaced token detection (objective `electra`, Clark et al., 2020): the paper's objective.

Minimises `gen_weight·L_MLM + disc_weight·L_RTD`: the generator's masked-LM loss (the step adds it for every
objective, `step_losses`) and the discriminator's sigmoid cross-entropy "replaced or original" over every real
token of the corrupted batch (`losses.rtd_loss`), each over its global count; RTD is scored there too. What an
objective's members are: docs/pretraining_variants.md, "How a variant is built".

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
        return Networks(*source.networks(config))

    def losses(self, outputs, denominators, pretraining_config):
        rtd_loss = losses.rtd_loss(outputs, denominators)
        return ObjectiveLosses({"rtd_loss": rtd_loss}, pretraining_config.disc_weight * rtd_loss,
                               {"rtd": every_token_rtd(outputs)})
