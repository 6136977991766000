import keras
import numpy as np
import pytest

from electra_tf import ElectraForMultipleChoice, ElectraForQuestionAnswering, ElectraForSequenceClassification
from electra_tf.training.layerwise_decay import layerwise_lr_multipliers
from electra_tf.training.optimization import AdamW, create_optimizer


def _expected_depth(path, num_layers):
    if path.startswith(("embeddings/", "embeddings_project/")):
        return 0
    if path.startswith("transformer_layer_"):
        return int(path.split("/")[0].rsplit("_", 1)[1]) + 1
    return None  # the task head


@pytest.mark.parametrize("original", [False, True])
@pytest.mark.parametrize("cls", [ElectraForSequenceClassification, ElectraForQuestionAnswering,
                                 ElectraForMultipleChoice])
def test_every_variable_gets_the_expected_rate(tiny_config, cls, original):
    model = cls(tiny_config)
    rates = layerwise_lr_multipliers(model, decay=0.8, original_top_layer=original)
    assert set(rates) == {v.path for v in model.trainable_variables}
    top = tiny_config.num_layers + (2 if original else 1)
    heads = 0
    for path, rate in rates.items():
        depth = _expected_depth(path, tiny_config.num_layers)
        if depth is None:
            heads += 1
            assert rate == 1.0, path
        else:
            assert rate == pytest.approx(0.8 ** (top - depth)), path
    assert heads >= 2
    # The top transformer layer: 0.8 correctly, 0.8² with the original's quirk.
    top_layer = f"transformer_layer_{tiny_config.num_layers - 1}/feedforward_output_dense/kernel"
    assert rates[top_layer] == pytest.approx(0.64 if original else 0.8)


def test_layerwise_adamw_scales_each_variables_step(tiny_config, tiny_vocab):
    batch = tiny_vocab.batch(batch_size=4, seq_length=8)
    labels = np.array([0, 1, 0, 1])
    results = {}
    for name, decay in (("plain", 1.0), ("frozen_below_head", 1e-30)):
        keras.utils.set_random_seed(0)
        model = ElectraForSequenceClassification(tiny_config, head="original")
        start = {v.path: v.numpy().copy() for v in model.trainable_variables}
        rates = layerwise_lr_multipliers(model, decay=decay)
        optimizer = create_optimizer(1e-2, total_steps=10, warmup_steps=0, weight_decay=0.1, lr_multipliers=rates)
        assert isinstance(optimizer, AdamW) and optimizer.lr_multipliers == rates
        model.compile(optimizer=optimizer, loss={"logits": keras.losses.SparseCategoricalCrossentropy(True)})
        model.fit(batch, {"logits": labels}, epochs=2, verbose=0)
        results[name] = {v.path: np.abs(v.numpy() - start[v.path]).max() for v in model.trainable_variables}
    assert results["frozen_below_head"]["out_proj/kernel"] > 1e-3
    assert results["frozen_below_head"]["embeddings/word_embeddings/embeddings"] < 1e-12
    assert results["frozen_below_head"]["transformer_layer_1/feedforward_output_dense/kernel"] < 1e-12
    assert results["plain"]["transformer_layer_1/feedforward_output_dense/kernel"] > 1e-3


def test_layerwise_adamw_equals_adamw_at_decay_one_and_round_trips(tiny_config, tiny_vocab):
    batch, labels = tiny_vocab.batch(batch_size=4, seq_length=8), np.array([0, 1, 0, 1])
    weights = []
    for multipliers in (None, "ones"):
        keras.utils.set_random_seed(0)
        model = ElectraForSequenceClassification(tiny_config)
        rates = layerwise_lr_multipliers(model, decay=1.0) if multipliers else None
        model.compile(optimizer=create_optimizer(1e-2, 10, 2, weight_decay=0.1, lr_multipliers=rates),
                      loss={"logits": keras.losses.SparseCategoricalCrossentropy(True)})
        model.fit(batch, {"logits": labels}, epochs=3, verbose=0)
        weights.append(model.get_weights())
    for a, b in zip(*weights):
        np.testing.assert_allclose(a, b, atol=1e-6)
    restored = AdamW.from_config(model.optimizer.get_config())
    assert restored.lr_multipliers == model.optimizer.lr_multipliers


def test_a_variable_without_a_rate_is_an_error(tiny_config):
    model = ElectraForSequenceClassification(tiny_config)
    rates = layerwise_lr_multipliers(model)
    rates.pop("out_proj/kernel")
    with pytest.raises(ValueError, match="no learning-rate multiplier for \\['out_proj/kernel'\\]"):
        AdamW(lr_multipliers=rates, learning_rate=1e-3).build(model.trainable_variables)
    with pytest.raises(ValueError, match="adamw only"):
        create_optimizer(1e-3, 10, 1, name="lamb", lr_multipliers=rates)
