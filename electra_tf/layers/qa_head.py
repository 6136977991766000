"""The original ELECTRA question-answering head (XLNet-style), which no library has: start logits over the context
and [CLS], end logits given a start (the gold one in training, the `beam_size` best otherwise), and an answerable
classifier on `[CLS; softmax(start)·sequence]` (`answerable_logits`, higher for unanswerable).

Example:
>>> import numpy as np
>>> head = JointEndLogits(beam_size=2, hidden_size=8)
>>> sequence, start_logits = np.random.rand(1, 5, 4).astype("float32"), np.arange(5.0)[None]
>>> end_logits, candidates = head(sequence, start_logits, np.ones((1, 5), "float32"))
>>> tuple(end_logits.shape), candidates.numpy().tolist()
((1, 2, 5), [[4, 3]])
"""

import keras
import tensorflow as tf

from electra_tf.layers.activations import gelu_erf

MASKED = 1000.0


def answer_mask(attention_mask, token_type_ids):
    """1.0 where an answer may start or end: context tokens (segment 1) and [CLS] (no answer)."""
    mask = keras.ops.cast(attention_mask * token_type_ids, "float32")
    return keras.ops.concatenate([keras.ops.ones_like(mask[:, :1]), mask[:, 1:]], axis=1)


@keras.saving.register_keras_serializable(package="electra_tf")
class JointEndLogits(keras.layers.Layer):
    """End logits given a start: `(sequence [B, L, H], start_logits [B, L], allowed [B, L] (`answer_mask`),
    start_positions [B] or None)` → `(end_logits [B, K, L], start_candidates [B, K])`. The original's `qa_hidden`
    kernel `[2H, 512]` is applied as two broadcast halves, not on a tiled `[B, K, L, 2H]` concatenation."""

    def __init__(self, beam_size=20, hidden_size=512, kernel_initializer="glorot_uniform", **kwargs):
        super().__init__(**kwargs)
        self.beam_size = beam_size
        self.hidden_size = hidden_size
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.qa_hidden = keras.layers.Dense(hidden_size, kernel_initializer=self.kernel_initializer,
                                            name="qa_hidden")
        self.end_dense = keras.layers.Dense(1, kernel_initializer=self.kernel_initializer, name="end_dense")

    def build(self, sequence_shape, start_logits_shape=None, allowed_shape=None, start_positions_shape=None):
        width = sequence_shape[-1]
        self.qa_hidden.build((None, 2 * width))
        self.end_dense.build((None, self.hidden_size))

    def call(self, sequence, start_logits, allowed, start_positions=None):
        if start_positions is None:
            k = tf.minimum(self.beam_size, tf.shape(start_logits)[1])
            candidates = tf.math.top_k(start_logits, k).indices
        else:
            candidates = keras.ops.cast(start_positions, "int32")[:, None]
        width = keras.ops.shape(sequence)[-1]
        start_kernel, token_kernel = self.qa_hidden.kernel[:width], self.qa_hidden.kernel[width:]
        start_repr = tf.gather(sequence, candidates, batch_dims=1)  # [B, K, H]
        hidden = (keras.ops.matmul(start_repr, start_kernel)[:, :, None]
                  + keras.ops.matmul(sequence, token_kernel)[:, None] + self.qa_hidden.bias)
        end_logits = keras.ops.squeeze(self.end_dense(gelu_erf(hidden)), -1)
        return end_logits - MASKED * (1.0 - allowed[:, None]), candidates

    def compute_output_shape(self, sequence_shape, start_logits_shape, allowed_shape, start_positions_shape=None):
        return (sequence_shape[0], None, sequence_shape[1]), (sequence_shape[0], None)

    def get_config(self):
        return {**super().get_config(), "beam_size": self.beam_size, "hidden_size": self.hidden_size,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer)}


@keras.saving.register_keras_serializable(package="electra_tf")
class StartWeightedSummary(keras.layers.Layer):
    """`[CLS; softmax(start_logits)·sequence]`: the answerable classifier's input, `[B, 2H]`."""

    def call(self, sequence, start_logits):
        weights = keras.ops.softmax(start_logits, axis=-1)
        return keras.ops.concatenate([sequence[:, 0], keras.ops.einsum("bl,blh->bh", weights, sequence)], -1)

    def compute_output_shape(self, sequence_shape, start_logits_shape):
        return (sequence_shape[0], 2 * sequence_shape[-1])
