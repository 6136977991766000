"""Every model called and trained as transformers' TF ELECTRA models were (`electra_tf.transformers.calls`)."""

import logging
import re
from collections.abc import Mapping
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf

from electra_tf import (
    ElectraConfig,
    ElectraForMaskedLM,
    ElectraForMultipleChoice,
    ElectraForPreTraining,
    ElectraForQuestionAnswering,
    ElectraForSequenceClassification,
    ElectraForTokenClassification,
    ElectraModel,
)
from electra_tf.transformers import losses as head_losses
from electra_tf.transformers.outputs import ModelOutput

CONFIG = ElectraConfig(vocab_size=40, embedding_size=8, hidden_size=16, num_layers=2, num_heads=2,
                       intermediate_size=32, hidden_dropout=0.0, attention_dropout=0.0)
IDS = np.array([[2, 7, 9, 11, 3, 0], [2, 5, 3, 8, 6, 3]], "int64")  # int64, as transformers' tokenizers give them
MASK = np.array([[1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1]], "int64")
TYPES = np.array([[0, 0, 0, 0, 0, 0], [0, 0, 0, 1, 1, 1]], "int64")
HEADS = {
    "encoder": lambda: ElectraModel(CONFIG),
    "discriminator": lambda: ElectraForPreTraining(CONFIG),
    "generator": lambda: ElectraForMaskedLM(CONFIG),
    "classification": lambda: ElectraForSequenceClassification(CONFIG, num_labels=3),
    "tagging": lambda: ElectraForTokenClassification(CONFIG, num_labels=4),
    "qa": lambda: ElectraForQuestionAnswering(CONFIG, head="huggingface"),
    "qa_original": lambda: ElectraForQuestionAnswering(CONFIG, beam_size=2),
    "multiple_choice": lambda: ElectraForMultipleChoice(CONFIG, num_choices=2),
}
LABELS = {
    "discriminator": {"labels": (IDS % 2).astype("int64")},
    "generator": {"labels": np.where(MASK == 1, IDS, -100)},
    "classification": {"labels": np.array([2, 0])},
    "tagging": {"labels": np.where(MASK == 1, IDS % 4, -100)},
    "qa": {"start_positions": np.array([1, 3]), "end_positions": np.array([2, 9])},  # 9: clamped and ignored
    "multiple_choice": {"labels": np.array([1, 0])},
}


class Encoding(Mapping):
    """A `BatchEncoding`-like mapping (not a dict) with attribute access."""

    def __init__(self, **values):
        self._values = values

    def __getitem__(self, key):
        return self._values[key]

    def __iter__(self):
        return iter(self._values)

    def __len__(self):
        return len(self._values)

    def __getattr__(self, name):
        return self._values[name]


@pytest.fixture(scope="module")
def models():
    keras.utils.set_random_seed(0)
    return {name: make() for name, make in HEADS.items()}


def _inputs(name, **values):
    """The inputs for head `name` (multiple choice repeats each row as its 2 choices)."""
    return {key: np.stack([value, value], 1) if name == "multiple_choice" else value for key, value in values.items()}


def _main(outputs):
    return outputs["logits"] if "logits" in outputs else outputs.get("start_logits", outputs.get("last_hidden_state"))


@pytest.mark.parametrize("name", list(HEADS))
def test_every_call_form_gives_the_dict_call_s_outputs(models, name):
    model = models[name]
    full = _inputs(name, input_ids=IDS, attention_mask=MASK, token_type_ids=TYPES)
    expected = _main(model(full))
    assert isinstance(model(full), ModelOutput) and isinstance(model(full), dict)
    rest = {key: value for key, value in full.items() if key != "input_ids"}
    for outputs in (model(**full), model(Encoding(**full)), model(full["input_ids"], **rest),
                    model(tf.constant(full["input_ids"]), training=False, **rest)):
        np.testing.assert_allclose(_main(outputs), expected, atol=1e-6)
    # transformers' defaults: a mask of ones, types of zeros
    plain = _inputs(name, input_ids=IDS, attention_mask=np.ones_like(IDS), token_type_ids=np.zeros_like(IDS))
    np.testing.assert_allclose(_main(model(plain["input_ids"])), _main(model(plain)), atol=1e-6)
    np.testing.assert_allclose(_main(model({"input_ids": plain["input_ids"]})), _main(model(plain)), atol=1e-6)


@pytest.mark.parametrize("name", list(LABELS))
def test_labels_give_the_head_s_loss_first(models, name):
    model = models[name]
    inputs = _inputs(name, input_ids=IDS, attention_mask=MASK, token_type_ids=TYPES)
    outputs = model(**inputs, **LABELS[name])
    per_example = name in ("classification", "qa", "multiple_choice")  # transformers' TF shapes: [batch] or [1]
    assert list(outputs)[0] == "loss" and outputs[0] is outputs.loss
    assert outputs.loss.shape == ((len(IDS),) if per_example else (1,))
    expected = type(model).head_loss(model(inputs), LABELS[name], model.complete_inputs(inputs))
    np.testing.assert_allclose(outputs.loss, expected, rtol=1e-6)
    in_mapping = model({**inputs, **LABELS[name]})  # the labels in the features, as a dataset yields them
    np.testing.assert_allclose(in_mapping.loss, outputs.loss, rtol=1e-6)


def test_outputs_read_by_attribute_key_and_position_in_transformers_order(models):
    model = models["discriminator"]
    outputs = model(IDS, labels=LABELS["discriminator"]["labels"], output_hidden_states=True)
    # transformers' fields in its order (TFElectraForPreTrainingOutput), then ours
    assert list(outputs) == ["loss", "logits", "hidden_states", "last_hidden_state"]
    assert outputs[1] is outputs.logits is outputs["logits"] and len(outputs) == 4
    assert outputs.attentions is None and model(IDS).loss is None  # fields not produced read as None
    assert outputs.to_tuple() == tuple(outputs.values())
    assert isinstance(model(IDS, return_dict=False), tuple)
    with pytest.raises(AttributeError, match="no 'start_logits'"):
        outputs.start_logits
    qa = models["qa"](IDS, **LABELS["qa"])
    assert list(qa)[:3] == ["loss", "start_logits", "end_logits"]


@pytest.mark.parametrize("name", ["encoder", "classification", "multiple_choice"])
def test_hidden_states_on_demand_are_those_of_a_model_built_with_them(models, name, tmp_path):
    model = models[name]
    inputs = _inputs(name, input_ids=IDS, attention_mask=MASK, token_type_ids=TYPES)
    outputs = model(inputs, output_hidden_states=True)
    assert isinstance(outputs.hidden_states, tuple) and len(outputs.hidden_states) == CONFIG.num_layers + 1
    np.testing.assert_allclose(_main(outputs), _main(model(inputs)), atol=1e-6)
    built_with = ElectraModel(CONFIG, output_hidden_states=True)
    built_with.set_weights(model.backbone.get_weights() if name != "encoder" else model.get_weights())
    folded = {key: np.reshape(value, (-1, value.shape[-1])) for key, value in inputs.items()}
    stacked = built_with.predict(folded, verbose=0)["hidden_states"]  # built with them: stacked in Keras's steps
    assert stacked.shape == (len(folded["input_ids"]), CONFIG.num_layers + 1, IDS.shape[1], CONFIG.hidden_size)
    assert len(built_with(folded).hidden_states) == CONFIG.num_layers + 1  # and a tuple in an eager call
    for layer, states in enumerate(outputs.hidden_states):
        np.testing.assert_allclose(states, stacked[:, layer], atol=1e-5)
    assert "hidden_states" not in built_with(folded, output_hidden_states=False)
    model.save(tmp_path / "model.keras")  # the second graph is not saved, and changes nothing saved
    loaded = keras.saving.load_model(tmp_path / "model.keras")
    assert len(loaded.weights) == len(model.weights)
    np.testing.assert_allclose(loaded(inputs, output_hidden_states=True).hidden_states[-1], outputs.hidden_states[-1],
                               atol=1e-6)


def test_bad_calls_are_refused_as_transformers_refuses_them(models, caplog):
    with pytest.raises(TypeError, match="unexpected keyword argument 'labels'"):
        models["encoder"](IDS, labels=IDS)
    with pytest.raises(TypeError, match="unexpected keyword argument 'end_positions' .head='original' computes no"):
        models["qa_original"](IDS, end_positions=np.array([1, 2]))
    with pytest.raises(TypeError, match="end_positions missing"):
        models["qa"](IDS, start_positions=np.array([1, 2]))
    with pytest.raises(TypeError, match="'attention_mask' twice"):
        models["encoder"]({"input_ids": IDS, "attention_mask": MASK}, attention_mask=MASK)
    with caplog.at_level(logging.WARNING, logger="electra_tf"):
        models["encoder"]({"input_ids": IDS, "special_tokens_mask": MASK})
    assert "takes no special_tokens_mask: ignored" in caplog.text


def _log_softmax(logits):
    logits = logits - logits.max(-1, keepdims=True)
    return logits - np.log(np.exp(logits).sum(-1, keepdims=True))


def _bce(logits, labels):
    return np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))


def test_losses_are_transformers_formulas():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(3, 5, 4)).astype("float32")
    tags = np.array([[0, 1, -100, 3, 2], [-100] * 5, [1, 1, 1, -100, 0]])
    active = tags != -100
    picked = np.take_along_axis(_log_softmax(logits), np.where(active, tags, 0)[..., None], -1)[..., 0]
    np.testing.assert_allclose(head_losses.token_classification({"logits": logits}, {"labels": tags}, {}),
                               [-picked[active].mean()], rtol=1e-5)
    sentence = logits[:, 0]
    classes = np.array([3, 0, 1])
    np.testing.assert_allclose(
        head_losses.sequence_classification({"logits": sentence}, {"labels": classes}, {}),
        -_log_softmax(sentence)[np.arange(3), classes], rtol=1e-5)
    multi_hot = np.array([[1, 0, 0, 1], [0, 0, 0, 0], [1, 1, 1, 0]], "float32")
    np.testing.assert_allclose(
        head_losses.sequence_classification({"logits": sentence}, {"labels": multi_hot}, {}),
        _bce(sentence, multi_hot).mean(-1), rtol=1e-5)
    scores = np.array([0.5, -1.0, 2.0], "float32")
    np.testing.assert_allclose(
        head_losses.sequence_classification({"logits": sentence[:, :1]}, {"labels": scores}, {}),
        (sentence[:, 0] - scores) ** 2, rtol=1e-5)
    start, end = logits[..., 0], logits[..., 1]  # [3, 5]
    starts, ends = np.array([1, -2, 7]), np.array([4, 2, 3])  # clamped to [0, 5]: -2 -> 0; 7 -> 5, ignored
    ce_start = np.append(-_log_softmax(start)[[0, 1], [1, 0]], 0.0)  # the ignored position counts 0
    ce_end = -_log_softmax(end)[np.arange(3), ends]
    np.testing.assert_allclose(
        head_losses.question_answering({"start_logits": start, "end_logits": end},
                                       {"start_positions": starts, "end_positions": ends}, {}),
        (ce_start + ce_end) / 2, rtol=1e-5)
    replaced = (rng.random((3, 5)) < 0.3).astype("int64")
    mask = np.array([[1, 1, 1, 0, 0], [1] * 5, [1, 1, 0, 0, 0]])
    np.testing.assert_allclose(
        head_losses.replaced_token_detection({"logits": start}, {"labels": replaced}, {"attention_mask": mask}),
        [_bce(start, replaced)[mask == 1].mean()], rtol=1e-5)
    assert float(head_losses.masked_lm({"logits": logits}, {"labels": np.full((3, 5), -100)}, {})[0]) == 0.0


def test_the_generator_without_mask_positions_predicts_every_position(models):
    outputs = models["generator"](IDS)
    assert outputs.logits.shape == (2, IDS.shape[1], CONFIG.vocab_size)
    at = models["generator"]({"input_ids": IDS, "mask_positions": np.array([[1, 3], [2, 4]])}).logits
    np.testing.assert_allclose(at, np.take_along_axis(outputs.logits.numpy(), np.array([[[1], [3]], [[2], [4]]]), 1),
                               atol=1e-5)


def test_config_answers_transformers_names(models):
    model = models["classification"]
    model.label_names = ["a", "b", "c"]
    config = model.config
    assert isinstance(config, ElectraConfig) and config == CONFIG and config.to_dict() == CONFIG.to_dict()
    assert (config.num_labels, config.id2label, config.label2id) == (3, {0: "a", 1: "b", 2: "c"},
                                                                      {"a": 0, "b": 1, "c": 2})
    assert (config.hidden_size, config.num_hidden_layers, config.num_attention_heads, config.vocab_size,
            config.intermediate_size, config.max_position_embeddings) == (16, 2, 2, 40, 32, 512)
    assert models["encoder"].config.id2label == {}


def _classification_data():
    rng = np.random.default_rng(1)
    ids = rng.integers(5, CONFIG.vocab_size, size=(8, 6)).astype("int64")
    ids[:, 0], ids[:, -1] = 2, 3
    return {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}, \
        ids[:, 1] % 3  # the first word decides


def _fit(model, x, y=None, compiled_loss=None, epochs=2, run_eagerly=False):
    """The per-epoch losses of `epochs` full-batch steps of a copy of `model` compiled with `compiled_loss`
    (without XLA: half the test's time; the steps are the same)."""
    copy = type(model).from_config(model.get_config())
    copy.set_weights(model.get_weights())
    copy.compile(optimizer=keras.optimizers.Adam(1e-2), loss=compiled_loss, run_eagerly=run_eagerly, jit_compile=False)
    return copy, copy.fit(x, y, batch_size=8, epochs=epochs, verbose=0).history["loss"]


def test_compile_without_a_loss_trains_on_the_model_s_own_as_on_the_same_compiled_loss(tmp_path):
    keras.utils.set_random_seed(1)
    features, labels = _classification_data()
    model = ElectraForSequenceClassification(CONFIG, num_labels=3)
    _, expected = _fit(model, features, {"logits": labels},
                       {"logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True)})
    assert expected[-1] < expected[0]
    for x, y in ((features, labels), ({**features, "labels": labels}, None),
                 (tf.data.Dataset.from_tensor_slices((features, {"labels": labels})).batch(8), None)):
        trained, losses = _fit(model, x, y)
        np.testing.assert_allclose(losses, expected, rtol=1e-5)
    own_loss = float(tf.reduce_mean(trained(**features, labels=labels).loss))
    assert trained.evaluate(features, labels, verbose=0) == pytest.approx(own_loss, rel=1e-5)
    predicted = trained.predict({**features, "labels": labels}, verbose=0)  # the labels left out
    assert list(predicted) == ["logits"] and predicted["logits"].shape == (8, 3)
    trained.save(tmp_path / "model.keras")
    loaded = keras.saving.load_model(tmp_path / "model.keras")
    np.testing.assert_allclose(loaded(**features, labels=labels).loss, trained(**features, labels=labels).loss,
                               rtol=1e-6)
    qa = ElectraForQuestionAnswering(CONFIG, head="huggingface")
    _, losses = _fit(qa, features, {"start_positions": labels + 1, "end_positions": labels + 2})
    assert losses[-1] < losses[0]
    with pytest.raises(ValueError, match="from start_positions and end_positions"):
        _fit(qa, features, labels)


def test_keras_steps_run_eagerly_get_the_plain_dicts_they_always_got():
    keras.utils.set_random_seed(1)
    features, labels = _classification_data()
    model = ElectraForSequenceClassification(CONFIG, num_labels=3)
    loss = {"logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True)}
    _, expected = _fit(model, features, {"logits": labels}, loss, epochs=1)
    eager, losses = _fit(model, features, {"logits": labels}, loss, epochs=1, run_eagerly=True)
    np.testing.assert_allclose(losses, expected, rtol=1e-5)
    assert eager.predict(features, verbose=0)["logits"].shape == (8, 3)


def test_the_model_s_own_loss_under_a_mirrored_strategy_is_the_one_device_loss(mirrored):
    keras.utils.set_random_seed(1)
    features, labels = _classification_data()
    model = ElectraForSequenceClassification(CONFIG, num_labels=3)
    _, expected = _fit(model, features, labels, epochs=2)
    with mirrored.scope():
        _, losses = _fit(model, features, labels, epochs=2)
    np.testing.assert_allclose(losses, expected, rtol=1e-4)


def test_the_documented_example_runs():
    page = (Path(__file__).parents[2] / "docs" / "finetuning.md").read_text(encoding="utf-8")
    (block,) = [code for code in re.findall(r"```python\n(.*?)```", page, re.S) if "model(**tokens, labels=" in code]
    exec(compile(block, "docs/finetuning.md", "exec"), {})
