"""One post-LN BERT encoder block (our own layer, Model Garden's `TransformerEncoderBlock` shape), written in the
shape TensorFlow's CPU graph rewrites fuse, with the weight layout of the keras-hub `TransformerEncoder` it replaced
so that every checkpoint format loads unchanged (docs/development.md).
"""

import math

import keras
import tensorflow as tf

from electra_tf.layers.counter_dropout import CounterDropout

_MASKED = -1e9  # as Keras's masked softmax


def _project(dense, rows, inputs_shape):
    """`dense` (an `EinsumDense`) on `rows` `[n, k]` as one 2-D `MatMul` and its `BiasAdd` (a quantized layer: its
    own call, which applies the int8 scales)."""
    if dense.quantization_mode is not None:
        outputs = dense(tf.reshape(rows, inputs_shape))
        return tf.reshape(outputs, [-1, math.prod(outputs.shape[2:])])
    kernel = tf.reshape(tf.cast(dense.kernel, rows.dtype), [rows.shape[-1], -1])
    bias = tf.cast(dense.bias, rows.dtype)
    return tf.nn.bias_add(tf.matmul(rows, kernel), bias if bias.shape.rank == 1 else tf.reshape(bias, [-1]))


def is_training(training):
    """Keras's `training` argument as a bool: any truthy value (`True`, `1`, a constant tensor) is training."""
    value = tf.get_static_value(training)
    return bool(training if value is None else value)


def _clone(initializer):
    """A fresh copy of `initializer` (an unseeded one draws its own seed, as keras-hub's and Keras's layers do)."""
    if isinstance(initializer, keras.initializers.Initializer):
        return initializer.__class__.from_config(initializer.get_config())
    return initializer


@keras.saving.register_keras_serializable(package="electra_tf")
class SelfAttention(keras.layers.Layer):
    """Multi-head self-attention on `[batch·sequence, hidden]` rows, holding its weights as
    `keras.layers.MultiHeadAttention` does.

    Example:
    >>> import numpy as np
    >>> layer = SelfAttention(num_heads=2, key_dim=4)
    >>> layer.build([None, 8])
    >>> layer(np.zeros((6, 8), "float32"), shape=[2, 3], mask_bias=None).shape
    TensorShape([6, 8])
    """

    def __init__(self, num_heads, key_dim, dropout=0.0, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", **kwargs):
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.key_dim = key_dim
        self.dropout = dropout
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)

    def _dense(self, equation, output_shape, bias_axes, name):
        return keras.layers.EinsumDense(
            equation, output_shape=output_shape, bias_axes=bias_axes, dtype=self.dtype_policy, name=name,
            kernel_initializer=_clone(self.kernel_initializer), bias_initializer=_clone(self.bias_initializer))

    def build(self, rows_shape):
        width = rows_shape[-1]
        heads, size = self.num_heads, self.key_dim
        projected = [None, None, width]
        self._query_dense, self._key_dense, self._value_dense = (
            self._dense("abc,cde->abde", [None, heads, size], "de", name) for name in ("query", "key", "value"))
        for dense in (self._query_dense, self._key_dense, self._value_dense):
            dense.build(projected)
        self._dropout_layer = CounterDropout(self.dropout, dtype=self.dtype_policy)
        self._output_dense = self._dense("abcd,cde->abe", [None, width], "e", "attention_output")
        self._output_dense.build([None, None, heads, size])

    # `.keras` files name these sub-layers by their public names, as MultiHeadAttention's.
    @property
    def query_dense(self):
        return self._query_dense

    @property
    def key_dense(self):
        return self._key_dense

    @property
    def value_dense(self):
        return self._value_dense

    @property
    def output_dense(self):
        return self._output_dense

    def call(self, rows, shape, mask_bias, training=None, return_attention_scores=False):
        """`rows` `[batch·sequence, hidden]`, `shape` `[batch, sequence]`, `mask_bias` added to the scores; with
        `return_attention_scores` (Keras's `MultiHeadAttention` argument) also the attention probabilities,
        `[batch, heads, queries, keys]`."""
        heads, size = self.num_heads, self.key_dim
        training = is_training(training)
        qkv = (self._query_dense, self._key_dense, self._value_dense)
        if self._query_dense.quantization_mode is None:
            kernel = tf.stack([tf.reshape(tf.cast(dense.kernel, rows.dtype), [-1, heads * size]) for dense in qkv], 1)
            bias = tf.stack([tf.reshape(tf.cast(dense.bias, rows.dtype), [-1]) for dense in qkv])
            projected = tf.nn.bias_add(tf.matmul(rows, tf.reshape(kernel, [rows.shape[-1], -1])),
                                       tf.reshape(bias, [-1]))
        else:
            projected = tf.stack([_project(dense, rows, [1, -1, rows.shape[-1]]) for dense in qkv], 1)
        projected = tf.reshape(projected, [shape[0], shape[1], 3, heads, size])
        query, key, value = tf.unstack(tf.einsum("bsphd->pbhsd", projected))  # [batch, heads, sequence, size] each
        scores = tf.matmul(query, key, transpose_b=True) * tf.constant(size ** -0.5, rows.dtype)
        if mask_bias is not None:
            scores += mask_bias
        probabilities = tf.nn.softmax(scores)
        context = tf.matmul(self._dropout_layer(probabilities, training=training), value)
        context = tf.einsum("bhsd->bshd", context)  # [batch, sequence, heads, size]
        attended = _project(self._output_dense, tf.reshape(context, [-1, heads * size]), [1, -1, heads, size])
        return (attended, probabilities) if return_attention_scores else attended

    def get_config(self):
        return {**super().get_config(), "num_heads": self.num_heads, "key_dim": self.key_dim,
                "dropout": self.dropout,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "bias_initializer": keras.initializers.serialize(self.bias_initializer)}


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraTransformerLayer(keras.layers.Layer):
    """A post-LN transformer encoder block with `dropout` on hidden states and `attention_dropout` on probabilities.

    `normalize_first` must be False (accepted so configs saved by the keras-hub layer load).

    Example:
    >>> import numpy as np
    >>> layer = ElectraTransformerLayer(intermediate_dim=32, num_heads=2,
    ...                                 dropout=0.1, attention_dropout=0.0)
    >>> layer(np.zeros((1, 4, 16), "float32")).shape
    TensorShape([1, 4, 16])
    """

    def __init__(self, intermediate_dim, num_heads, dropout=0.0, attention_dropout=None, activation="relu",
                 layer_norm_epsilon=1e-5, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 normalize_first=False, **kwargs):
        if normalize_first:
            raise ValueError("ElectraTransformerLayer is a post-LN block: normalize_first must be False")
        super().__init__(**kwargs)
        self.intermediate_dim = intermediate_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.attention_dropout = dropout if attention_dropout is None else attention_dropout
        self.activation = keras.activations.get(activation)
        self.layer_norm_epsilon = layer_norm_epsilon
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)

    def build(self, inputs_shape):
        width = inputs_shape[-1]
        if width % self.num_heads:
            raise ValueError(f"hidden width {width} does not divide into {self.num_heads} heads")
        rows = [None, width]
        self._self_attention_layer = SelfAttention(
            self.num_heads, width // self.num_heads, dropout=self.attention_dropout,
            kernel_initializer=_clone(self.kernel_initializer), bias_initializer=_clone(self.bias_initializer),
            dtype=self.dtype_policy, name="self_attention_layer")
        self._self_attention_layer.build(rows)
        self._self_attention_layer_norm = self._layer_norm("self_attention_layer_norm", rows)
        self._self_attention_dropout = CounterDropout(self.dropout, dtype=self.dtype_policy,
                                                      name="self_attention_dropout")
        self._feedforward_layer_norm = self._layer_norm("feedforward_layer_norm", rows)
        self._feedforward_intermediate_dense = self._dense(
            self.intermediate_dim, self.activation, "feedforward_intermediate_dense", rows)
        self._feedforward_output_dense = self._dense(
            width, None, "feedforward_output_dense", [None, self.intermediate_dim])
        self._feedforward_dropout = CounterDropout(self.dropout, dtype=self.dtype_policy,
                                                   name="feedforward_dropout")

    def _layer_norm(self, name, shape):
        layer = keras.layers.LayerNormalization(epsilon=self.layer_norm_epsilon, dtype=self.dtype_policy, name=name)
        layer.build(shape)
        return layer

    def _dense(self, units, activation, name, shape):
        layer = keras.layers.Dense(units, activation=activation, kernel_initializer=_clone(self.kernel_initializer),
                                   bias_initializer=_clone(self.bias_initializer), dtype=self.dtype_policy, name=name)
        layer.build(shape)
        return layer

    def call(self, inputs, padding_mask=None, attention_mask=None, training=None, return_attention_scores=False):
        training = is_training(training)
        shape = tf.shape(inputs)
        x = tf.reshape(inputs, [-1, inputs.shape[-1]])  # [batch·sequence, hidden]
        attended = self._self_attention_layer(x, shape=shape[:2], mask_bias=self._mask_bias(
            padding_mask, attention_mask, x.dtype), training=training, return_attention_scores=return_attention_scores)
        if return_attention_scores:
            attended, probabilities = attended
        x = self._self_attention_layer_norm(self._self_attention_dropout(attended, training=training) + x)
        hidden = self._feedforward_output_dense(self._feedforward_intermediate_dense(x))
        x = self._feedforward_layer_norm(self._feedforward_dropout(hidden, training=training) + x)
        return (tf.reshape(x, shape), probabilities) if return_attention_scores else tf.reshape(x, shape)

    @staticmethod
    def _mask_bias(padding_mask, attention_mask, dtype):
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

    def compute_output_spec(self, inputs, padding_mask=None, attention_mask=None, training=None,
                            return_attention_scores=False):
        outputs = keras.KerasTensor(inputs.shape, inputs.dtype)
        if not return_attention_scores:
            return outputs
        batch, sequence = inputs.shape[0], inputs.shape[1]
        return outputs, keras.KerasTensor((batch, self.num_heads, sequence, sequence), inputs.dtype)

    def get_config(self):
        return {**super().get_config(), "intermediate_dim": self.intermediate_dim, "num_heads": self.num_heads,
                "dropout": self.dropout, "attention_dropout": self.attention_dropout,
                "activation": keras.activations.serialize(self.activation),
                "layer_norm_epsilon": self.layer_norm_epsilon,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "bias_initializer": keras.initializers.serialize(self.bias_initializer)}
