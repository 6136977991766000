"""The model call of a serving graph compiled with XLA over a few padded shapes (docs/serving.md, "Compiled exports").

Example:
>>> import keras
>>> inputs = {"input_ids": keras.Input([None], dtype="int32")}
>>> model = keras.Model(inputs, {"logits": keras.layers.Embedding(10, 3)(inputs["input_ids"])})
>>> call = CompiledCall(model, sequence_axes={"logits": 1}, max_length=64)
>>> call({"input_ids": tf.constant([[1, 2, 3]])})["logits"].shape
TensorShape([1, 3, 3])
"""

import tensorflow as tf

# Padded sequence lengths (those up to the model's position table, which is added).
LENGTH_BUCKETS = (8, 16, 32, 64, 128, 256, 512)  # 8: `featurize.SHORT_LENGTH`
BATCH_BUCKETS = tuple(2 ** n for n in range(21))


def next_bucket(size, buckets):
    """The smallest of `buckets` (ascending) that is at least `size` (an int32 scalar)."""
    buckets = tf.constant(buckets, tf.int32)
    return tf.gather(buckets, tf.searchsorted(buckets, tf.reshape(size, [1]), side="left"))[0]


class CompiledCall:
    """`call(inputs)` (default: the model's) compiled with XLA on inputs padded to the next bucketed shape, outputs cut
    back (`sequence_axes`: output name → its sequence axis; `max_length`: the last bucket)."""

    def __init__(self, model, sequence_axes, max_length, call=None):
        self.sequence_axes = dict(sequence_axes)
        self.lengths = tuple(length for length in LENGTH_BUCKETS if length < max_length) + (int(max_length),)
        self.function = tf.function(call or (lambda inputs: model(inputs, training=False)), jit_compile=True)

    def __call__(self, inputs):
        shape = tf.shape(inputs["input_ids"])
        batch, length = shape[0], shape[-1]
        rank = len(inputs["input_ids"].shape)
        padding = ([[0, next_bucket(batch, BATCH_BUCKETS) - batch]] + [[0, 0]] * (rank - 2)
                   + [[0, next_bucket(length, self.lengths) - length]])
        outputs = self.function({name: tf.pad(value, padding) for name, value in inputs.items()})
        cut = {}
        for name, value in outputs.items():
            value = value[:batch]
            axis = self.sequence_axes.get(name)
            if axis is not None:
                axis %= len(value.shape)
                value = value[(slice(None),) * axis + (slice(None, length),)]
            cut[name] = value
        return cut
