"""Training FLOPs of a pre-training step, counted as the ELECTRA paper counts them (matmuls, ×3 for backward).

Each part counts its own forward FLOPs (`training.flops` has the pieces): the objective its main network,
the generator source its generator (a unigram one nothing). A trained network costs three forward passes'
worth (the backward pass is two), a frozen one a forward pass; the training algorithm says which phases a
run has (two-stage: a generator-only phase, then a discriminator phase with the generator frozen).
ELECTRA-Small (batch 128, length 128) comes to ≈ 70 MFLOP per token, ≈ 1.2e18
over 1M steps against the paper's 1.4e18, which also counts the small
element-wise operations.

Example:
>>> from electra_tf.config import ElectraConfig, PretrainingConfig
>>> round(training_flops_per_token(ElectraConfig(), PretrainingConfig()) / 1e6)
70
>>> round(training_flops_per_token(ElectraConfig(), PretrainingConfig(generator_type="unigram")) / 1e6)
62
"""

from electra_tf.pretraining.registry import algorithm_of, objective_of, source_class
from electra_tf.pretraining.training_algorithms import PHASES
from electra_tf.training.flops import JOINT


def training_flops_per_token(model_config, pretraining_config, phase=JOINT):
    """Training FLOPs per input token of one step (forward + backward) in `phase` (two-stage runs have two)."""
    objective, source = objective_of(pretraining_config), source_class(pretraining_config)
    generator = source.generator_forward_flops(model_config, pretraining_config) if objective.discriminates else 0
    main = objective.forward_flops(model_config, pretraining_config)
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
    return algorithm_of(pretraining_config).flops(
        steps, lambda phase: training_flops_per_step(model_config, pretraining_config, phase))
