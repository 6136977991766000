import pytest

from electra_tf.config import ElectraConfig, PretrainingConfig
from electra_tf.pretraining import registry
from electra_tf.pretraining.flops import training_flops, training_flops_per_step, training_flops_per_token
from electra_tf.pretraining.training_algorithms import DISCRIMINATOR_PHASE, GENERATOR_PHASE

MODEL = ElectraConfig()


def test_each_variant_counts_what_it_computes():
    electra = training_flops_per_token(MODEL, PretrainingConfig())
    mlm = training_flops_per_token(MODEL, PretrainingConfig(objective="mlm"))
    unigram = training_flops_per_token(MODEL, PretrainingConfig(generator_type="unigram"))
    generator = electra - unigram
    assert 0 < generator < 0.25 * electra  # a 1/4-wide generator; the unigram one costs nothing
    # All-Tokens MLM adds a vocabulary projection at every position; Replace MLM at the masked ones.
    replace = training_flops_per_token(MODEL, PretrainingConfig(objective="replace_mlm"))
    all_tokens = training_flops_per_token(MODEL, PretrainingConfig(objective="all_tokens_mlm"))
    assert electra < replace < all_tokens
    assert training_flops_per_token(MODEL, PretrainingConfig(objective="electra_15")) == electra
    assert training_flops_per_token(MODEL, PretrainingConfig(weight_sharing="gdes")) == electra
    assert unigram > mlm * 0.9  # the discriminator alone costs about what the MLM model does


def test_two_stage_counts_each_phase_at_its_price():
    config = PretrainingConfig(training_algorithm="two_stage", generator_hidden_size=1.0, two_stage_generator_steps=3,
                               train_steps=10)
    first = training_flops_per_step(MODEL, config, GENERATOR_PHASE)
    second = training_flops_per_step(MODEL, config, DISCRIMINATOR_PHASE)
    assert first == pytest.approx(training_flops_per_step(MODEL, PretrainingConfig(objective="mlm")), rel=0.01)
    discriminator = training_flops_per_step(MODEL, PretrainingConfig(generator_type="unigram"))
    assert second == pytest.approx(first / 3 + discriminator)  # the frozen generator's forward + the discriminator
    assert training_flops(MODEL, config, 2) == 2 * first
    assert training_flops(MODEL, config, 10) == 3 * first + 7 * second


def test_every_registered_part_has_its_flops():
    for objective in registry.OBJECTIVES:
        assert training_flops_per_token(MODEL, PretrainingConfig(objective=objective)) >= 0, objective
    for generator_type in set(registry.GENERATOR_SOURCES) - {"pretrained"}:  # (its checkpoint: test_fast_electra)
        assert training_flops_per_token(MODEL, PretrainingConfig(generator_type=generator_type)) > 0, generator_type
