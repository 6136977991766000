"""Fast-ELECTRA (Dong et al., ICLR 2024), `generator_type="pretrained"`: the generator is a pre-trained masked LM
(`generator_checkpoint`), frozen, sampled at a temperature that descends over training (docs/pretraining_variants.md).

Example:
>>> [round(float(annealed_temperature(step, 2.0, 1.0, 10, "linear")), 2) for step in (0, 5, 10, 20)]
[2.0, 1.5, 1.0, 1.0]
>>> round(float(annealed_temperature(5, 4.0, 1.0, 10, "exponential")), 2)
2.0
"""

import math

import tensorflow as tf

from electra_tf.checkpoints import sources
from electra_tf.models.generator import ElectraGenerator
from electra_tf.pretraining.generator_sources import (
    SHARE_NONE,
    check_masked_lm,
    discriminator_network,
    sample_from_logits,
)

_SHAPES = {
    "linear": lambda initial, final, r: initial + (final - initial) * r,
    "cosine": lambda initial, final, r: final + (initial - final) * 0.5 * (1.0 + tf.cos(math.pi * r)),
    "exponential": lambda initial, final, r: initial * (final / initial) ** r,
}


def annealed_temperature(step, initial, final, decay_steps, schedule):
    """The sampling temperature at update step `step` (a float32 tensor): `initial` → `final` over
    `decay_steps`, then `final`; steps below 0 (evaluation, `call`) take `initial`."""
    progress = tf.clip_by_value(tf.cast(step, tf.float32) / float(decay_steps), 0.0, 1.0)
    return _SHAPES[schedule](tf.constant(initial, tf.float32), tf.constant(final, tf.float32), progress)


class PretrainedGenerator:
    """`generator_type="pretrained"`: a frozen pre-trained masked LM with an annealed sampling temperature."""

    trained = False  # frozen: no MLM loss minimised, no gradient, FLOPs of a forward pass

    def __init__(self, config, pretraining_config, special_token_ids, unigram_counts=None, sharing=SHARE_NONE):
        self.pretraining_config = pretraining_config
        self.sharing = sharing

    def networks(self, config):
        pc = self.pretraining_config
        generator = ElectraGenerator.from_source(read_checkpoint(pc))
        if generator.config.vocab_size != config.vocab_size:
            raise ValueError(f"PretrainingConfig.generator_checkpoint: {pc.generator_checkpoint} has "
                             f"vocab_size={generator.config.vocab_size}, the discriminator {config.vocab_size}; "
                             "use a generator of the same vocabulary")
        generator.trainable = False
        return discriminator_network(config), generator

    @staticmethod
    def check_checkpoints(pretraining_config):
        """Refuses, before any work, a `generator_checkpoint` without a trained masked-LM head."""
        read_checkpoint(pretraining_config)

    def temperature(self, counter):
        """The sampling temperature at update step `counter`."""
        pc = self.pretraining_config
        return annealed_temperature(counter, pc.initial_temperature, pc.temperature,
                                    pc.temperature_decay_steps or pc.train_steps, pc.temperature_schedule)

    def sample(self, mlm_logits, masked, keys, counter):
        return sample_from_logits(mlm_logits, masked, keys, self.temperature(counter), self.pretraining_config)


def read_checkpoint(pretraining_config):
    """The `generator_checkpoint`, read; a ValueError when it holds no trained masked-LM head."""
    path = pretraining_config.generator_checkpoint
    source = sources.read_source(path)
    check_masked_lm(source.network_for(ElectraGenerator.hf_class),
                    f"PretrainingConfig.generator_checkpoint: {path} ({source.format})", "a frozen generator")
    return source
