"""The weights as constants of the serving graphs (`electra_tf.export.constants`), and exports that hold them."""

import numpy as np
import pytest
import tensorflow as tf

from electra_tf import ElectraConfig, ElectraForSequenceClassification
from electra_tf.export import constants as constants_module
from electra_tf.export import export_info, export_model
from electra_tf.export.compiled import CompiledCall
from electra_tf.export.constants import ConstantWeights, constant_weights
from electra_tf.text.tokenizer import WordPieceTokenizer

SPEC = {name: tf.TensorSpec([None, None], tf.int32) for name in ("input_ids", "attention_mask", "token_type_ids")}
VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "red", "blue", "green", "cat", "dog", "tree", "car"]


@pytest.fixture(scope="module")
def model():
    config = ElectraConfig(vocab_size=len(VOCABULARY), embedding_size=8, hidden_size=16, num_layers=1, num_heads=2,
                           intermediate_size=32, max_position_embeddings=32)
    return ElectraForSequenceClassification(config, num_labels=3)


def inputs():
    ids = np.random.default_rng(0).integers(5, len(VOCABULARY), size=(3, 5)).astype("int32")
    mask = np.ones_like(ids)
    mask[0, 3:] = 0
    return {"input_ids": tf.constant(ids), "attention_mask": tf.constant(mask), "token_type_ids": tf.zeros_like(ids)}


def test_the_graphs_hold_the_weights_values_and_give_the_models_outputs(model):
    expected = model(inputs(), training=False)["logits"]
    constants = constant_weights(model)
    plain, compiled = tf.function(constants), CompiledCall(model, {}, 32, call=constants)
    for call in (plain, compiled):
        np.testing.assert_allclose(call(inputs())["logits"], expected, rtol=1e-6, atol=1e-6)
    # What a SavedModel of each would hold: no variable (the model's own call reads every weight).
    assert plain.get_concrete_function(SPEC).variables == ()
    assert compiled.function.get_concrete_function(SPEC).variables == ()
    assert len(tf.function(lambda x: model(x, training=False)).get_concrete_function(SPEC).variables) == len(
        model.weights)
    # The values when `constant_weights` was called: a later change reaches only the variables' call.
    bias = model.weights[-1]  # the output layer's
    before = bias.numpy()
    try:
        bias.assign(before + 1.0)
        np.testing.assert_allclose(ConstantWeights(model)(inputs())["logits"], expected + 1.0, rtol=1e-5, atol=1e-5)
        for call in (plain, compiled):
            np.testing.assert_allclose(call(inputs())["logits"], expected, rtol=1e-6, atol=1e-6)
    finally:
        bias.assign(before)


def test_weights_above_the_limit_stay_variables_with_a_warning(model, monkeypatch):
    monkeypatch.setattr(constants_module, "MAX_CONSTANT_BYTES", 1000)
    with pytest.warns(UserWarning, match=r"keeps the weights as variables: .* GiB is more than"):
        assert constant_weights(model) is None


def test_an_export_with_variables_writes_each_weight_once(model, tmp_path):
    """Tracking the Keras model wrote every weight twice (keras-team/keras#23553)."""
    path = export_model(model, WordPieceTokenizer(VOCABULARY), str(tmp_path), max_seq_length=16,
                        constant_weights=False)
    stored = sum(int(np.prod(shape)) for key, shape in tf.train.list_variables(
        f"{path}/variables/variables") if key != "_CHECKPOINTABLE_OBJECT_GRAPH")
    assert stored == model.count_params() and not export_info(path)["constant_weights"]
