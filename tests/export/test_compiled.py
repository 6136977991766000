"""`CompiledCall(weights_as_constants=True)`: the weights compiled in as constants, the outputs unchanged."""

import numpy as np
import pytest
import tensorflow as tf

from electra_tf import ElectraConfig, ElectraForSequenceClassification
from electra_tf.export import compiled as compiled_module
from electra_tf.export.compiled import CompiledCall

SPEC = {name: tf.TensorSpec([None, None], tf.int32) for name in ("input_ids", "attention_mask", "token_type_ids")}


@pytest.fixture(scope="module")
def model():
    config = ElectraConfig(vocab_size=12, embedding_size=8, hidden_size=16, num_layers=1, num_heads=2,
                           intermediate_size=32, max_position_embeddings=32)
    return ElectraForSequenceClassification(config, num_labels=3)


def inputs(rows=3, length=5):
    ids = np.random.default_rng(0).integers(5, 12, size=(rows, length)).astype("int32")
    mask = np.ones_like(ids)
    mask[0, 3:] = 0
    return {"input_ids": tf.constant(ids), "attention_mask": tf.constant(mask), "token_type_ids": tf.zeros_like(ids)}


def test_the_weights_are_constants_of_the_program_and_the_outputs_those_of_the_model(model):
    frozen, variable = (CompiledCall(model, {}, 32, weights_as_constants=flag) for flag in (True, False))
    expected = model(inputs(), training=False)["logits"]
    for call in (frozen, variable):
        np.testing.assert_allclose(call(inputs())["logits"], expected, rtol=1e-6, atol=1e-6)
    # What a SavedModel of each would hold: no variable for the constants' program, every weight for the other.
    assert frozen.function.get_concrete_function(SPEC).variables == ()
    assert len(variable.function.get_concrete_function(SPEC).variables) == len(model.weights)
    # The constants are the weights' values when the call was made: a later change reaches only the variables.
    bias = model.weights[-1]  # the output layer's
    before = bias.numpy()
    try:
        bias.assign(before + 1.0)
        np.testing.assert_allclose(frozen(inputs())["logits"], expected, rtol=1e-6, atol=1e-6)
        assert not np.allclose(variable(inputs())["logits"], expected, atol=1e-3)
    finally:
        bias.assign(before)


def test_weights_above_the_limit_stay_variables_with_a_warning(model, monkeypatch):
    monkeypatch.setattr(compiled_module, "MAX_CONSTANT_BYTES", 1000)
    with pytest.warns(UserWarning, match=r"keeps the weights as variables: .* GiB is more than"):
        call = CompiledCall(model, {}, 32, weights_as_constants=True)
    assert not call.weights_as_constants and call.values is None
    np.testing.assert_allclose(call(inputs())["logits"], model(inputs(), training=False)["logits"], atol=1e-6)
