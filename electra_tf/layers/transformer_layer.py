"""One post-LN BERT encoder block, keras-hub's `TransformerEncoder` with two dropout rates.

BERT (and so ELECTRA and Hugging Face) has separate rates for the attention
probabilities and for the hidden activations; keras-hub's layer takes one rate
for both. This subclass sets the attention-probability rate after the parent
has built its `MultiHeadAttention`, and changes nothing else, so the weights
keep keras-hub's layout (query/key/value/output `EinsumDense` kernels of shape
`[hidden, heads, head_size]`, which reshape one-to-one onto the Hugging Face
and Google checkpoints).
"""

import keras
import keras_hub


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraTransformerLayer(keras_hub.layers.TransformerEncoder):
    """`TransformerEncoder` with `attention_dropout` for the attention probabilities.

    Example:
    >>> import numpy as np
    >>> layer = ElectraTransformerLayer(intermediate_dim=32, num_heads=2,
    ...                                 dropout=0.1, attention_dropout=0.0)
    >>> layer(np.zeros((1, 4, 16), "float32")).shape
    TensorShape([1, 4, 16])
    """

    def __init__(self, *args, attention_dropout=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.attention_dropout = self.dropout if attention_dropout is None else attention_dropout

    def build(self, inputs_shape):
        super().build(inputs_shape)
        # keras.layers.MultiHeadAttention keeps its rate in `_dropout` and
        # applies it through `_dropout_layer` (keras 3.12-3.16).
        attention = self._self_attention_layer
        attention._dropout = self.attention_dropout
        attention._dropout_layer.rate = self.attention_dropout

    def get_config(self):
        config = super().get_config()
        config["attention_dropout"] = self.attention_dropout
        return config
