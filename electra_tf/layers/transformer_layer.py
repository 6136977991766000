"""One post-LN BERT encoder block, keras-hub's `TransformerEncoder` with two dropout rates and 2-D matmuls.

BERT (and so ELECTRA and Hugging Face) has separate rates for the attention
probabilities and for the hidden activations; keras-hub's layer takes one rate
for both. This subclass sets the attention-probability rate after the parent
has built its `MultiHeadAttention`, so the weights keep keras-hub's layout
(query/key/value/output `EinsumDense` kernels of shape `[hidden, heads,
head_size]`, which reshape one-to-one onto the Hugging Face and Google
checkpoints).

It also computes the block with the same layers and weights in the shape
TensorFlow's CPU graph rewrites match (see docs/results.md for what fires and
what it gains): every projection is one 2-D `MatMul` on `[batch·sequence,
hidden]` followed by its `BiasAdd` (Grappler's remapper fuses the pair into
`_FusedMatMul`; Keras's `Dense` on a 3-D input puts a `Reshape` between them,
and its `EinsumDense` runs a broadcast batch matmul whose kernel gradient is
one small matmul per sequence plus a sum), and the attention scores are
`matmul(q, k) · scale + mask bias` (one additive mask instead of Keras's two
`where`s around the softmax). No library offers the block in this shape;
`call(..., return_attention_scores=True)`, pre-LN blocks and a block quantized by
`model.quantize("int8")` (its `EinsumDense` kernels are int8 with scales, which
only the layers' own calls apply) take keras-hub's own path.
"""

import keras
import keras_hub
import tensorflow as tf

_MASKED = -1e9  # as Keras's masked softmax


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

    def call(self, inputs, padding_mask=None, attention_mask=None, training=None, return_attention_scores=False):
        quantized = self._self_attention_layer.query_dense.quantization_mode is not None
        if return_attention_scores or self.normalize_first or quantized:
            return super().call(inputs, padding_mask=padding_mask, attention_mask=attention_mask,
                                training=training, return_attention_scores=return_attention_scores)
        shape = tf.shape(inputs)
        width = inputs.shape[-1]
        x = tf.reshape(inputs, [-1, width])  # [batch·sequence, hidden]
        attended = self._attention(x, shape, self._mask_bias(padding_mask, attention_mask, x.dtype), training)
        x = self._self_attention_layer_norm(self._self_attention_dropout(attended, training=training) + x)
        hidden = self._feedforward_output_dense(self._feedforward_intermediate_dense(x))
        x = self._feedforward_layer_norm(self._feedforward_dropout(hidden, training=training) + x)
        return tf.reshape(x, shape)

    def _mask_bias(self, padding_mask, attention_mask, dtype):
        """0 where a query may attend, -1e9 where not: `[batch, 1, 1 or queries, keys]`, or None."""
        mask = None
        if padding_mask is not None:
            mask = tf.expand_dims(tf.cast(padding_mask, tf.bool), 1)  # not [:, None]: TFLite slices no bools
        if attention_mask is not None:
            attention_mask = tf.cast(attention_mask, tf.bool)
            mask = attention_mask if mask is None else mask & attention_mask
        if mask is None:
            return None
        return tf.where(mask, tf.zeros([], dtype), tf.constant(_MASKED, dtype))[:, None]

    def _attention(self, x, shape, mask_bias, training):
        """Multi-head self-attention on `x` `[batch·sequence, hidden]`, through the attention layer's weights."""
        attention = self._self_attention_layer
        heads, size = attention.num_heads, attention.key_dim

        def project(dense):  # [batch, heads, sequence, size]
            kernel = tf.reshape(tf.cast(dense.kernel, x.dtype), [-1, heads * size])
            y = tf.nn.bias_add(tf.matmul(x, kernel), tf.reshape(tf.cast(dense.bias, x.dtype), [-1]))
            return tf.transpose(tf.reshape(y, [shape[0], shape[1], heads, size]), [0, 2, 1, 3])

        query, key, value = (project(dense) for dense in
                             (attention.query_dense, attention.key_dense, attention.value_dense))
        scores = tf.matmul(query, key, transpose_b=True) * tf.constant(size ** -0.5, x.dtype)
        if mask_bias is not None:
            scores += mask_bias
        probabilities = attention._dropout_layer(tf.nn.softmax(scores), training=training)
        context = tf.reshape(tf.transpose(tf.matmul(probabilities, value), [0, 2, 1, 3]), [-1, heads * size])
        output = attention.output_dense
        kernel = tf.reshape(tf.cast(output.kernel, x.dtype), [heads * size, -1])
        return tf.nn.bias_add(tf.matmul(context, kernel), tf.cast(output.bias, x.dtype))

    def get_config(self):
        config = super().get_config()
        config["attention_dropout"] = self.attention_dropout
        return config
