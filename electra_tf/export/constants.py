"""A model's weights as constants of the graphs that call it, for an export (whose weights never change), so graph
optimisers fold once what depends only on them (docs/serving.md, "Weights as constants").

Example:
>>> import keras, numpy as np
>>> model = keras.Sequential([keras.Input([2]), keras.layers.Dense(1, kernel_initializer="ones")])
>>> call = constant_weights(model)
>>> traced = tf.function(call).get_concrete_function(tf.TensorSpec([None, 2]))
>>> traced.variables, float(traced(tf.ones([1, 2]))[0, 0])
((), 2.0)
"""

import math
import warnings

import keras
import tensorflow as tf

# The most weight bytes held as constants: half of what one protocol buffer (a saved graph) may hold.
MAX_CONSTANT_BYTES = 1 << 30


class ConstantWeights:
    """`model(inputs, training=False)` with every variable read from a constant of its value now."""

    def __init__(self, model):
        self.model = model
        # Read now: a read while tracing would list the variables as used by the traced function (a SavedModel
        # would then hold them too), even inside `tf.init_scope`.
        self.values = [variable.numpy() for variable in model.variables]

    def __call__(self, inputs):
        mapping = [(variable, tf.constant(value)) for variable, value in zip(self.model.variables, self.values)]
        with keras.StatelessScope(state_mapping=mapping):
            return self.model(inputs, training=False)


def constant_weights(model):
    """A `ConstantWeights` of `model`, or None (with a warning) when its weights exceed `MAX_CONSTANT_BYTES`."""
    size = sum(math.prod(variable.shape) * tf.as_dtype(variable.dtype).size for variable in model.variables)
    if size > MAX_CONSTANT_BYTES:
        warnings.warn(f"the export keeps the weights as variables: {size / 2 ** 30:.1f} GiB is more than the "
                      f"{MAX_CONSTANT_BYTES / 2 ** 30:.0f} GiB a graph holds as constants")
        return None
    return ConstantWeights(model)
