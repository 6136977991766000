"""The BERT-style baseline (objective `mlm`): no discriminator, the generator built at the discriminator's full
size with its own embeddings, trained by its MLM loss alone.

Example:
>>> MaskedLanguageModel().discriminates
False
"""

from electra_tf.models.generator import ElectraGenerator
from electra_tf.pretraining.objective import ReplacedTokenDetection
from electra_tf.training.flops import masked_lm_forward_flops


class MaskedLanguageModel(ReplacedTokenDetection):
    """Objective `mlm`: mask → generate, nothing corrupted or discriminated."""

    discriminates = trains_rtd = False

    def networks(self, config, source):
        return None, ElectraGenerator(config, name="generator")

    def make_metrics(self):
        return []

    def main_forward_flops(self, config, pretraining_config):
        """The full-size generator's: encoder and masked-LM head at the masked positions."""
        return masked_lm_forward_flops(config, pretraining_config)
