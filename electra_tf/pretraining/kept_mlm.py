"""The masked LM kept on the discriminator's encoder, a part Replace MLM, All-Tokens MLM and CLM hold: a
generator-kind head tied to the discriminator's word embeddings, `main_mlm_head` in checkpoints.

Example:
>>> from electra_tf.config import ElectraConfig, PretrainingConfig
>>> from electra_tf.pretraining.generator_sources import GeneratorNetwork
>>> config = ElectraConfig(vocab_size=30, embedding_size=8, hidden_size=16, num_layers=1, num_heads=2,
...                        intermediate_size=32)
>>> list(KeptMaskedLM().networks(config, GeneratorNetwork(config, PretrainingConfig(), (0,))).heads)
['main_mlm_head']
"""

import tensorflow as tf

from electra_tf.layers.heads import masked_lm_head
from electra_tf.pretraining.outputs import Networks


class KeptMaskedLM:
    """A masked-LM head on the discriminator's encoder, tied to its word embeddings."""

    def networks(self, config, source, untrained_rtd_head=False):
        """The source's networks with the head; the RTD head left untrained if asked."""
        discriminator, generator = source.networks(config)
        self.head = masked_lm_head(discriminator.backbone.embedding.word_embeddings, config, name="main_mlm_head")
        self.head.build((None, None, config.hidden_size))
        untrained = tuple(discriminator.head.trainable_variables) if untrained_rtd_head else ()
        return Networks(discriminator, generator, {"main_mlm_head": self.head}, untrained)

    def logits(self, outputs, positions=None):
        """The head's float32 logits at `positions` (`[batch, P]`; None: every position)."""
        hidden = outputs.discriminator_hidden
        if positions is None:
            shape = tf.shape(hidden)[:2]
            positions = tf.broadcast_to(tf.range(shape[1]), shape)
        return tf.cast(self.head(hidden, mask_positions=positions), tf.float32)
