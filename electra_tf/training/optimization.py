"""AdamW with ELECTRA's learning-rate schedule and weight-decay exclusions.

Keras has no "linear warm-up, then linear decay to 0" schedule
(`PolynomialDecay` has no warm-up), hence `WarmupLinearDecay`. The original
multiplies the warm-up into an already decaying rate
(`lr * (1 - step/total) * min(1, step/warmup)`); `original_formula=True`
reproduces it. Everything else is Keras's own AdamW.

Example:
>>> schedule = WarmupLinearDecay(1e-3, warmup_steps=10, total_steps=100)
>>> [round(float(schedule(s)), 6) for s in (0, 5, 10, 55, 100)]
[0.0, 0.0005, 0.001, 0.0005, 0.0]
>>> original = WarmupLinearDecay(1e-3, warmup_steps=10, total_steps=100, original_formula=True)
>>> [round(float(original(s)), 6) for s in (0, 5, 10, 55, 100)]
[0.0, 0.000475, 0.0009, 0.00045, 0.0]
"""

import keras

from electra_tf.training.layerwise_decay import LayerwiseAdamW

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


def create_optimizer(learning_rate, total_steps, warmup_steps, weight_decay=0.01, epsilon=1e-6,
                     clip_norm=1.0, original_schedule=False, gradient_accumulation_steps=1, name="adamw",
                     lr_multipliers=None):
    """AdamW (or LAMB), β 0.9/0.999, `WarmupLinearDecay`, global-norm clipping, no decay on LayerNorm/bias.

    With `gradient_accumulation_steps=k` (Keras's own accumulation) the
    optimizer counts micro-steps, so the schedule is stretched k times: it
    still warms up over `warmup_steps` updates and ends after `total_steps`.
    `lr_multipliers` (variable path → factor, see `layerwise_decay`) gives
    each variable its own rate (AdamW only).

    Example:
    >>> optimizer = create_optimizer(5e-4, total_steps=1000, warmup_steps=100)
    >>> type(optimizer).__name__, float(optimizer.global_clipnorm)
    ('AdamW', 1.0)
    """
    k = gradient_accumulation_steps
    classes = {"adamw": keras.optimizers.AdamW, "lamb": keras.optimizers.Lamb}
    if name not in classes:
        raise ValueError(f"optimizer {name!r} is not one of {sorted(classes)}")
    options = {}
    if lr_multipliers is not None:
        if name != "adamw":
            raise ValueError("layer-wise learning rates are implemented for adamw only")
        classes["adamw"], options = LayerwiseAdamW, {"lr_multipliers": lr_multipliers}
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
                            original_schedule=pc.original_lr_schedule,
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
    read the micro-step count, kept in the private `_iterations`.
    """
    optimizer = getattr(optimizer, "inner_optimizer", optimizer)  # under a LossScaleOptimizer
    return optimizer._iterations


def accumulation_steps(optimizer):
    return getattr(optimizer, "inner_optimizer", optimizer).gradient_accumulation_steps or 1
