"""Folding the choices of a multiple-choice batch into the batch axis, and back.

Keras's `Reshape` keeps the batch axis; here it changes, hence this small layer.

Example:
>>> import numpy as np
>>> ChoiceReshape()(np.zeros((2, 4, 7), "int32")).shape
TensorShape([8, 7])
>>> ChoiceReshape(num_choices=4)(np.zeros((8, 1), "float32")).shape
TensorShape([2, 4])
"""

import keras


@keras.saving.register_keras_serializable(package="electra_tf")
class ChoiceReshape(keras.layers.Layer):
    """Folds `[batch, choices, sequence]` into `[batch * choices, sequence]`, or, with
    `num_choices`, unfolds `[batch * choices, 1]` into `[batch, choices]`."""

    def __init__(self, num_choices=None, **kwargs):
        super().__init__(**kwargs)
        self.num_choices = num_choices

    def call(self, inputs):
        if self.num_choices is None:
            return keras.ops.reshape(inputs, (-1, keras.ops.shape(inputs)[-1]))
        return keras.ops.reshape(inputs, (-1, self.num_choices))

    def compute_output_shape(self, input_shape):
        return (None, input_shape[-1] if self.num_choices is None else self.num_choices)

    def get_config(self):
        return {**super().get_config(), "num_choices": self.num_choices}
