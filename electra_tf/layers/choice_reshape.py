"""Folding the choices of a multiple-choice batch into the batch axis, and back (Keras's `Reshape` keeps the batch
axis).

Example:
>>> import numpy as np
>>> ChoiceReshape()(np.zeros((2, 4, 7), "int32")).shape
TensorShape([8, 7])
>>> ChoiceReshape(num_choices=4)(np.zeros((8, 1), "float32")).shape
TensorShape([2, 4])
>>> ChoiceReshape(unfold=True)(np.zeros((6, 1), "float32"), like=np.zeros((2, 3, 7), "int32")).shape
TensorShape([2, 3])
"""

import keras


@keras.saving.register_keras_serializable(package="electra_tf")
class ChoiceReshape(keras.layers.Layer):
    """Folds `[batch, choices, sequence]` into `[batch * choices, sequence]`; or unfolds `[batch * choices, 1]`
    into `[batch, choices]`, with `num_choices` choices, or (`unfold=True`) as many as `like` (the
    `[batch, choices, sequence]` inputs) has."""

    def __init__(self, num_choices=None, unfold=False, **kwargs):
        super().__init__(**kwargs)
        self.num_choices = num_choices
        self.unfold = unfold or num_choices is not None

    def call(self, inputs, like=None):
        if not self.unfold:
            return keras.ops.reshape(inputs, (-1, keras.ops.shape(inputs)[-1]))
        if self.num_choices is None:
            return keras.ops.reshape(inputs, keras.ops.shape(like)[:2])
        return keras.ops.reshape(inputs, (-1, self.num_choices))

    def compute_output_shape(self, inputs_shape, like_shape=None):
        if not self.unfold:
            return (None, inputs_shape[-1])
        return (None, self.num_choices if self.num_choices is not None else like_shape[1])

    def get_config(self):
        return {**super().get_config(), "num_choices": self.num_choices, "unfold": self.unfold}
