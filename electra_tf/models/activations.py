"""The activations a config's `hidden_act` may name, as Keras activation identifiers.

"gelu" is the exact (erf) GELU of BERT, ELECTRA and Hugging Face (Keras's
default for "gelu"); "gelu_approximate" is the tanh approximation (Hugging
Face's `gelu_new`), which Keras has under no name of its own: it is a
registered function here, so saved models refer to it; "relu" is Keras's.

Example:
>>> import numpy as np
>>> round(float(keras.activations.get(activation("gelu_approximate"))(np.float32(1.0))), 4)
0.8412
"""

import keras


@keras.saving.register_keras_serializable(package="electra_tf")
def gelu_approximate(x):
    """GELU with the tanh approximation."""
    return keras.activations.gelu(x, approximate=True)


def activation(hidden_act):
    """The Keras activation for `hidden_act`: a name Keras knows, or the registered `gelu_approximate`."""
    return gelu_approximate if hidden_act == "gelu_approximate" else hidden_act
