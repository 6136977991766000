"""Fast-ELECTRA: a frozen pre-trained generator (the committed Hugging Face `ElectraForMaskedLM` fixture) with an
annealed sampling temperature."""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf

from electra_tf import ElectraConfig, ElectraDiscriminator, ElectraPretrainer, PretrainingConfig
from electra_tf.checkpoints.sources import read_config
from electra_tf.pretraining.fast_electra import annealed_temperature
from electra_tf.pretraining.flops import masked_lm_forward_flops, training_flops_per_token


@pytest.fixture(scope="module")
def generator_dir(fixtures_dir):
    return str(fixtures_dir / "hf" / "generator")


@pytest.fixture(scope="module")
def config(fixtures_dir):
    vocab_size = json.loads((fixtures_dir / "hf" / "generator" / "config.json").read_text())["vocab_size"]
    return ElectraConfig(vocab_size=vocab_size, embedding_size=16, hidden_size=32, num_layers=2, num_heads=2,
                         intermediate_size=48, max_position_embeddings=16, hidden_dropout=0.0, attention_dropout=0.0)


def fast_electra(config, generator_dir, seed=0, **fields):
    keras.utils.set_random_seed(seed)
    pretraining = PretrainingConfig(max_seq_length=16, generator_type="pretrained", weight_sharing="none",
                                    generator_checkpoint=generator_dir, train_steps=10, **fields)
    return ElectraPretrainer(config, pretraining, mask_token_id=4, special_token_ids=[0, 1, 2, 3])


def batches(vocab_size, seed=0):
    ids = np.random.default_rng(seed).integers(5, vocab_size, size=(8, 16)).astype("int32")
    ids[:, 0], ids[:, -1] = 2, 3
    batch = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    return tf.data.Dataset.from_tensor_slices(batch).batch(4, drop_remainder=True).repeat()


def test_the_pretrained_generator_is_frozen_and_the_discriminator_trains(config, generator_dir):
    pretrainer = fast_electra(config, generator_dir)
    generator_before = [np.array(v) for v in pretrainer.generator.weights]
    discriminator_before = [np.array(v) for v in pretrainer.discriminator.trainable_variables]
    assert not {id(v) for v in pretrainer.generator.weights} & {id(v) for v in pretrainer.trainable_variables}
    pretrainer.compile(optimizer=keras.optimizers.Adam(1e-2))
    history = pretrainer.fit(batches(config.vocab_size), steps_per_epoch=2, epochs=1, verbose=0)
    for before, after in zip(generator_before, pretrainer.generator.weights, strict=True):
        np.testing.assert_array_equal(before, np.array(after))
    assert max(np.abs(b - np.array(a)).max() for b, a in
               zip(discriminator_before, pretrainer.discriminator.trainable_variables)) > 0
    # The generator's MLM loss is reported, not minimised: the loss is the weighted RTD loss alone.
    assert history.history["loss"][0] == pytest.approx(50 * history.history["rtd_loss"][0], rel=1e-5)


def test_the_temperature_descends_from_initial_to_final_on_each_schedule():
    steps = np.arange(0, 15)
    for schedule in ("exponential", "linear", "cosine"):
        values = np.array([float(annealed_temperature(s, 3.0, 1.0, 10, schedule)) for s in steps])
        assert values[0] == pytest.approx(3.0) and values[10] == pytest.approx(1.0), schedule
        assert np.all(np.diff(values) <= 1e-6) and np.all(values[10:] == pytest.approx(1.0)), schedule
    assert float(annealed_temperature(-2, 3.0, 1.0, 10, "linear")) == pytest.approx(3.0)  # evaluation
    assert float(annealed_temperature(5, 4.0, 1.0, 10, "exponential")) == pytest.approx(2.0)  # geometric


def test_the_pre_trainer_samples_at_the_scheduled_temperature(config, generator_dir):
    pretrainer = fast_electra(config, generator_dir, initial_temperature=2.0, temperature=0.5,
                              temperature_schedule="linear", temperature_decay_steps=4)
    temperatures = [float(pretrainer.source.temperature(tf.constant(s, tf.int64))) for s in (0, 2, 4, 9)]
    assert temperatures == pytest.approx([2.0, 1.25, 0.5, 0.5])
    # At the default decay (train_steps) the end point is train_steps.
    default = fast_electra(config, generator_dir, temperature_schedule="linear")
    assert float(default.source.temperature(tf.constant(5, tf.int64))) == pytest.approx(1.5)


def test_a_resumed_run_equals_the_uninterrupted_one(config, generator_dir, assert_resumes_exactly):
    assert_resumes_exactly(lambda seed: fast_electra(config, generator_dir, seed=seed),
                           batches(config.vocab_size, seed=3))


def test_the_exported_discriminator_is_a_plain_one(config, generator_dir, tmp_path):
    pretrainer = fast_electra(config, generator_dir)
    networks = pretrainer.export_networks()
    assert type(networks["discriminator"]) is ElectraDiscriminator
    plain = ElectraDiscriminator(config)
    assert [w.path for w in networks["discriminator"].weights] == [w.path for w in plain.weights]
    networks["discriminator"].save_pretrained(str(tmp_path / "discriminator"))
    reloaded = ElectraDiscriminator.from_pretrained(str(tmp_path / "discriminator"), preprocessor=None)
    for a, b in zip(networks["discriminator"].weights, reloaded.weights, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_its_flops_count_the_generator_as_inference_only(config, generator_dir):
    pretraining = PretrainingConfig(max_seq_length=16, generator_type="pretrained", weight_sharing="none",
                                    generator_checkpoint=generator_dir)
    discriminator_only = training_flops_per_token(config, PretrainingConfig(max_seq_length=16,
                                                                            generator_type="unigram"))
    generator = training_flops_per_token(config, pretraining) - discriminator_only
    forward = masked_lm_forward_flops(read_config(generator_dir), pretraining)
    assert forward > 0 and generator == pytest.approx(forward)  # one forward pass, not three


@pytest.mark.parametrize("fields, message", [
    ({"generator_type": "pretrained", "weight_sharing": "none"}, "generator_checkpoint: is the generator"),
    ({"generator_checkpoint": "g"}, "generator_checkpoint: needs generator_type='pretrained'"),
    ({"generator_type": "pretrained", "generator_checkpoint": "g"}, "weight_sharing: 'embeddings' does not go"),
    ({"generator_type": "pretrained", "generator_checkpoint": "g", "weight_sharing": "none",
      "training_algorithm": "adversarial"}, "training_algorithm: 'adversarial' does not go"),
    ({"generator_type": "pretrained", "generator_checkpoint": "g", "weight_sharing": "none",
      "temperature_schedule": "step"}, "temperature_schedule: 'step' is not one of"),
])
def test_impossible_fast_electra_settings_are_one_error_naming_the_field(fields, message):
    with pytest.raises(ValueError, match=f"PretrainingConfig.{message}"):
        PretrainingConfig(**fields)


def test_a_generator_of_another_vocabulary_is_refused(generator_dir):
    config = ElectraConfig(vocab_size=50, embedding_size=16, hidden_size=32, num_layers=1, num_heads=2,
                           intermediate_size=48, max_position_embeddings=16)
    with pytest.raises(ValueError, match="generator_checkpoint: .* has vocab_size=99, the discriminator 50"):
        fast_electra(config, generator_dir)
