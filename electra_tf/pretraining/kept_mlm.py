"""The masked LM kept on the discriminator's encoder (Replace MLM, All-Tokens MLM, CLM): a part the three objectives
hold (`self.kept = KeptMaskedLM()`), which builds the networks with its head and computes its logits.

The head is the generator's kind (`layers.heads.masked_lm_head`) tied to the discriminator's word embeddings,
held by the pre-trainer as `main_mlm_head` (its checkpoints use that name).

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
        """The source's networks with the head (`main_mlm_head`); the RTD head left untrained if asked."""
        discriminator, generator = source.networks(config)
        self.head = masked_lm_head(discriminator.backbone.embedding.word_embeddings, config, name="main_mlm_head")
        self.head.build((None, None, config.hidden_size))
        untrained = tuple(discriminator.head.trainable_variables) if untrained_rtd_head else ()
        return Networks(discriminator, generator, {"main_mlm_head": self.head}, untrained)

    def logits(self, outputs, positions=None):
        """The head's float32 logits on the discriminator's last hidden state at `positions` (`[batch, P]`; None:
        at every position)."""
        hidden = outputs.discriminator_hidden
        if positions is None:
            shape = tf.shape(hidden)[:2]
            positions = tf.broadcast_to(tf.range(shape[1]), shape)
        return tf.cast(self.head(hidden, mask_positions=positions), tf.float32)
