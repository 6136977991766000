"""`ElectraTransformerLayer` computes keras-hub's `TransformerEncoder` block with 2-D matmuls: same weights,
same outputs and gradients (the layer's own path against keras-hub's, on the same layer)."""
import keras_hub
import numpy as np
import pytest
import tensorflow as tf

from electra_tf.layers.transformer_layer import ElectraTransformerLayer


@pytest.mark.parametrize("with_attention_mask", [False, True])
def test_outputs_and_gradients_equal_keras_hub_s_block(with_attention_mask):
    layer = ElectraTransformerLayer(intermediate_dim=48, num_heads=3, dropout=0.1, attention_dropout=0.1,
                                    activation="gelu", layer_norm_epsilon=1e-12, name="block")
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(3, 7, 24)), tf.float32)
    padding = tf.constant([[1] * 7, [1] * 5 + [0] * 2, [1] * 2 + [0] * 5])
    attention = tf.constant(np.tril(np.ones((7, 7), "int32"))[None].repeat(3, 0)) if with_attention_mask else None
    layer(x, padding_mask=padding)
    assert [v.path for v in layer.weights][:2] == ["block/self_attention_layer/query/kernel",
                                                   "block/self_attention_layer/query/bias"]  # keras-hub's layout
    for variable in layer.weights:  # random biases and LayerNorm parameters too
        variable.assign(rng.normal(scale=0.3, size=variable.shape).astype("float32"))
    upstream = tf.constant(rng.normal(size=(3, 7, 24)), tf.float32)

    def outputs_and_gradients(call):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = call(x, padding_mask=padding, attention_mask=attention, training=False)
            loss = tf.reduce_sum(y * upstream)
        return [y] + tape.gradient(loss, [x] + layer.trainable_variables)

    ours = outputs_and_gradients(layer)
    theirs = outputs_and_gradients(lambda *a, **k: keras_hub.layers.TransformerEncoder.call(layer, *a, **k))
    names = ["output", "input"] + [v.path for v in layer.trainable_variables]
    for name, a, b in zip(names, ours, theirs, strict=True):
        if name.endswith("key/bias"):  # 0 in exact arithmetic (softmax ignores it): round-off only
            assert np.abs(a).max() < 1e-5 and np.abs(b).max() < 1e-5
            continue
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5 * float(np.abs(b).max()), err_msg=name)
