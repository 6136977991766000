"""The activations a config's `hidden_act` may name: "gelu" (exact, BERT's and ELECTRA's), "gelu_approximate"
(tanh, Hugging Face's `gelu_new`), both registered so saved models refer to them, and Keras's "relu".

Example:
>>> import numpy as np
>>> round(float(keras.activations.get(activation("gelu"))(np.float32(1.0))), 4)
0.8413
>>> round(float(keras.activations.get(activation("gelu_approximate"))(np.float32(1.0))), 4)
0.8412
"""

import keras

_SQRT_HALF = 0.7071067811865476


@keras.saving.register_keras_serializable(package="electra_tf")
def gelu_erf(x):
    """Exact GELU through `erf`, as the original code: Keras's "gelu" (through `erfc`, to 1e-6) is slower on CPU."""
    return 0.5 * x * (1.0 + keras.ops.erf(x * _SQRT_HALF))


@keras.saving.register_keras_serializable(package="electra_tf")
def gelu_approximate(x):
    """GELU with the tanh approximation."""
    return keras.activations.gelu(x, approximate=True)


def activation(hidden_act):
    """The Keras activation for `hidden_act`."""
    return {"gelu": gelu_erf, "gelu_approximate": gelu_approximate}.get(hidden_act, hidden_act)
