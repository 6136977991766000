import os

import keras
import numpy as np
import pytest
import tensorflow as tf
from scipy import stats

from electra_tf.layers.counter_dropout import CounterDropout, counter_dropout


def all_layers(layer):
    """Every layer inside `layer`, depth first (the pre-trainer's networks, their layers, theirs...)."""
    children = [value for value in vars(layer).values() if isinstance(value, keras.layers.Layer)]
    children += [child for value in vars(layer).values() if isinstance(value, (list, tuple))
                 for child in value if isinstance(child, keras.layers.Layer)]
    return [found for child in children for found in [child, *all_layers(child)]]


def test_masks_drop_at_the_rate_and_scale_the_rest():
    x = tf.ones([64, 1000])
    for rate in (0.1, 0.5):
        y = counter_dropout(x, rate, tf.constant([3, 4])).numpy()
        dropped = int((y == 0).sum())
        # Two-sided binomial test on 64,000 independent draws.
        assert stats.binomtest(dropped, y.size, rate).pvalue > 1e-3
        np.testing.assert_allclose(y[y != 0], 1 / (1 - rate), rtol=1e-6)
        # No structure along rows or columns (the 16-bit quarters of one draw are independent).
        per_column = (y == 0).mean(axis=0)
        assert stats.chisquare((y == 0).reshape(-1, 4).sum(axis=0)).pvalue > 1e-3
        assert per_column.std() < 3 * np.sqrt(rate * (1 - rate) / 64)


def test_the_same_seed_gives_the_same_mask_with_and_without_xla():
    x = tf.random.normal([3, 5, 7], seed=1)
    seed = tf.constant([11, 12], tf.int64)
    plain = counter_dropout(x, 0.2, seed)
    compiled = tf.function(lambda x, s: counter_dropout(x, 0.2, s), jit_compile=True)(x, seed)
    np.testing.assert_array_equal(plain, compiled)
    assert not np.array_equal(plain, counter_dropout(x, 0.2, tf.constant([11, 13], tf.int64)))


@pytest.mark.perf
def test_a_traced_dropout_is_a_few_nodes_and_draws_the_same_mask_for_static_and_dynamic_shapes():
    x, seed = tf.ones([2, 3, 5]), tf.constant([5, 6], tf.int64)  # 30 elements: the last draw is cut
    static = tf.function(lambda x, s: counter_dropout(x, 0.3, s)).get_concrete_function(x, seed)
    dynamic = tf.function(lambda x, s: counter_dropout(x, 0.3, s), input_signature=[
        tf.TensorSpec([None, None, 5]), tf.TensorSpec([2], tf.int64)])
    # The mask's ~80 integer ops are one call (a shorter tracing of a step with many dropouts).
    assert len(static.graph.as_graph_def().node) < 20
    np.testing.assert_array_equal(static(x, seed), dynamic(x, seed))
    np.testing.assert_array_equal(static(x, seed), counter_dropout(x, 0.3, seed))


def test_gradient_flows_through_kept_elements_only():
    x = tf.ones([8, 50])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = counter_dropout(x, 0.25, tf.constant([1, 1]))
        total = tf.reduce_sum(y)
    gradient = tape.gradient(total, x).numpy()
    np.testing.assert_allclose(gradient, y.numpy())


def test_pretraining_with_dropout_is_the_same_with_and_without_xla_and_saves_and_loads(tiny_config, tmp_path,
                                                                                       tiny_vocab):
    config = tiny_config.replace(hidden_dropout=0.1, attention_dropout=0.1)
    data = tf.data.Dataset.from_tensor_slices(tiny_vocab.batch(batch_size=8, seq_length=16, seed=8)).batch(4)
    losses = []
    for jit in (False, True):
        pretrainer = tiny_vocab.pretrainer(config, seed=3)
        pretrainer.compile(optimizer=keras.optimizers.Adam(1e-3), jit_compile=jit)
        losses.append(pretrainer.fit(data.repeat(2), epochs=1, verbose=0).history["loss"][0])
    assert losses[1] == pytest.approx(losses[0], rel=1e-5)
    no_dropout = tiny_vocab.pretrainer(tiny_config, seed=3)
    no_dropout.compile(optimizer=keras.optimizers.Adam(1e-3))
    assert no_dropout.fit(data.repeat(2), epochs=1, verbose=0).history["loss"][0] != pytest.approx(losses[0])

    dropouts = [layer for layer in all_layers(pretrainer) if isinstance(layer, keras.layers.Dropout)]
    assert dropouts and all(type(layer) is CounterDropout for layer in dropouts)  # built in, nothing swapped
    path = os.path.join(tmp_path, "pretrainer.keras")
    pretrainer.save(path)
    restored = keras.saving.load_model(path)
    batch = next(iter(data))
    np.testing.assert_allclose(restored(batch)["rtd_logits"], pretrainer(batch)["rtd_logits"], atol=1e-6)
