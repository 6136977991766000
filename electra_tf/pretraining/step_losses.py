"""The loss a pre-training step minimises, summed from its parts' losses.

The generator source, the objective and the training algorithm each compute their losses from the step's
outputs (this replica's shares of global means, over `replicas.denominators`); the sum is `gen_weight ×` the
generator's losses (its MLM; REINFORCE and baseline when adversarial; none when it is not trained) plus the
objective's part (`disc_weight ×` RTD, or the kept masked LM's loss). A two-stage phase trains one of them.

Example:
>>> from electra_tf.config import ElectraConfig, PretrainingConfig
>>> from electra_tf.pretraining.registry import variant_parts
>>> parts = variant_parts(PretrainingConfig(gen_weight=2.0, disc_weight=10.0), ElectraConfig(), (0,))
>>> float(total_loss(parts, "joint", PretrainingConfig(gen_weight=2.0, disc_weight=10.0),
...                  {"mlm_loss": 1.0, "rtd_loss": 0.5}))
7.0
"""

import tensorflow as tf

from electra_tf.pretraining.training_algorithms import PHASES


def step_losses(parts, phase, pretraining_config, outputs, denominators):
    """Every part's losses of one step in `phase`, and under `"loss"` the sum minimised."""
    losses = {**parts.source.losses(outputs, denominators), **parts.objective.losses(outputs, denominators),
              **parts.algorithm.losses(outputs, denominators)}
    losses["loss"] = total_loss(parts, phase, pretraining_config, losses)
    return losses


def total_loss(parts, phase, pretraining_config, losses):
    """The weighted sum a step in `phase` minimises."""
    generator_losses = parts.algorithm.generator_losses(losses) if parts.source.trained else []
    trains_generator = PHASES[phase].trains_generator and generator_losses
    total = pretraining_config.gen_weight * tf.add_n(generator_losses) if trains_generator else 0.0
    return total + parts.objective.main_loss(losses, pretraining_config)
