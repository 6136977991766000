"""How the generator and discriminator are trained: jointly, in two stages, or adversarially (Clark et al.,
2020, §3.2 and Appendix F). Each is a schedule of phases, each phase its own traced step function;
`registry.TRAINING_ALGORITHMS` names them.

- `Joint`: one phase, both networks on `gen_weight × MLM + disc_weight × RTD`.
- `TwoStage`: `two_stage_generator_steps` of generator-only MLM, then the discriminator (started from the
  generator's weights) with the generator frozen. The train function picks the phase from the optimizer's
  step on the host, so the checkpoint's weights and step are all the state a resumed run needs.
- `Adversarial`: the generator learns by REINFORCE from the discriminator's loss, against a learnt baseline.

Example:
>>> from electra_tf.config import PretrainingConfig
>>> algorithm = TwoStage(PretrainingConfig(training_algorithm="two_stage", two_stage_generator_steps=3,
...                                        generator_hidden_size=1.0))
>>> [algorithm.phase_at(step) for step in (0, 2, 3)]
['generator', 'generator', 'discriminator']
"""

import dataclasses

import keras
import tensorflow as tf

from electra_tf.pretraining import losses
from electra_tf.training.flops import DISCRIMINATOR_PHASE, GENERATOR_PHASE, JOINT
from electra_tf.training.optimization import update_step_and_micro_batch


@dataclasses.dataclass(frozen=True)
class Phase:
    """What a step of one phase trains."""

    trains_generator: bool
    trains_discriminator: bool


PHASES = {JOINT: Phase(True, True), GENERATOR_PHASE: Phase(True, False), DISCRIMINATOR_PHASE: Phase(False, True)}


class Joint:
    """`training_algorithm="joint"`: one phase, one traced step, both networks."""

    def __init__(self, pretraining_config):
        self.pretraining_config = pretraining_config

    def phase_at(self, step):
        """The phase optimizer step `step` trains in."""
        return JOINT

    def train_function(self, pretrainer, make_train_function, force):
        """Keras's train function (`make_train_function`, Keras's own maker) or a schedule of them."""
        return make_train_function(force)

    def heads(self, generator):
        """`{attribute: layer}` the algorithm adds and keeps (the pre-trainer holds them under these names)."""
        return {}

    def read_generator(self, generated, outputs):
        """`outputs` with what the algorithm reads off the generator's outputs besides its MLM logits."""
        return outputs

    def generator_losses(self, outputs, denominators, mlm_loss):
        """`({name: loss}, terms)`: the algorithm's own losses, and those the generator learns from (× `gen_weight`;
        `mlm_loss` is the generator's, None without one)."""
        return {}, [] if mlm_loss is None else [mlm_loss]

    def flops(self, steps, flops_in_phase):
        """FLOPs of the first `steps` steps, given `flops_in_phase(phase)` for one step."""
        return steps * flops_in_phase(JOINT)


class TwoStage(Joint):
    """`training_algorithm="two_stage"`: generator-only MLM first, then the discriminator from its weights."""

    def phase_at(self, step):
        return GENERATOR_PHASE if step < self.pretraining_config.two_stage_generator_steps else DISCRIMINATOR_PHASE

    def train_function(self, pretrainer, make_train_function, force):
        """One traced step per phase (each is traced at its first call with `pretrainer.phase` set); before
        each step the phase is picked from the optimizer's step, and at the switch-over the generator is
        copied into the discriminator."""
        if pretrainer.train_function is not None and not force:
            return pretrainer.train_function
        if pretrainer.steps_per_execution > 1:
            raise ValueError("ElectraPretrainer: two-stage training changes phase between steps; "
                             "compile with steps_per_execution=1")
        functions = {}
        for phase in (GENERATOR_PHASE, DISCRIMINATOR_PHASE):
            make_train_function(True)  # Keras keeps it in `train_function`
            functions[phase] = pretrainer.train_function

        def train_function(iterator):
            step, micro_batch = (int(value) for value in update_step_and_micro_batch(pretrainer.optimizer))
            pretrainer.phase = self.phase_at(step)
            if (step, micro_batch) == (self.pretraining_config.two_stage_generator_steps, 0):
                start_discriminator_phase(pretrainer)
            return functions[pretrainer.phase](iterator)

        pretrainer.train_function = train_function
        return train_function

    def flops(self, steps, flops_in_phase):
        first = min(steps, self.pretraining_config.two_stage_generator_steps)
        return first * flops_in_phase(GENERATOR_PHASE) + (steps - first) * flops_in_phase(DISCRIMINATOR_PHASE)


def phase_variables(pretrainer):
    """What `pretrainer`'s current phase trains: the generator, then the discriminator (generator frozen), or
    every variable but those the objective leaves untrained."""
    phase = PHASES[pretrainer.phase]
    if not phase.trains_discriminator:
        return pretrainer.generator.trainable_variables
    if not phase.trains_generator:
        return pretrainer.discriminator.trainable_variables
    untrained = {id(v) for v in pretrainer.objective.untrained_variables(pretrainer.discriminator)}
    return [v for v in pretrainer.trainable_variables if id(v) not in untrained]


def start_discriminator_phase(pretrainer):
    """Two-stage switch-over: the discriminator's encoder becomes a copy of the generator's (same size).
    The shared embedding block, if any, is one set of weights already; the RTD head keeps its start."""
    for target, source in zip(pretrainer.discriminator.backbone.weights, pretrainer.generator.backbone.weights):
        if target is not source:
            target.assign(source)


class Adversarial(Joint):
    """`training_algorithm="adversarial"`: REINFORCE on the discriminator's loss, with a reward baseline
    (`losses.reinforce_losses`)."""

    def heads(self, generator):
        baseline = keras.layers.Dense(1, name="reward_baseline")
        baseline.build((None, None, generator.config.hidden_size))
        self.reward_baseline = baseline
        return {"reward_baseline": baseline}

    def read_generator(self, generated, outputs):
        # The baseline learns on the generator's features without training them: the reward alone does.
        hidden = tf.stop_gradient(tf.gather(generated["last_hidden_state"], outputs.masked.positions, batch_dims=1))
        return outputs._replace(baseline_logits=tf.cast(self.reward_baseline(hidden), tf.float32)[..., 0])

    def generator_losses(self, outputs, denominators, mlm_loss):
        if not outputs.discriminated:
            return super().generator_losses(outputs, denominators, mlm_loss)
        policy, baseline = losses.reinforce_losses(outputs, denominators)
        return {"policy_loss": policy, "baseline_loss": baseline}, [policy, baseline]
