"""Training FLOPs of a pre-training step, counted as the ELECTRA paper counts them (matmuls, ×3 for backward).

Per token, a transformer layer of width H and feed-forward width I costs
`2 (4 H² + 2 H I)` for its dense layers and `4 T H` for attention over T
positions; the embedding projection costs `2 E H`; the RTD head `2 (H² + H)`;
the generator head `2 (H_g E + E V)` at each of the P masked positions. A
training step is three forward passes' worth (the backward pass is two).
ELECTRA-Small (batch 128, length 128) comes to ≈ 70 MFLOP per token, ≈ 1.2e18
over 1M steps against the paper's 1.4e18, which also counts the small
element-wise operations.

Example:
>>> from electra_tf.config import ElectraConfig, PretrainingConfig
>>> round(training_flops_per_token(ElectraConfig(), PretrainingConfig()) / 1e6)
70
"""

from electra_tf.config import generator_config


def _encoder_forward_flops(config, seq_length):
    layer = 2 * (4 * config.hidden_size ** 2 + 2 * config.hidden_size * config.intermediate_size)
    attention = 4 * seq_length * config.hidden_size
    projection = 2 * config.embedding_size * config.hidden_size if config.embedding_size != config.hidden_size else 0
    return config.num_layers * (layer + attention) + projection


def training_flops_per_token(model_config, pretraining_config):
    """Training FLOPs per input token of one step (forward + backward)."""
    seq = pretraining_config.max_seq_length
    generator = generator_config(model_config, pretraining_config)
    masked_share = pretraining_config.max_predictions_per_seq / seq
    head = 2 * (generator.hidden_size * generator.embedding_size + generator.embedding_size * generator.vocab_size)
    forward = _encoder_forward_flops(generator, seq) + masked_share * head
    if pretraining_config.objective == "electra":
        forward += _encoder_forward_flops(model_config, seq) + 2 * (model_config.hidden_size ** 2
                                                                    + model_config.hidden_size)
    return 3 * forward


def training_flops_per_step(model_config, pretraining_config):
    """Training FLOPs of one optimizer step on `batch_size × gradient_accumulation_steps` sequences."""
    pc = pretraining_config
    tokens = pc.batch_size * pc.gradient_accumulation_steps * pc.max_seq_length
    return training_flops_per_token(model_config, pretraining_config) * tokens
