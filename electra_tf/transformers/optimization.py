"""transformers 4.x's `create_optimizer(init_lr, num_train_steps, num_warmup_steps, ...)` → `(optimizer,
lr_schedule)` on Keras 3: transformers' warm-up and polynomial decay, the same value at every step, and Keras's Adam
or AdamW deciding the decayed weights by their paths as transformers' `AdamWeightDecay`. (The tools' optimizer is
`electra_tf.training.optimization.create_optimizer`.)

Example:
>>> optimizer, schedule = create_optimizer(init_lr=2e-5, num_train_steps=100, num_warmup_steps=10,
...                                        weight_decay_rate=0.01)
>>> type(optimizer).__name__, [round(float(schedule(step)), 9) for step in (0, 5, 10, 55, 100)]
('AdamWeightDecay', [0.0, 1e-05, 2e-05, 1e-05, 0.0])
"""

import keras

# transformers' `create_optimizer` keeps these out of weight decay (substrings of a variable's path).
EXCLUDE_FROM_WEIGHT_DECAY = ("LayerNorm", "layer_norm", "bias")


@keras.saving.register_keras_serializable(package="electra_tf")
class WarmUp(keras.optimizers.schedules.LearningRateSchedule):
    """transformers' `WarmUp`: `initial_learning_rate * (step / warmup_steps) ** power` before `warmup_steps`,
    then `decay_schedule_fn(step - warmup_steps)`.

    >>> decay = keras.optimizers.schedules.PolynomialDecay(1.0, decay_steps=10, end_learning_rate=0.0)
    >>> [round(float(WarmUp(1.0, decay, warmup_steps=4)(step)), 4) for step in (0, 2, 4, 9, 14)]
    [0.0, 0.5, 1.0, 0.5, 0.0]
    """

    def __init__(self, initial_learning_rate, decay_schedule_fn, warmup_steps, power=1.0, name=None):
        super().__init__()
        self.initial_learning_rate = initial_learning_rate
        self.decay_schedule_fn = decay_schedule_fn
        self.warmup_steps = warmup_steps
        self.power = power
        self.name = name

    def __call__(self, step):
        step = keras.ops.cast(step, "float32")
        warmup_steps = keras.ops.cast(self.warmup_steps, "float32")
        warmup = self.initial_learning_rate * keras.ops.power(step / warmup_steps, self.power)
        return keras.ops.where(step < warmup_steps, warmup, self.decay_schedule_fn(step - warmup_steps))

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_schedule_fn": keras.saving.serialize_keras_object(self.decay_schedule_fn),
                "warmup_steps": self.warmup_steps, "power": self.power, "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**{**config, "decay_schedule_fn": keras.saving.deserialize_keras_object(
            config["decay_schedule_fn"])})


@keras.saving.register_keras_serializable(package="electra_tf")
class AdamWeightDecay(keras.optimizers.AdamW):
    """transformers' `AdamWeightDecay` on Keras 3's AdamW: `weight_decay_rate` decays a variable unless its path
    holds one of `exclude_from_weight_decay`, except when it holds one of `include_in_weight_decay` (plain
    substrings, as transformers matches them).

    >>> import numpy as np
    >>> optimizer = AdamWeightDecay(learning_rate=0.1, weight_decay_rate=0.5, exclude_from_weight_decay=["bias"])
    >>> kernel, bias = keras.Variable(np.ones(1, "float32"), name="kernel"), keras.Variable(np.ones(1), name="bias")
    >>> optimizer.apply([np.zeros(1, "float32"), np.zeros(1, "float32")], [kernel, bias])
    >>> round(float(kernel.numpy()[0]), 6), float(bias.numpy()[0])  # 1 - 0.1 · 0.5 · 1, and no decay
    (0.95, 1.0)
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False,
                 weight_decay_rate=0.0, include_in_weight_decay=None, exclude_from_weight_decay=None,
                 name="AdamWeightDecay", **kwargs):
        kwargs.pop("weight_decay", None)  # (in a saved config: weight_decay_rate is it)
        super().__init__(learning_rate=learning_rate, weight_decay=weight_decay_rate, beta_1=beta_1, beta_2=beta_2,
                         epsilon=epsilon, amsgrad=amsgrad, name=name, **kwargs)
        self.weight_decay_rate = weight_decay_rate
        self.include_in_weight_decay = list(include_in_weight_decay or ())
        self.exclude_names = list(exclude_from_weight_decay or ())

    def decays(self, variable):
        """Whether `variable` is weight-decayed (transformers' `_do_use_weight_decay` on its path)."""
        paths = (variable.path, variable.path.replace("layer_norm", "LayerNorm"))  # (transformers' name of it)
        if any(name in path for name in self.include_in_weight_decay for path in paths):
            return True
        return not any(name in path for name in self.exclude_names for path in paths)

    def build(self, var_list):
        self.exclude_from_weight_decay(var_list=[variable for variable in var_list if not self.decays(variable)])
        super().build(var_list)

    def get_config(self):
        return {**super().get_config(), "weight_decay_rate": self.weight_decay_rate,
                "include_in_weight_decay": self.include_in_weight_decay,
                "exclude_from_weight_decay": self.exclude_names}


def create_optimizer(init_lr, num_train_steps, num_warmup_steps, min_lr_ratio=0.0, adam_beta1=0.9,
                     adam_beta2=0.999, adam_epsilon=1e-8, adam_clipnorm=None, adam_global_clipnorm=None,
                     weight_decay_rate=0.0, power=1.0, include_in_weight_decay=None):
    """transformers' `create_optimizer`: `(optimizer, lr_schedule)`."""
    for name, value in (("num_train_steps", num_train_steps), ("num_warmup_steps", num_warmup_steps)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name}={value!r}: a count of steps (an int >= 0) is needed")
    if num_train_steps <= num_warmup_steps:
        raise ValueError(f"num_train_steps={num_train_steps} must exceed num_warmup_steps={num_warmup_steps} "
                         "(the decay after the warm-up needs at least one step)")
    lr_schedule = keras.optimizers.schedules.PolynomialDecay(
        initial_learning_rate=init_lr, decay_steps=num_train_steps - num_warmup_steps,
        end_learning_rate=init_lr * min_lr_ratio, power=power)
    if num_warmup_steps:
        lr_schedule = WarmUp(initial_learning_rate=init_lr, decay_schedule_fn=lr_schedule,
                             warmup_steps=num_warmup_steps)
    adam = dict(learning_rate=lr_schedule, beta_1=adam_beta1, beta_2=adam_beta2, epsilon=adam_epsilon,
                clipnorm=adam_clipnorm, global_clipnorm=adam_global_clipnorm)
    if weight_decay_rate > 0.0:
        optimizer = AdamWeightDecay(**adam, weight_decay_rate=weight_decay_rate,
                                    exclude_from_weight_decay=list(EXCLUDE_FROM_WEIGHT_DECAY),
                                    include_in_weight_decay=include_in_weight_decay)
    else:
        optimizer = keras.optimizers.Adam(**adam)
    return optimizer, lr_schedule
