"""AdamW with ELECTRA's learning-rate schedule and weight-decay exclusions.

Keras has no "linear warm-up, then linear decay to 0" schedule
(`PolynomialDecay` has no warm-up), hence `WarmupLinearDecay`. The original
multiplies the warm-up into an already decaying rate
(`lr * (1 - step/total) * min(1, step/warmup)`); `original_formula=True`
reproduces it. The original's `AdamWeightDecayOptimizer` also has no bias
correction (Adam's `1/(1 - β^t)` factors, which make the first steps as large
as later ones): `bias_correction=False` reproduces that. AdamW is Keras's, its
update fused per variable (`FusedAdamW`).

Example:
>>> schedule = WarmupLinearDecay(1e-3, warmup_steps=10, total_steps=100)
>>> [round(float(schedule(s)), 6) for s in (0, 5, 10, 55, 100)]
[0.0, 0.0005, 0.001, 0.0005, 0.0]
>>> original = WarmupLinearDecay(1e-3, warmup_steps=10, total_steps=100, original_formula=True)
>>> [round(float(original(s)), 6) for s in (0, 5, 10, 55, 100)]
[0.0, 0.000475, 0.0009, 0.00045, 0.0]
"""

import keras
import tensorflow as tf

from electra_tf.util.library_internals import DecayInUpdateStep, StepStartHook, resource_apply_adam
from electra_tf.training.layerwise_decay import LayerwiseAdamW
from electra_tf.training.variable_state import PerVariableState

# LayerNormalization's variables are `gamma`/`beta`; every bias ends in `bias`.
# As the original, these are not weight-decayed.
NO_WEIGHT_DECAY = ("gamma", "beta", "bias")


@keras.saving.register_keras_serializable(package="electra_tf")
class WarmupLinearDecay(keras.optimizers.schedules.LearningRateSchedule):
    """Linear warm-up from 0 to `peak` over `warmup_steps`, then linear decay to 0 at `total_steps`."""

    def __init__(self, peak, warmup_steps, total_steps, original_formula=False):
        if total_steps < 1 or warmup_steps < 0:
            raise ValueError(f"need total_steps >= 1 and warmup_steps >= 0, got {total_steps}, {warmup_steps}")
        self.peak = peak
        self.warmup_steps = warmup_steps
        self.total_steps = total_steps
        self.original_formula = original_formula

    def __call__(self, step):
        step = keras.ops.cast(step, "float32")
        warmup = keras.ops.minimum(1.0, step / max(1, self.warmup_steps))
        if self.original_formula:
            decay = keras.ops.maximum(0.0, 1.0 - step / self.total_steps)
            return self.peak * warmup * decay
        span = max(1, self.total_steps - self.warmup_steps)
        decay = keras.ops.clip(1.0 - (step - self.warmup_steps) / span, 0.0, 1.0)
        return self.peak * keras.ops.where(step < self.warmup_steps, warmup, decay)

    def get_config(self):
        return {"peak": self.peak, "warmup_steps": self.warmup_steps, "total_steps": self.total_steps,
                "original_formula": self.original_formula}


@keras.saving.register_keras_serializable(package="electra_tf")
class FusedAdamW(DecayInUpdateStep, StepStartHook, PerVariableState, keras.optimizers.AdamW):
    """Keras's AdamW with each variable's update in one TensorFlow kernel, and the original's Adam as an option.

    Keras (3.15) builds some thirty graph ops per variable for an AdamW step,
    evaluating the learning-rate schedule again for every weight-decayed one:
    half of the pre-training step's graph, and so of its tracing and graph
    optimisation time. Here a variable's step is its decoupled weight decay
    (`w ← w - lr·wd·w`, as Keras's AdamW, skipped for the excluded names) and
    TensorFlow's `ResourceApplyAdam`, which computes Keras's Adam update
    (`m ← m + (1-β1)(g - m)`, `v ← v + (1-β2)(g² - v)`,
    `w ← w - lr·√(1-β2^t)/(1-β1^t)·m/(√v + ε)`) in one pass.

    `bias_correction=False` drops the `√(1-β2^t)/(1-β1^t)` factor, as the
    original `AdamWeightDecayOptimizer` (which has none): the same from a few
    thousand steps on, but the early updates are larger (at step 1 about 3.2
    times Keras's; the warm-up keeps them small). Keras has neither the fused
    step nor the switch, hence this class.

    Example:
    >>> import numpy as np
    >>> w = keras.Variable(np.ones(2, "float32"))
    >>> optimizer = FusedAdamW(learning_rate=0.1, weight_decay=0.0, epsilon=0.0, bias_correction=False)
    >>> optimizer.apply([np.array([1.0, -2.0], "float32")], [w])
    >>> [round(float(x), 4) for x in w.numpy()]  # 1 - 0.1 · (0.1·g) / √(0.001·g²)
    [0.6838, 1.3162]
    """

    def __init__(self, bias_correction=True, **kwargs):
        super().__init__(**kwargs)
        if self.amsgrad:
            raise ValueError("FusedAdamW has no amsgrad")
        self.bias_correction = bias_correction

    def build(self, var_list):
        super().build(var_list)
        self._decays = [self.decays(v) for v in var_list]

    def start_step(self, distribution, learning_rate):
        """The step's scalars, computed once per update rather than in every variable's `update_step`."""
        dtype = "float32"  # the variables' dtype (Keras keeps them float32 under mixed precision)
        # Under a multi-replica strategy the step's rate arrives per replica (the same on each): take one.
        learning_rate = tf.cast(distribution.experimental_local_results(learning_rate)[0], dtype)
        if self.bias_correction:
            step = tf.cast(self.iterations + 1, dtype)
            powers = tf.pow(tf.constant([self.beta_1, self.beta_2], dtype), step)
        else:  # the kernel's step size lr·√(1-β2^t)/(1-β1^t) is then lr
            powers = tf.zeros([2], dtype)
        self._step_scalars = {
            "lr": learning_rate, "beta1_power": powers[0], "beta2_power": powers[1],
            "beta1": tf.constant(self.beta_1, dtype), "beta2": tf.constant(self.beta_2, dtype),
            "epsilon": tf.constant(self.epsilon, dtype),
            "decay": tf.cast(self.weight_decay, dtype) * learning_rate}

    def update_step(self, gradient, variable, learning_rate):
        index = self.index_of(variable)
        scalars = {name: tf.cast(value, variable.dtype) for name, value in self._step_scalars.items()}
        decay = scalars.pop("decay")
        if self._decays[index]:
            variable.assign_sub(variable * decay)
        resource_apply_adam(variable, self.slot(index, "momentum"), self.slot(index, "velocity"),
                            tf.cast(gradient, variable.dtype), **scalars)

    def get_config(self):
        return {**super().get_config(), "bias_correction": self.bias_correction}


def create_optimizer(learning_rate, total_steps, warmup_steps, weight_decay=0.01, epsilon=1e-6,
                     clip_norm=1.0, original_schedule=False, gradient_accumulation_steps=1, name="adamw",
                     lr_multipliers=None, bias_correction=True):
    """AdamW (or LAMB), β 0.9/0.999, `WarmupLinearDecay`, global-norm clipping, no decay on LayerNorm/bias.

    With `gradient_accumulation_steps=k` (Keras's own accumulation) the
    optimizer counts micro-steps, so the schedule is stretched k times: it
    still warms up over `warmup_steps` updates and ends after `total_steps`.
    `lr_multipliers` (variable path → factor, see `layerwise_decay`) gives
    each variable its own rate (AdamW only). `bias_correction=False` is the
    original's Adam (`FusedAdamW`, AdamW without layer-wise rates only).

    Example:
    >>> optimizer = create_optimizer(5e-4, total_steps=1000, warmup_steps=100)
    >>> type(optimizer).__name__, float(optimizer.global_clipnorm)
    ('FusedAdamW', 1.0)
    """
    k = gradient_accumulation_steps
    classes = {"adamw": FusedAdamW, "lamb": keras.optimizers.Lamb}
    if name not in classes:
        raise ValueError(f"optimizer {name!r} is not one of {sorted(classes)}")
    options = {}
    if lr_multipliers is not None:
        if name != "adamw":
            raise ValueError("layer-wise learning rates are implemented for adamw only")
        classes["adamw"], options = LayerwiseAdamW, {"lr_multipliers": lr_multipliers}
    if not bias_correction:
        if name != "adamw" or lr_multipliers is not None:
            raise ValueError("Adam without bias correction is implemented for adamw without layer-wise rates only")
        options = {"bias_correction": False}
    optimizer = classes[name](
        **options, learning_rate=WarmupLinearDecay(learning_rate, warmup_steps * k, total_steps * k, original_schedule),
        weight_decay=weight_decay, beta_1=0.9, beta_2=0.999, epsilon=epsilon,
        global_clipnorm=clip_norm, gradient_accumulation_steps=k if k > 1 else None)
    optimizer.exclude_from_weight_decay(var_names=list(NO_WEIGHT_DECAY))
    return optimizer


def pretraining_optimizer(pretraining_config):
    """`create_optimizer` with a `PretrainingConfig`'s settings."""
    pc = pretraining_config
    return create_optimizer(pc.learning_rate, pc.train_steps, pc.warmup_steps,
                            weight_decay=pc.weight_decay_rate, epsilon=pc.adam_epsilon, clip_norm=pc.clip_norm,
                            original_schedule=pc.original_lr_schedule, bias_correction=pc.adam_bias_correction,
                            gradient_accumulation_steps=pc.gradient_accumulation_steps, name=pc.optimizer)


def learning_rate_schedule(pretraining_config):
    """The learning rate of a `PretrainingConfig` by update step (what `pretraining_optimizer` follows).

    >>> from electra_tf.config import PretrainingConfig
    >>> schedule = learning_rate_schedule(PretrainingConfig(train_steps=100, warmup_steps=10, learning_rate=1e-3))
    >>> round(float(schedule(55)), 6)
    0.0005
    """
    pc = pretraining_config
    return WarmupLinearDecay(pc.learning_rate, pc.warmup_steps, pc.train_steps, pc.original_lr_schedule)


def micro_steps(optimizer):
    """Gradient computations so far: with accumulation over k, k per update.

    Keras's `optimizer.iterations` counts updates; its learning-rate schedules
    read the micro-step count, its variable named "iteration".
    """
    optimizer = getattr(optimizer, "inner_optimizer", optimizer)  # under a LossScaleOptimizer
    if not optimizer.gradient_accumulation_steps:
        return optimizer.iterations  # that variable itself
    return next(variable for variable in optimizer.variables if variable.name == "iteration")


def accumulation_steps(optimizer):
    return getattr(optimizer, "inner_optimizer", optimizer).gradient_accumulation_steps or 1


def update_step_and_micro_batch(optimizer):
    """`(update step, micro-batch within it)` the next gradient computation is (int64 tensors).

    >>> update_step_and_micro_batch(keras.optimizers.SGD(gradient_accumulation_steps=4))
    (<tf.Tensor: shape=(), dtype=int64, numpy=0>, <tf.Tensor: shape=(), dtype=int64, numpy=0>)
    """
    micro_step = tf.convert_to_tensor(micro_steps(optimizer))  # a tensor, not the Keras variable
    accumulation = accumulation_steps(optimizer)
    return micro_step // accumulation, micro_step % accumulation
