"""Training FLOPs of a pre-training step, counted as the ELECTRA paper counts them: matmuls, a trained network
three forward passes' worth, a frozen one one. Each variant's row in `config.variants` names its forward formula
here; ELECTRA-Small comes to ≈ 70 MFLOP per token (1.2e18 over 1M steps; the paper's 1.4e18 counts element-wise ops).

Example:
>>> from electra_tf.config import ElectraConfig, PretrainingConfig
>>> round(encoder_forward_flops(ElectraConfig(), 128) / 1e6), round(rtd_head_flops(ElectraConfig()) / 1e3)
(21, 132)
>>> round(training_flops_per_token(ElectraConfig(), PretrainingConfig()) / 1e6)
70
>>> round(training_flops_per_token(ElectraConfig(), PretrainingConfig(generator_type="unigram")) / 1e6)
62
"""

from electra_tf.checkpoints import sources
from electra_tf.config import generator_config
from electra_tf.models.generator import ElectraGenerator
from electra_tf.pretraining.registry import algorithm_of, flops_formula, source_class
from electra_tf.pretraining.training_algorithms import JOINT_PHASE, PHASES, phase_flops


def encoder_forward_flops(config, seq_length):
    """Forward FLOPs per token of an encoder over `seq_length` positions: per layer `2 (4 H² + 2 H I) + 4 T H`."""
    layer = 2 * (4 * config.hidden_size ** 2 + 2 * config.hidden_size * config.intermediate_size)
    attention = 4 * seq_length * config.hidden_size
    projection = 2 * config.embedding_size * config.hidden_size if config.embedding_size != config.hidden_size else 0
    return config.num_layers * (layer + attention) + projection


def masked_lm_head_flops(config):
    """Forward FLOPs of a masked-LM head at one position."""
    return 2 * (config.hidden_size * config.embedding_size + config.embedding_size * config.vocab_size)


def rtd_head_flops(config):
    """Forward FLOPs of the RTD head at one position."""
    return 2 * (config.hidden_size ** 2 + config.hidden_size)


def masked_lm_forward_flops(config, pretraining_config):
    """Forward FLOPs per input token of a masked LM of `config`: its encoder and its head at the masked positions."""
    masked_share = pretraining_config.predictions_per_seq / pretraining_config.max_seq_length
    return (encoder_forward_flops(config, pretraining_config.max_seq_length)
            + masked_share * masked_lm_head_flops(config))


def rtd_flops(config, pretraining_config):
    """The discriminator and its RTD head (`electra`, `electra_15`)."""
    return encoder_forward_flops(config, pretraining_config.max_seq_length) + rtd_head_flops(config)


def rtd_and_kept_mlm_flops(config, pretraining_config):
    """The discriminator, its RTD head and the kept masked LM at every position (`all_tokens_mlm`, `clm`)."""
    return rtd_flops(config, pretraining_config) + masked_lm_head_flops(config)


def no_flops(config, pretraining_config):
    """A part that computes nothing: `mlm`'s discriminator (the generator is the network), a unigram generator."""
    return 0


def generator_network_flops(config, pretraining_config):
    """A generator network of the config's generator size."""
    return masked_lm_forward_flops(generator_config(config, pretraining_config), pretraining_config)


def pretrained_generator_flops(config, pretraining_config):
    """Fast-ELECTRA's pre-trained generator, of its checkpoint's config."""
    generator = sources.read_source(pretraining_config.generator_checkpoint).network_for(ElectraGenerator.hf_class)
    return masked_lm_forward_flops(generator.config, pretraining_config)


def training_flops_per_token(model_config, pretraining_config, phase=JOINT_PHASE):
    """Training FLOPs per input token of one step (forward + backward) in `phase` (two-stage runs have two)."""
    source = source_class(pretraining_config)
    generator = flops_formula(pretraining_config, "generator_type")(model_config, pretraining_config)
    main = flops_formula(pretraining_config, "objective")(model_config, pretraining_config)
    trains = PHASES[phase]
    generator_passes = 3 if source.trained and trains.trains_generator else 1  # frozen: it only samples
    return generator_passes * generator + (3 * main if trains.trains_discriminator else 0)


def training_flops_per_step(model_config, pretraining_config, phase=JOINT_PHASE):
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
