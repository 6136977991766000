"""transformers 4.x's TF ELECTRA calls, replayed: what `TFElectra*` returned for them, electra_tf returns.

The records (`tests/fixtures/model_calls/records.json`) were made by `tools/make_model_call_fixtures.py` with
transformers 4.57's TensorFlow classes on the committed tiny models of `tests/fixtures/hf/`: outputs with hidden
states and attentions, label forms the documentation uses (`[batch]`, `[batch, 1]`, a scalar), the loss shapes,
`from_pretrained` with new named labels, `predict`.
"""

import json
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import electra_tf

FIXTURES = Path(__file__).parents[1] / "fixtures"
RECORDS = json.loads((FIXTURES / "model_calls" / "records.json").read_text(encoding="utf-8"))
MODELS = [name for name in RECORDS if not name.startswith("_") and "class" in RECORDS[name]]


@pytest.fixture(scope="module")
def models():
    return {name: getattr(electra_tf, RECORDS[name]["class"]).from_pretrained(str(FIXTURES / "hf" / name))
            for name in MODELS}


def _inputs(record):
    return {key: tf.constant(value) for key, value in record["inputs"].items()}


@pytest.mark.parametrize("name", MODELS)
def test_outputs_hidden_states_and_attentions_are_transformers(models, name):
    record, model = RECORDS[name], models[name]
    outputs = model(_inputs(record), output_hidden_states=True, output_attentions=True)
    assert list(outputs)[:len(record["keys"])] == record["keys"]  # transformers' fields first, in its order
    for key in record["keys"]:
        expected, got = record["outputs"][key], outputs[key]
        if key in ("hidden_states", "attentions"):
            assert isinstance(got, tuple) and len(got) == len(expected)
        np.testing.assert_allclose(np.asarray(got, "float32"), np.asarray(expected, "float32"), atol=1e-4)
    assert len(model(_inputs(record), return_dict=False)) >= record["tuple_length"]
    assert list(model.predict(_inputs(record), verbose=0))[:len(record["predict_keys"])] == record["predict_keys"]


@pytest.mark.parametrize("name", [name for name in MODELS if RECORDS[name]["losses"]])
def test_losses_take_transformers_label_forms_and_give_its_shapes(models, name):
    record, model = RECORDS[name], models[name]
    for form, expected in record["losses"].items():
        inputs = _inputs(record)
        if form == "scalar":
            inputs = {key: value[:1] for key, value in inputs.items()}
        outputs = model(**inputs, **{key: tf.constant(value) for key, value in expected["labels"].items()})
        assert list(outputs)[:len(expected["keys"])] == expected["keys"], form  # (then outputs of ours)
        np.testing.assert_allclose(outputs.loss, expected["loss"], rtol=1e-4, atol=1e-5, err_msg=form)


def test_from_pretrained_with_new_named_labels_is_transformers():
    expected = RECORDS["from_pretrained_with_labels"]
    id2label = {int(i): name for i, name in expected["id2label"].items()}
    model = electra_tf.TFElectraForTokenClassification.from_pretrained(
        str(FIXTURES / "hf" / "discriminator"), num_labels=5, id2label=id2label, label2id=expected["label2id"],
        from_pt=True)
    config = model.config
    assert (config.num_labels, config.id2label, config.label2id) == (expected["num_labels"], id2label,
                                                                     expected["label2id"])
    record = RECORDS["discriminator"]
    assert list(model(_inputs(record)).logits.shape) == expected["logits_shape"]
    only_names = electra_tf.ElectraForSequenceClassification.from_pretrained(
        str(FIXTURES / "hf" / "discriminator"), id2label={0: "neg", 1: "neu", 2: "pos"})
    assert only_names.num_labels == 3 and only_names.label_names == ("neg", "neu", "pos")
    with pytest.raises(ValueError, match="num_labels=2 but id2label names 3 labels"):
        electra_tf.ElectraForSequenceClassification.from_pretrained(
            str(FIXTURES / "hf" / "discriminator"), num_labels=2, id2label={0: "neg", 1: "neu", 2: "pos"})


def test_config_fields_given_to_from_pretrained_change_the_config():
    model = electra_tf.ElectraForSequenceClassification.from_pretrained(
        str(FIXTURES / "hf" / "discriminator"), num_labels=2, hidden_dropout_prob=0.3,
        attention_probs_dropout_prob=0.0)
    assert (model.config.hidden_dropout, model.config.attention_dropout) == (0.3, 0.0)
