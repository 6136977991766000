"""The BERT-style baseline (objective `mlm`): no discriminator, the generator at the discriminator's full size.

Minimises `gen_weight·L_MLM`, the generator's masked-LM cross-entropy at the masked positions, which the step adds
for every objective: nothing is corrupted or discriminated, so this one adds no loss, head or metric.

Example:
>>> MaskedLanguageModel().reports
()
"""

from electra_tf.models.generator import ElectraGenerator
from electra_tf.pretraining.outputs import Networks


class MaskedLanguageModel:
    """Objective `mlm`: mask → generate, nothing corrupted or discriminated."""

    reports = ()  # the generator's MLM loss and accuracy are the step's

    def networks(self, config, source):
        return Networks(None, ElectraGenerator(config, name="generator"))
