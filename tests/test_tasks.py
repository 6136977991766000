import keras
import numpy as np
import pytest
import tensorflow as tf
from conftest import random_batch

from electra_tf.config import PretrainingConfig, save_run_config
from electra_tf.models.tasks import (ElectraForMultipleChoice, ElectraForQuestionAnswering,
                                     ElectraForSequenceClassification, ElectraForTokenClassification)


@pytest.fixture(autouse=True)
def seeded():
    keras.utils.set_random_seed(0)


def _fit(model, x, y, loss, steps=60):
    model.compile(optimizer=keras.optimizers.Adam(3e-3), loss=loss)
    first = model.evaluate(x, y, verbose=0, return_dict=True)["loss"]
    model.fit(x, y, epochs=steps, batch_size=len(y if not isinstance(y, dict) else next(iter(y.values()))),
              verbose=0)
    return first, model.evaluate(x, y, verbose=0, return_dict=True)["loss"]


@pytest.mark.parametrize("head", ["original", "huggingface"])
def test_sequence_classification_heads_overfit(tiny_config, head):
    batch = random_batch(batch_size=8, seq_length=12, seed=1)
    labels = np.arange(8) % 3
    model = ElectraForSequenceClassification(tiny_config, num_labels=3, head=head)
    first, last = _fit(model, batch, {"logits": labels},
                       {"logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True)}, steps=150)
    assert last < 0.1 * first
    assert np.array_equal(np.argmax(model.predict(batch, verbose=0)["logits"], -1), labels)


def test_regression_with_one_label(tiny_config):
    batch = random_batch(batch_size=8, seq_length=12, seed=2)
    scores = np.linspace(0, 5, 8).astype("float32")[:, None]
    model = ElectraForSequenceClassification(tiny_config, num_labels=1)
    first, last = _fit(model, batch, {"logits": scores}, {"logits": "mse"})
    assert last < 0.1 * first


def test_token_classification_overfits(tiny_config):
    batch = random_batch(batch_size=4, seq_length=12, seed=3)
    tags = (batch["input_ids"] % 4).astype("int32")
    model = ElectraForTokenClassification(tiny_config, num_labels=4)
    first, last = _fit(model, batch, {"logits": tags},
                       {"logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True)}, steps=100)
    assert last < 0.2 * first


def test_question_answering_overfits(tiny_config):
    batch = random_batch(batch_size=4, seq_length=12, seed=4, min_length=12)
    starts, ends = np.array([1, 2, 3, 4]), np.array([2, 4, 5, 8])
    model = ElectraForQuestionAnswering(tiny_config)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    first, last = _fit(model, batch, {"start_logits": starts, "end_logits": ends},
                       {"start_logits": loss, "end_logits": loss}, steps=80)
    assert last < 0.1 * first
    predicted = model.predict(batch, verbose=0)
    assert np.array_equal(predicted["start_logits"].argmax(-1), starts)


def test_multiple_choice_overfits_and_takes_any_length(tiny_config):
    choices = [random_batch(batch_size=4, seq_length=10, seed=10 + c) for c in range(3)]
    batch = {k: np.stack([c[k] for c in choices], axis=1) for k in choices[0]}
    answers = np.array([0, 1, 2, 1])
    model = ElectraForMultipleChoice(tiny_config, num_choices=3)
    first, last = _fit(model, batch, {"logits": answers},
                       {"logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True)}, steps=80)
    assert last < 0.1 * first
    shorter = {k: v[:, :, :6] for k, v in batch.items()}
    assert model.predict(shorter, verbose=0)["logits"].shape == (4, 3)


def test_from_pretrained_loads_the_discriminator_encoder_and_saves(tiny_config, tmp_path):
    from conftest import MASK, SPECIAL_IDS

    from electra_tf import ElectraPretrainer
    pretrainer = ElectraPretrainer(tiny_config, PretrainingConfig(max_seq_length=16, generator_hidden_size=0.5),
                                   MASK, SPECIAL_IDS)
    final = tmp_path / "run" / "final"
    final.mkdir(parents=True)
    pretrainer.discriminator.save(str(final / "discriminator.keras"))
    save_run_config(str(final / "config.json"), tiny_config, pretrainer.pretraining_config)
    model = ElectraForSequenceClassification.from_pretrained(str(tmp_path / "run"), num_labels=2)
    for a, b in zip(model.encoder.weights, pretrainer.discriminator.backbone.weights):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    batch = random_batch(batch_size=2, seq_length=12)
    model.save(str(tmp_path / "classifier.keras"))
    loaded = keras.saving.load_model(str(tmp_path / "classifier.keras"), safe_mode=True)
    np.testing.assert_allclose(loaded.predict(batch, verbose=0)["logits"], model.predict(batch, verbose=0)["logits"],
                               atol=1e-6)
    with pytest.raises(ValueError, match="no pre-trained ELECTRA here"):
        ElectraForTokenClassification.from_pretrained(str(tmp_path / "nothing"))
