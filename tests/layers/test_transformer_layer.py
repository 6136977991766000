"""`ElectraTransformerLayer`, our own block, computes what keras-hub's `TransformerEncoder` computes (which it
replaced): same weight layout and names, same seeded initial weights, same outputs and gradients."""
import keras
import keras_hub
import numpy as np
import pytest
import tensorflow as tf

from electra_tf.config import PretrainingConfig
from electra_tf.layers.transformer_layer import ElectraTransformerLayer
from electra_tf.training.shared_trace import share_traces

SETTINGS = dict(intermediate_dim=48, num_heads=3, dropout=0.1, activation="gelu", layer_norm_epsilon=1e-12,
                kernel_initializer=keras.initializers.TruncatedNormal(stddev=0.02), name="block")


def _pair(seed=0):
    """Ours and keras-hub's block, each built from the same global seed."""
    layers = []
    for make in (lambda: ElectraTransformerLayer(attention_dropout=0.1, **SETTINGS),
                 lambda: keras_hub.layers.TransformerEncoder(**SETTINGS)):
        keras.utils.set_random_seed(seed)
        layer = make()
        layer.build([None, 7, 24])
        layers.append(layer)
    return layers


def test_seeded_blocks_have_keras_hub_s_variables_and_initial_values():
    ours, theirs = _pair()
    assert [v.path for v in ours.weights] == [v.path for v in theirs.weights]
    assert ours.weights[0].path == "block/self_attention_layer/query/kernel"
    for a, b in zip(ours.weights, theirs.weights, strict=True):
        np.testing.assert_array_equal(a, b, err_msg=a.path)


@pytest.mark.parametrize("with_attention_mask", [False, True])
def test_outputs_and_gradients_equal_keras_hub_s_block(with_attention_mask):
    ours, theirs = _pair()
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(3, 7, 24)), tf.float32)
    padding = tf.constant([[1] * 7, [1] * 5 + [0] * 2, [1] * 2 + [0] * 5])
    attention = tf.constant(np.tril(np.ones((7, 7), "int32"))[None].repeat(3, 0)) if with_attention_mask else None
    for a, b in zip(ours.weights, theirs.weights, strict=True):  # random biases and LayerNorm parameters too
        value = rng.normal(scale=0.3, size=a.shape).astype("float32")
        a.assign(value)
        b.assign(value)
    upstream = tf.constant(rng.normal(size=(3, 7, 24)), tf.float32)

    def outputs_and_gradients(layer):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = layer(x, padding_mask=padding, attention_mask=attention, training=False)
            loss = tf.reduce_sum(y * upstream)
        return [y] + tape.gradient(loss, [x] + layer.trainable_variables)

    names = ["output", "input"] + [v.path for v in ours.trainable_variables]
    for name, a, b in zip(names, outputs_and_gradients(ours), outputs_and_gradients(theirs), strict=True):
        if name.endswith("key/bias"):  # 0 in exact arithmetic (softmax ignores it): round-off only
            assert np.abs(a).max() < 1e-5 and np.abs(b).max() < 1e-5
            continue
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5 * float(np.abs(b).max()), err_msg=name)


def test_dropout_rates_apply_apart_and_a_pre_ln_block_is_refused():
    layer = ElectraTransformerLayer(intermediate_dim=8, num_heads=2, dropout=0.0, attention_dropout=0.5)
    x = tf.random.normal([2, 5, 4], seed=1)
    layer(x)
    assert not np.allclose(layer(x, training=True), layer(x))  # only the probabilities are dropped
    assert ElectraTransformerLayer(intermediate_dim=8, num_heads=2, dropout=0.3).attention_dropout == 0.3
    with pytest.raises(ValueError, match="normalize_first"):
        ElectraTransformerLayer(intermediate_dim=8, num_heads=2, normalize_first=True)


def _stack(shared, seed=0):
    keras.utils.set_random_seed(seed)
    blocks = [ElectraTransformerLayer(attention_dropout=0.1, **{**SETTINGS, "name": f"block_{i}"}) for i in range(3)]
    for block in blocks:
        block.build([None, 7, 24])
    share_traces(keras.Sequential(blocks), shared)
    return blocks


def _traced_step(blocks, training=True):
    @tf.function(autograph=False)
    def step(x, padding):
        with tf.GradientTape() as tape:
            for block in blocks:
                x = block(x, padding_mask=padding, training=training)
            loss = tf.reduce_sum(x * x)
        return x, tape.gradient(loss, [v for b in blocks for v in b.trainable_variables])
    return step


@pytest.mark.perf
def test_blocks_sharing_one_trace_compute_what_each_computes_alone_with_the_same_masks_and_fewer_nodes():
    x = tf.constant(np.random.default_rng(0).normal(size=(2, 7, 24)), tf.float32)
    padding = tf.constant([[1] * 7, [1] * 4 + [0] * 3])
    results, nodes = [], []
    for shared in (False, True):
        blocks = _stack(shared)
        step = _traced_step(blocks)
        results.append([step(x, padding), step(x, padding)])  # the second step draws the next masks
        seeds = [v.numpy() for b in blocks for v in b.non_trainable_variables]
        nodes.append(len(step.get_concrete_function(x, padding).graph.get_operations()))
        results[-1].append(seeds)
    (alone, alone_seeds), (shared, shared_seeds) = [(r[:2], r[2]) for r in results]
    for (a_out, a_grads), (s_out, s_grads) in zip(alone, shared, strict=True):
        np.testing.assert_allclose(s_out, a_out, atol=1e-6)
        for a, s in zip(a_grads, s_grads, strict=True):
            np.testing.assert_allclose(s, a, atol=1e-6)
    assert not np.allclose(alone[0][0], alone[1][0])  # dropout on: the masks moved on between the steps
    np.testing.assert_array_equal(np.array(shared_seeds), np.array(alone_seeds))
    assert nodes[1] < nodes[0] / 2, nodes


@pytest.mark.parametrize("training", [1, np.True_, tf.constant(True)])
def test_any_truthy_training_value_takes_the_training_path_through_the_shared_trace(training):
    x = tf.constant(np.random.default_rng(0).normal(size=(2, 7, 24)), tf.float32)
    padding = tf.constant([[1] * 7, [1] * 4 + [0] * 3])
    expected = _traced_step(_stack(True))(x, padding)
    blocks = _stack(True)
    got = _traced_step(blocks, training)(x, padding)
    assert blocks[0].call.trace.function.experimental_get_tracing_count() == 1
    for a, b in zip(tf.nest.flatten(got), tf.nest.flatten(expected), strict=True):
        np.testing.assert_allclose(a, b, atol=1e-6)
    assert np.allclose(blocks[0](x, training=0), blocks[0](x, training=tf.constant(False)))  # inference: no dropout


@pytest.mark.perf
@pytest.mark.parametrize("jit_compile", [False, True])
def test_the_pretrainer_s_blocks_share_one_trace_per_network(jit_compile, tiny_config):
    from electra_tf.pretraining.pretrainer import ElectraPretrainer
    pretrainer = ElectraPretrainer(tiny_config, PretrainingConfig(max_seq_length=16), mask_token_id=4,
                                   special_token_ids=[0, 1, 2, 3])
    pretrainer.compile(optimizer="adam", jit_compile=jit_compile)
    blocks = [layer for network in (pretrainer.generator, pretrainer.discriminator) for layer in network.layers
              for layer in getattr(layer, "layers", [layer]) if isinstance(layer, ElectraTransformerLayer)]
    assert len(blocks) == 2 * tiny_config.num_layers
    assert len({id(block.call.trace) for block in blocks}) == 2


XLA_STEPS = """
import keras, numpy as np, tensorflow as tf
from electra_tf.layers.transformer_layer import ElectraTransformerLayer
from electra_tf.training.shared_trace import share_traces
blocks = [ElectraTransformerLayer(intermediate_dim=8, num_heads=2, dropout=0.1) for _ in range(2)]
x = np.ones((1, 3, 4), "float32")
model = keras.Sequential(blocks)
model(x)
share_traces(model)

@tf.function(jit_compile=True, autograph=False)
def step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x, training=True))
    return tape.gradient(loss, model.trainable_variables)

for _ in range(3):
    step(x)
"""


@pytest.mark.perf
def test_an_xla_step_through_a_shared_trace_compiles_once(tmp_path):
    # XLA's persistent cache writes one file per compilation: a step whose dropout seeds became compile-time
    # constants (TensorFlow's own transpose and concat gradients did that) would write one per step.
    import os
    import subprocess
    import sys
    cache = tmp_path / "xla_cache"
    cache.mkdir()
    env = {**os.environ, "TF_XLA_FLAGS": f"--tf_xla_persistent_cache_directory={cache}", "TF_CPP_MIN_LOG_LEVEL": "3"}
    result = subprocess.run([sys.executable, "-c", XLA_STEPS], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert len(list(cache.iterdir())) == 1
