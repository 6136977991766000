"""The BERT-style baseline (objective `mlm`): no discriminator, the generator built at the discriminator's full
size with its own embeddings.

Minimises `gen_weight·L_MLM`, the generator's masked-LM cross-entropy at the masked positions (added by the step,
as for every objective); nothing is corrupted or discriminated, so this objective adds no loss, head or metric
(the step never asks it for `losses`).

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
