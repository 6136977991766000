"""Training FLOPs of a pre-training step, counted as the ELECTRA paper counts them (matmuls, ×3 for backward).

Not part of the step: each registered part's forward FLOPs per token are here, keyed by its class
(`OBJECTIVE_FLOPS`: the discriminator with the objective's heads; `GENERATOR_FLOPS`: the generator, a unigram one
nothing; `training.flops` has the pieces). A trained network costs three forward passes' worth (the backward pass
is two), a frozen one a forward pass; the training algorithm says which phases a run has (two-stage: a
generator-only phase, then a discriminator phase with the generator frozen). ELECTRA-Small (batch 128, length 128)
comes to ≈ 70 MFLOP per token, ≈ 1.2e18 over 1M steps against the paper's 1.4e18, which also counts the small
element-wise operations.

Example:
>>> from electra_tf.config import ElectraConfig, PretrainingConfig
>>> round(training_flops_per_token(ElectraConfig(), PretrainingConfig()) / 1e6)
70
>>> round(training_flops_per_token(ElectraConfig(), PretrainingConfig(generator_type="unigram")) / 1e6)
62
"""

from electra_tf.checkpoints import sources
from electra_tf.config import generator_config
from electra_tf.models.generator import ElectraGenerator
from electra_tf.pretraining.all_tokens_mlm import AllTokensMLM
from electra_tf.pretraining.corrective_lm import CorrectiveLanguageModel
from electra_tf.pretraining.electra import ReplacedTokenDetection
from electra_tf.pretraining.electra_15 import MaskedReplacedTokenDetection
from electra_tf.pretraining.fast_electra import PretrainedGenerator
from electra_tf.pretraining.generator_sources import GeneratorNetwork, UnigramGenerator
from electra_tf.pretraining.mlm import MaskedLanguageModel
from electra_tf.pretraining.registry import algorithm_of, objective_of, source_class
from electra_tf.pretraining.replace_mlm import ReplaceMLM
from electra_tf.pretraining.training_algorithms import PHASES, phase_flops
from electra_tf.training.flops import (
    JOINT,
    encoder_forward_flops,
    masked_lm_forward_flops,
    masked_lm_head_flops,
    rtd_head_flops,
)


def _rtd(config, pretraining_config):
    return encoder_forward_flops(config, pretraining_config.max_seq_length) + rtd_head_flops(config)


def _rtd_and_kept_mlm(config, pretraining_config):
    return _rtd(config, pretraining_config) + masked_lm_head_flops(config)  # the kept masked LM at every position


# Objective class -> forward FLOPs per input token of the discriminator and the objective's heads.
OBJECTIVE_FLOPS = {
    ReplacedTokenDetection: _rtd,
    MaskedReplacedTokenDetection: _rtd,
    ReplaceMLM: masked_lm_forward_flops,  # the encoder and the kept masked LM at the masked positions
    AllTokensMLM: _rtd_and_kept_mlm,
    CorrectiveLanguageModel: _rtd_and_kept_mlm,
    MaskedLanguageModel: lambda config, pretraining_config: 0,  # no discriminator: the generator is the network
}
# Generator source class -> forward FLOPs per input token of its generator.
GENERATOR_FLOPS = {
    GeneratorNetwork: lambda config, pc: masked_lm_forward_flops(generator_config(config, pc), pc),
    UnigramGenerator: lambda config, pc: 0,
    PretrainedGenerator: lambda config, pc: masked_lm_forward_flops(
        sources.read_source(pc.generator_checkpoint).network_for(ElectraGenerator.hf_class).config, pc),
}


def training_flops_per_token(model_config, pretraining_config, phase=JOINT):
    """Training FLOPs per input token of one step (forward + backward) in `phase` (two-stage runs have two)."""
    source = source_class(pretraining_config)
    generator = GENERATOR_FLOPS[source](model_config, pretraining_config)
    main = OBJECTIVE_FLOPS[type(objective_of(pretraining_config))](model_config, pretraining_config)
    trains = PHASES[phase]
    generator_passes = 3 if source.trained and trains.trains_generator else 1  # frozen: it only samples
    return generator_passes * generator + (3 * main if trains.trains_discriminator else 0)


def training_flops_per_step(model_config, pretraining_config, phase=JOINT):
    """Training FLOPs of one optimizer step on `batch_size × gradient_accumulation_steps` sequences."""
    pc = pretraining_config
    tokens = pc.batch_size * pc.gradient_accumulation_steps * pc.max_seq_length
    return training_flops_per_token(model_config, pretraining_config, phase) * tokens


def training_flops(model_config, pretraining_config, steps):
    """Training FLOPs of the first `steps` optimizer steps of a run (each phase of a two-stage run at its price).

    >>> from electra_tf.config import ElectraConfig, PretrainingConfig
    >>> config = PretrainingConfig(training_algorithm="two_stage", two_stage_generator_steps=10, train_steps=20,
    ...                            generator_hidden_size=1.0)
    >>> training_flops(ElectraConfig(), config, 10) < training_flops(ElectraConfig(), config, 20) / 2
    True
    """
    return phase_flops(algorithm_of(pretraining_config), steps,
                       lambda phase: training_flops_per_step(model_config, pretraining_config, phase))
