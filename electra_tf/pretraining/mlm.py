"""The BERT-style baseline (objective `mlm`): no discriminator, the generator built at the discriminator's full
size with its own embeddings.

Minimises `gen_weight·L_MLM`, the generator's masked-LM cross-entropy at the masked positions (added by the step,
as for every objective); nothing is corrupted or discriminated, so this objective adds no loss, head or metric.

Example:
>>> MaskedLanguageModel().discriminates
False
"""

from electra_tf.models.generator import ElectraGenerator
from electra_tf.training.flops import masked_lm_forward_flops


class MaskedLanguageModel:
    """Objective `mlm`: mask → generate, nothing corrupted or discriminated."""

    discriminates = False

    def networks(self, config, source):
        return None, ElectraGenerator(config, name="generator"), {}

    def untrained_variables(self, discriminator):
        return []

    def read_discriminator(self, discriminated, outputs):
        return outputs

    def losses(self, outputs, denominators, pretraining_config):
        return {}, 0.0

    def make_metrics(self):
        return []

    def update_metrics(self, outputs, step_losses, replicas):
        """Nothing to track: the generator's MLM loss and accuracy are the step's."""

    def forward_flops(self, config, pretraining_config):
        """The full-size generator's: encoder and masked-LM head at the masked positions."""
        return masked_lm_forward_flops(config, pretraining_config)
