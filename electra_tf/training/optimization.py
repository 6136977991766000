"""AdamW with ELECTRA's learning-rate schedule (Keras has no linear warm-up then linear decay) and weight-decay
exclusions; `original_formula` and `bias_correction=False` give the original's (docs/pretraining.md).

Example:
>>> schedule = WarmupLinearDecay(1e-3, warmup_steps=10, total_steps=100)
>>> [round(float(schedule(s)), 6) for s in (0, 5, 10, 55, 100)]
[0.0, 0.0005, 0.001, 0.0005, 0.0]
>>> original = WarmupLinearDecay(1e-3, warmup_steps=10, total_steps=100, original_formula=True)
>>> [round(float(original(s)), 6) for s in (0, 5, 10, 55, 100)]
[0.0, 0.000475, 0.0009, 0.00045, 0.0]
"""

import re

import keras
import tensorflow as tf

from electra_tf.util.library_internals import (
    fused_adam_checked,
    fused_adam_update,
    micro_step_counter,
    variable_index,
)

# LayerNorm's `gamma`/`beta` and every bias: not weight-decayed, as in the original.
NO_WEIGHT_DECAY = ("gamma", "beta", "bias")


@keras.saving.register_keras_serializable(package="electra_tf")
class WarmupLinearDecay(keras.optimizers.schedules.LearningRateSchedule):
    """Linear warm-up from 0 to `peak` over `warmup_steps`, then linear decay to 0 at `total_steps`
    (`original_formula`: `peak · min(1, step/warmup) · (1 - step/total)`)."""

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
@keras.saving.register_keras_serializable(package="electra_tf", name="LayerwiseAdamW")  # the names it had before
@keras.saving.register_keras_serializable(package="electra_tf", name="FusedAdamW")  # (in saved `.keras` files)
class AdamW(keras.optimizers.Adam):
    """Keras's Adam with decoupled weight decay (`w ← w - lr·wd·w`, as Keras's AdamW), through Keras's public
    optimizer API only. `lr_multipliers`: variable path → its rate's factor (`layerwise_decay`; every variable needs
    one); `bias_correction=False`: the original's Adam, without `√(1-β2^t)/(1-β1^t)`; `fused=True`: each update in
    TensorFlow's one `ResourceApplyAdam` kernel (checked Keras versions only).

    Example:
    >>> import numpy as np
    >>> w = keras.Variable(np.ones(2, "float32"))
    >>> optimizer = AdamW(learning_rate=0.1, weight_decay=0.0, epsilon=0.0, bias_correction=False)
    >>> optimizer.apply([np.array([1.0, -2.0], "float32")], [w])
    >>> [round(float(x), 4) for x in w.numpy()]  # 1 - 0.1 · (0.1·g) / √(0.001·g²)
    [0.6838, 1.3162]
    """

    def __init__(self, weight_decay=0.004, lr_multipliers=None, bias_correction=True, fused=False, **kwargs):
        super().__init__(**kwargs)  # Keras's own decay left off: `update_step` applies it at the rate computed once
        if self.amsgrad:
            raise ValueError("AdamW has no amsgrad")
        if fused and not fused_adam_checked():
            raise ValueError(f"fused=True: TensorFlow's fused Adam kernel is not checked on keras {keras.version()} "
                             "(util.library_internals.FUSED_ADAM_KERAS); use fused=False")
        self.decoupled_weight_decay = weight_decay
        self.lr_multipliers = None if lr_multipliers is None else dict(lr_multipliers)
        self.bias_correction = bias_correction
        self.fused = fused
        self.excluded = (frozenset(), ())  # ids of variables and name patterns kept from decay

    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        super().exclude_from_weight_decay(var_list=var_list, var_names=var_names)
        self.excluded = (frozenset(id(variable) for variable in var_list or ()), tuple(var_names or ()))

    def build(self, var_list):
        if self.built:
            return
        rates = self.lr_multipliers
        missing = [] if rates is None else [v.path for v in var_list if v.path not in rates]
        if missing:
            raise ValueError(f"no learning-rate multiplier for {missing[:5]} ({len(missing)} variables)")
        self._multipliers = [1.0 if rates is None else rates[v.path] for v in var_list]
        excluded_ids, excluded_names = self.excluded
        self._decays = [bool(self.decoupled_weight_decay) and id(v) not in excluded_ids and not any(
            re.search(pattern, v.name) for pattern in excluded_names) for v in var_list]  # Keras's rule
        super().build(var_list)

    def update_step(self, gradient, variable, learning_rate):
        index = variable_index(self, variable)
        dtype = variable.dtype
        learning_rate = tf.cast(learning_rate, dtype)
        if self._multipliers[index] != 1.0:
            learning_rate *= self._multipliers[index]
        if self._decays[index]:
            variable.assign_sub(variable * (tf.cast(self.decoupled_weight_decay, dtype) * learning_rate))
        if self.bias_correction or not self.fused:
            powers = tf.pow(tf.constant([self.beta_1, self.beta_2], dtype), tf.cast(self.iterations + 1, dtype))
        if not self.fused:
            if not self.bias_correction:  # cancels the factor Keras's step applies
                learning_rate *= (1 - powers[0]) / tf.sqrt(1 - powers[1])
            return super().update_step(gradient, variable, learning_rate)
        if not self.bias_correction:  # the kernel's step size lr·√(1-β2^t)/(1-β1^t) is then lr
            powers = tf.zeros([2], dtype)
        fused_adam_update(self, variable, tf.cast(gradient, dtype), lr=learning_rate, beta1_power=powers[0],
                          beta2_power=powers[1], beta1=tf.constant(self.beta_1, dtype),
                          beta2=tf.constant(self.beta_2, dtype), epsilon=tf.constant(self.epsilon, dtype))

    def get_config(self):
        return {**super().get_config(), "weight_decay": self.decoupled_weight_decay,
                "lr_multipliers": self.lr_multipliers, "bias_correction": self.bias_correction, "fused": self.fused}


def create_optimizer(learning_rate, total_steps, warmup_steps, weight_decay=0.01, epsilon=1e-6,
                     clip_norm=1.0, original_schedule=False, gradient_accumulation_steps=1, name="adamw",
                     lr_multipliers=None, bias_correction=True, fused=None):
    """`AdamW` (or LAMB), β 0.9/0.999, `WarmupLinearDecay` over updates (stretched over the micro-steps of
    `gradient_accumulation_steps`), global-norm clipping, no decay on LayerNorm/bias. `fused=None`: the fused kernel
    where it was checked (`fused_adam_checked`).

    Example:
    >>> optimizer = create_optimizer(5e-4, total_steps=1000, warmup_steps=100)
    >>> type(optimizer).__name__, optimizer.fused, float(optimizer.global_clipnorm)
    ('AdamW', True, 1.0)
    """
    k = gradient_accumulation_steps
    if name not in ("adamw", "lamb"):
        raise ValueError(f"optimizer {name!r} is not one of ['adamw', 'lamb']")
    options = {}
    if name == "adamw":
        fused = fused_adam_checked() if fused is None else fused
        options = {"lr_multipliers": lr_multipliers, "bias_correction": bias_correction, "fused": fused}
    elif lr_multipliers is not None or not bias_correction or fused:
        raise ValueError("lr_multipliers, bias_correction=False and fused are implemented for adamw only")
    optimizer = (AdamW if name == "adamw" else keras.optimizers.Lamb)(
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
    """Gradient computations so far (the variable the schedule reads): with accumulation over k, k per update."""
    return micro_step_counter(getattr(optimizer, "inner_optimizer", optimizer))  # under a LossScaleOptimizer


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
