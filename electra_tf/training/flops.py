"""Forward FLOPs of the pre-training networks' parts, counted as the ELECTRA paper counts them (matmuls).

Per token, a transformer layer of width H and feed-forward width I costs
`2 (4 H² + 2 H I)` for its dense layers and `4 T H` for attention over T
positions; the embedding projection costs `2 E H`; the RTD head `2 (H² + H)`;
a masked-LM head `2 (H E + E V)` at each position it predicts. What a variant
adds up from these, and how a training step multiplies them (×3 for a trained
network, the backward pass being two forward passes' worth), is
`electra_tf.pretraining.flops`.

Example:
>>> from electra_tf.config import ElectraConfig
>>> round(encoder_forward_flops(ElectraConfig(), 128) / 1e6), round(rtd_head_flops(ElectraConfig()) / 1e3)
(21, 132)
"""

def encoder_forward_flops(config, seq_length):
    """Forward FLOPs per token of an encoder of `config` over `seq_length` positions."""
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
