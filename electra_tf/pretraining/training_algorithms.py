"""How the generator and discriminator are trained (Clark et al., 2020, §3.2 and Appendix F), each algorithm a
schedule of phases (`[(phase, first update step)]`), each phase its own traced step:

- `joint`: one phase, both networks on `gen_weight × MLM + the objective's term`.
- `two_stage`: `two_stage_generator_steps` of generator-only MLM, then the discriminator (started from the
  generator's weights) with the generator frozen; the phase follows from the optimizer's step.
- `adversarial`: the generator learns by REINFORCE from the discriminator's loss, against a learnt baseline.

Example:
>>> from electra_tf.config import PretrainingConfig
>>> algorithm = two_stage(PretrainingConfig(training_algorithm="two_stage", two_stage_generator_steps=3,
...                                         generator_hidden_size=1.0))
>>> [phase_at(algorithm, step) for step in (0, 2, 3)]
['generator', 'generator', 'discriminator']
"""

import dataclasses

import keras
import tensorflow as tf

from electra_tf.pretraining import losses

# The phases of a two-stage run; other runs have one, `JOINT_PHASE`.
GENERATOR_PHASE, DISCRIMINATOR_PHASE, JOINT_PHASE = "generator", "discriminator", "joint"


@dataclasses.dataclass(frozen=True)
class Phase:
    """What a step of one phase trains."""

    trains_generator: bool
    trains_discriminator: bool
    starts_from_generator: bool = False  # its first step sets the discriminator's encoder from the generator's


PHASES = {JOINT_PHASE: Phase(True, True), GENERATOR_PHASE: Phase(True, False),
          DISCRIMINATOR_PHASE: Phase(False, True, starts_from_generator=True)}


def spans(algorithm):
    """`[(phase, first step, end step)]`: the phases' update steps (end None: the last phase, to the run's end)."""
    starts = algorithm.phases
    return [(phase, first, end) for (phase, first), (_, end) in zip(starts, [*starts[1:], (None, None)])]


def phase_span(algorithm, step):
    """`(phase, first step, end step)` of the phase update step `step` trains in."""
    return next(span for span in spans(algorithm) if span[2] is None or step < span[2])


def phase_at(algorithm, step):
    """The phase update step `step` trains in."""
    return phase_span(algorithm, step)[0]


def phase_flops(algorithm, steps, flops_in_phase):
    """FLOPs of the first `steps` steps, given `flops_in_phase(phase)` for one step."""
    return sum(max(0, (steps if end is None else min(steps, end)) - first) * flops_in_phase(phase)
               for phase, first, end in spans(algorithm))


def mlm_terms(mlm_loss):
    """The generator's terms when it learns by its masked-LM loss (None: no generator network)."""
    return [] if mlm_loss is None else [mlm_loss]


class MaskedLMTraining:
    """The generator learns by its masked-LM loss, in `phases`: `joint` and `two_stage`."""

    def __init__(self, phases):
        self.phases = phases

    def heads(self, generator):
        return {}

    def generator_losses(self, outputs, denominators, mlm_loss):
        """`({name: loss}, terms)`: the algorithm's own losses, and those the generator learns from."""
        return {}, mlm_terms(mlm_loss)


def joint(pretraining_config):
    """`training_algorithm="joint"`: one phase, one traced step, both networks."""
    return MaskedLMTraining([(JOINT_PHASE, 0)])


def two_stage(pretraining_config):
    """`training_algorithm="two_stage"`: generator-only MLM first, then the discriminator from its weights."""
    return MaskedLMTraining([(GENERATOR_PHASE, 0),
                             (DISCRIMINATOR_PHASE, pretraining_config.two_stage_generator_steps)])


def phase_variables(pretrainer):
    """What `pretrainer`'s current phase trains: the generator, then the discriminator (generator frozen), or
    every variable but those the objective leaves untrained."""
    phase = PHASES[pretrainer.phase]
    if not phase.trains_discriminator:
        return pretrainer.generator.trainable_variables
    if not phase.trains_generator:
        return pretrainer.discriminator.trainable_variables
    return [v for v in pretrainer.trainable_variables if id(v) not in pretrainer.untrained_variable_ids]


def start_discriminator_phase(pretrainer):
    """Two-stage switch-over: the discriminator's encoder becomes a copy of the generator's (same size).
    The shared embedding block, if any, is one set of weights already; the RTD head keeps its start."""
    for target, source in zip(pretrainer.discriminator.backbone.weights, pretrainer.generator.backbone.weights):
        if target is not source:
            target.assign(source)


class Adversarial:
    """`training_algorithm="adversarial"`: one phase; REINFORCE on the discriminator's loss, with a reward
    baseline (`losses.reinforce_losses`) read off the generator's features."""

    def __init__(self, pretraining_config):
        self.phases = [(JOINT_PHASE, 0)]

    def heads(self, generator):
        baseline = keras.layers.Dense(1, name="reward_baseline")
        baseline.build((None, None, generator.config.hidden_size))
        self.reward_baseline = baseline
        return {"reward_baseline": baseline}

    def generator_losses(self, outputs, denominators, mlm_loss):
        if not outputs.discriminated:
            return {}, mlm_terms(mlm_loss)
        # The baseline learns on the generator's features without training them: the reward alone does.
        hidden = tf.stop_gradient(tf.gather(outputs.generator_hidden, outputs.masked.positions, batch_dims=1))
        baseline_logits = tf.cast(self.reward_baseline(hidden), tf.float32)[..., 0]
        policy, baseline = losses.reinforce_losses(outputs, baseline_logits, denominators)
        return {"policy_loss": policy, "baseline_loss": baseline}, [policy, baseline]
