"""The model call of a serving graph compiled with XLA (`jit_compile=True`) over a few padded shapes.

XLA compiles one program per input shape, so a request is padded up to the
next of a small set of shapes before the call: the batch to a power of two,
the sequence to `LENGTH_BUCKETS` (and the model's position table), and the
outputs are cut back. Padded positions have `attention_mask` 0 and padded rows
are dropped, so the outputs are the uncompiled call's (to float rounding). On
a 2-core CPU this cut a batch-1 call of ELECTRA-Small by about a third; at
batch 32 × 128 tokens, where the matmuls dominate, it gains nothing.

With `weights_as_constants=True` (what `export_model` asks for) the weights
enter the compiled program as constants (their values when the `CompiledCall`
is made) instead of as variables read at every call: XLA then folds what
depends only on them (the concatenated query/key/value kernel, reshapes,
casts) and lays the kernels out once, at compile time. On a 2-core CPU that
cut a further third off a batch-1 call of ELECTRA-Small (docs/serving.md). The
program then serves those values, which is right for an export (its weights
never change) but not for a model still being trained, so the in-process
pipeline keeps variables. Above `MAX_CONSTANT_BYTES` of weights (a graph is
one protocol buffer, at most 2 GiB) the variables are kept, with a warning.

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

import math
import warnings

import keras
import tensorflow as tf

# Padded sequence lengths (those up to the model's position table, which is added).
LENGTH_BUCKETS = (8, 16, 32, 64, 128, 256, 512)  # 8: `featurize.SHORT_LENGTH`
# Padded batch sizes: powers of two.
BATCH_BUCKETS = tuple(2 ** n for n in range(21))
# The most weight bytes compiled in as constants: half of what one protocol buffer (a saved graph) may hold.
MAX_CONSTANT_BYTES = 1 << 30


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
        weights_as_constants: compile the weights in as constants (their values now), for an export; by
            default they stay variables, read at each call.
    """

    def __init__(self, model, sequence_axes, max_length, weights_as_constants=False):
        self.model, self.sequence_axes = model, dict(sequence_axes)
        self.lengths = tuple(length for length in LENGTH_BUCKETS if length < max_length) + (int(max_length),)
        weight_bytes = sum(math.prod(weight.shape) * tf.as_dtype(weight.dtype).size for weight in model.variables)
        if weights_as_constants and weight_bytes > MAX_CONSTANT_BYTES:
            warnings.warn(f"the compiled call keeps the weights as variables: {weight_bytes / 2 ** 30:.1f} GiB "
                          f"is more than the {MAX_CONSTANT_BYTES / 2 ** 30:.0f} GiB compiled in as constants")
            weights_as_constants = False
        self.weights_as_constants = weights_as_constants
        # Read now: a read while tracing would list the variables as used by the traced function (a SavedModel
        # would then hold them), even in `tf.init_scope`.
        self.values = [variable.numpy() for variable in model.variables] if weights_as_constants else None
        self.function = tf.function(self._call_with_constants if weights_as_constants else self._call,
                                    jit_compile=True)

    def _call(self, inputs):
        return self.model(inputs, training=False)

    def _call_with_constants(self, inputs):
        """The model call with every variable read from a constant of its value (Keras's `StatelessScope`
        serves a layer the values it maps a variable to)."""
        with keras.StatelessScope(state_mapping=[(variable, tf.constant(value)) for variable, value
                                                 in zip(self.model.variables, self.values)]):
            return self._call(inputs)

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
