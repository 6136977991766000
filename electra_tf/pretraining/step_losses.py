"""The losses of one pre-training step and the sum it minimises: `gen_weight × the generator's losses + the
objective's term`. The generator's losses (its masked-LM cross-entropy; REINFORCE and its baseline when adversarial)
count when the phase trains it, the objective's term (its file says what) when the step ran the discriminator.

Example:
>>> from electra_tf.config import ElectraConfig, PretrainingConfig
>>> from electra_tf.pretraining.registry import variant_parts
>>> parts = variant_parts(PretrainingConfig(), ElectraConfig(), (0,))
>>> float(total_loss(parts, "joint", PretrainingConfig(gen_weight=2.0), [1.0], 3.5))
5.5
"""

import tensorflow as tf

from electra_tf.pretraining import losses
from electra_tf.pretraining.training_algorithms import PHASES


def step_losses(parts, phase, pretraining_config, outputs, denominators):
    """`(losses, scored)`: every loss of one step in `phase` (`{name: loss}`, and under `"loss"` the sum minimised),
    and what the objective scored for its reports (`step_metrics`)."""
    named, scored = {}, {}
    mlm_loss = None
    if outputs.mlm_logits is not None:  # reported even when the generator is not trained (frozen, unigram: none)
        mlm_loss = named["mlm_loss"] = losses.mlm_loss(outputs.masked, outputs.mlm_logits, denominators)
    algorithm_losses, generator_losses = parts.algorithm.generator_losses(outputs, denominators, mlm_loss)
    named.update(algorithm_losses)
    objective_term = 0.0
    if outputs.discriminated:
        objective_losses, objective_term, scored = parts.objective.losses(outputs, denominators, pretraining_config)
        named.update(objective_losses)
    named["loss"] = total_loss(parts, phase, pretraining_config, generator_losses, objective_term)
    return named, scored


def total_loss(parts, phase, pretraining_config, generator_losses, objective_term):
    """The weighted sum a step in `phase` minimises."""
    trains_generator = parts.source.trained and PHASES[phase].trains_generator and generator_losses
    total = pretraining_config.gen_weight * tf.add_n(generator_losses) if trains_generator else 0.0
    return total + objective_term
