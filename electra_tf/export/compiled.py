"""The model call of a serving graph compiled with XLA (`jit_compile=True`) over a few padded shapes.

XLA compiles one program per input shape, so a request is padded up to the
next of a small set of shapes before the call: the batch to a power of two,
the sequence to `LENGTH_BUCKETS` (and the model's position table), and the
outputs are cut back. Padded positions have `attention_mask` 0 and padded rows
are dropped, so the outputs are the uncompiled call's (to float rounding).
Short requests gain most; long batches, where the matmuls dominate, gain
nothing (docs/serving.md, "Benchmark").

`export_model` passes the model's call with its weights as constants
(`electra_tf.export.constants`), which XLA folds and lays out at compile time.

A SavedModel holding such a function needs a server with XLA's CPU JIT: TF
Serving refuses it unless started with `--xla_cpu_compilation_enabled`
(`docs/serving.md`), so `export_model` compiles only when asked.

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
# Padded batch sizes: powers of two.
BATCH_BUCKETS = tuple(2 ** n for n in range(21))


def next_bucket(size, buckets):
    """The smallest of `buckets` (ascending) that is at least `size` (an int32 scalar)."""
    buckets = tf.constant(buckets, tf.int32)
    return tf.gather(buckets, tf.searchsorted(buckets, tf.reshape(size, [1]), side="left"))[0]


class CompiledCall:
    """`model(inputs, training=False)` compiled with XLA, on inputs padded to the next bucketed shape.

    Args:
        model: a Keras model taking a dict of int32 `[batch, (choices,) sequence]` tensors.
        sequence_axes: output name → its sequence axis (the outputs cut back to the request's length);
            other outputs are only cut back to the request's batch.
        max_length: the longest sequence (the model's position table): the last bucket.
        call: what is compiled, `call(inputs)` (default: `model(inputs, training=False)`).
    """

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
