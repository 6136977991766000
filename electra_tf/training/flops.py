"""Training FLOPs of a pre-training step, counted as the ELECTRA paper counts them (matmuls, ×3 for backward).

Per token, a transformer layer of width H and feed-forward width I costs
`2 (4 H² + 2 H I)` for its dense layers and `4 T H` for attention over T
positions; the embedding projection costs `2 E H`; the RTD head `2 (H² + H)`;
a masked-LM head `2 (H E + E V)` at each position it predicts (the P masked
ones; every one for All-Tokens MLM). A trained network costs three forward
passes' worth (the backward pass is two), a frozen one a forward pass. What a
variant computes is what is counted: a unigram generator costs nothing, and
two-stage training counts its generator-only phase and its discriminator
phase (frozen generator) each at its own price.
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

from electra_tf.config import generator_config

# The phases of a two-stage run; other runs have one, "joint".
GENERATOR_PHASE, DISCRIMINATOR_PHASE, JOINT = "generator", "discriminator", "joint"


def _encoder_forward_flops(config, seq_length):
    layer = 2 * (4 * config.hidden_size ** 2 + 2 * config.hidden_size * config.intermediate_size)
    attention = 4 * seq_length * config.hidden_size
    projection = 2 * config.embedding_size * config.hidden_size if config.embedding_size != config.hidden_size else 0
    return config.num_layers * (layer + attention) + projection


def _masked_lm_head_flops(config):
    return 2 * (config.hidden_size * config.embedding_size + config.embedding_size * config.vocab_size)


def _forward_flops_per_token(model_config, pretraining_config):
    """(generator, main network) forward FLOPs per input token."""
    pc = pretraining_config
    seq = pc.max_seq_length
    masked_share = pc.max_predictions_per_seq / seq
    if pc.objective == "mlm":
        return 0, _encoder_forward_flops(model_config, seq) + masked_share * _masked_lm_head_flops(model_config)
    generator = 0
    if pc.generator_type == "masked_lm":
        gen = generator_config(model_config, pc)
        generator = _encoder_forward_flops(gen, seq) + masked_share * _masked_lm_head_flops(gen)
    main = _encoder_forward_flops(model_config, seq)
    rtd_head = 2 * (model_config.hidden_size ** 2 + model_config.hidden_size)
    if pc.objective == "replace_mlm":
        main += masked_share * _masked_lm_head_flops(model_config)
    elif pc.objective == "all_tokens_mlm":
        main += rtd_head + _masked_lm_head_flops(model_config)
    else:
        main += rtd_head
    return generator, main


def training_flops_per_token(model_config, pretraining_config, phase=JOINT):
    """Training FLOPs per input token of one step (forward + backward) in `phase` (two-stage runs have two)."""
    generator, main = _forward_flops_per_token(model_config, pretraining_config)
    if phase == GENERATOR_PHASE:
        return 3 * generator
    if phase == DISCRIMINATOR_PHASE:
        return generator + 3 * main  # the frozen generator only samples
    return 3 * (generator + main)


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
    pc = pretraining_config
    if pc.training_algorithm != "two_stage":
        return steps * training_flops_per_step(model_config, pc)
    first = min(steps, pc.two_stage_generator_steps)
    return (first * training_flops_per_step(model_config, pc, GENERATOR_PHASE)
            + (steps - first) * training_flops_per_step(model_config, pc, DISCRIMINATOR_PHASE))
