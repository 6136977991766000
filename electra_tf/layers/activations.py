"""The activations a config's `hidden_act` may name, as Keras activation identifiers.

"gelu" is the exact GELU of BERT, ELECTRA and Hugging Face, written as the
original release writes it: `0.5·x·(1 + erf(x/√2))`. "gelu_approximate" is
the tanh approximation (Hugging Face's `gelu_new`). Both are registered
functions, so saved models refer to them; "relu" is Keras's.

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
    """Exact GELU through `erf`, as the original BERT and ELECTRA code.

    Keras's "gelu" is the same function computed through `erfc`, which
    TensorFlow's CPU kernels do not vectorise, so this one is faster (docs/results.md
    has the figures). The two agree to 1e-6 at fp32.
    """
    return 0.5 * x * (1.0 + keras.ops.erf(x * _SQRT_HALF))


@keras.saving.register_keras_serializable(package="electra_tf")
def gelu_approximate(x):
    """GELU with the tanh approximation."""
    return keras.activations.gelu(x, approximate=True)


def activation(hidden_act):
    """The Keras activation for `hidden_act`: Keras's "relu", or one of the registered GELUs."""
    return {"gelu": gelu_erf, "gelu_approximate": gelu_approximate}.get(hidden_act, hidden_act)
