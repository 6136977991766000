"""`PretrainingOutputs`: what one forward pass of the pre-trainer computed, field by field (`None` where the step
did not compute it); and what an objective returns (`Networks`, `ObjectiveLosses`). `NamedTuple`s, which pass
through `tf.function` as they are.

Example:
>>> import tensorflow as tf
>>> outputs = PretrainingOutputs(masked=None, input_ids=tf.zeros([2, 8], tf.int32), real_tokens=tf.ones([2, 8]))
>>> outputs.discriminated, outputs._replace(rtd_logits=tf.zeros([2, 8])).discriminated
(False, True)
"""

from typing import NamedTuple

import tensorflow as tf

from electra_tf.pretraining.masking import MaskedBatch


class PretrainingOutputs(NamedTuple):
    masked: MaskedBatch  # the batch as masked in-graph (positions, weights, labels: the original ids there)
    input_ids: tf.Tensor  # [batch, sequence] int32, the batch as read
    real_tokens: tf.Tensor  # [batch, sequence] float32, 1 on real tokens (the attention mask)
    mlm_logits: tf.Tensor | None = None  # [batch, P, vocab] float32, the generator's at the masked positions
    generator_hidden: tf.Tensor | None = None  # [batch, sequence, hidden], the generator's last hidden state
    sampled: tf.Tensor | None = None  # [batch, P] int32, the replacements drawn
    corrupted_ids: tf.Tensor | None = None  # [batch, sequence] int32, the batch with the replacements written in
    rtd_labels: tf.Tensor | None = None  # [batch, sequence] float32, 1 where replaced (and different), real tokens
    rtd_logits: tf.Tensor | None = None  # [batch, sequence] float32, the discriminator's "replaced" logits
    discriminator_hidden: tf.Tensor | None = None  # [batch, sequence, hidden], the discriminator's last hidden state

    @property
    def discriminated(self):
        """Whether the step ran the discriminator (not in a two-stage generator phase, nor for `mlm`)."""
        return self.rtd_logits is not None


class Networks(NamedTuple):
    """What an objective's `networks` builds: the two networks (`None`: not in this variant), the heads it adds
    (`{attribute: layer}`, held by the pre-trainer under these names) and the variables it leaves untrained."""

    discriminator: object
    generator: object
    heads: dict = {}
    untrained: tuple = ()


class ObjectiveLosses(NamedTuple):
    """What an objective's `losses` returns: this replica's shares of its losses, its term of the loss minimised,
    and what each of its `reports` scores (`{report: values}`)."""

    losses: dict
    term: object
    scored: dict
