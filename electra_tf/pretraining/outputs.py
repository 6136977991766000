"""`PretrainingOutputs`: what one forward pass of the pre-trainer computed, field by field.

The pre-trainer fills it in step order (mask → generate → corrupt → discriminate); the objective, the generator's
loss and the training algorithm read it. A field a step did not compute is `None`: a unigram generator has no
`mlm_logits`, a two-stage generator phase stops before `corrupted_ids`, only the objectives with a masked LM on the
discriminator set `main_mlm_logits`. A `NamedTuple`, so it passes through `tf.function` as it is.

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
    baseline_logits: tf.Tensor | None = None  # [batch, P] float32, adversarial training's reward baseline
    sampled: tf.Tensor | None = None  # [batch, P] int32, the replacements drawn
    corrupted_ids: tf.Tensor | None = None  # [batch, sequence] int32, the batch with the replacements written in
    rtd_labels: tf.Tensor | None = None  # [batch, sequence] float32, 1 where replaced (and different), real tokens
    rtd_logits: tf.Tensor | None = None  # [batch, sequence] float32, the discriminator's "replaced" logits
    main_mlm_logits: tf.Tensor | None = None  # [batch, P or sequence, vocab] float32, a masked LM on the discriminator

    @property
    def discriminated(self):
        """Whether the step ran the discriminator (not in a two-stage generator phase, nor for `mlm`)."""
        return self.rtd_logits is not None
