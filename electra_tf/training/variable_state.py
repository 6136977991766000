"""Per-variable state for Keras optimizers that step each variable their own way, on Keras's public API.

Keras's optimizers keep each variable's index, its slot variables and the weight-decay exclusions in private
attributes. `PerVariableState`, mixed into a Keras optimizer, keeps its own: `build` indexes the variables
(with, under a `tf.distribute` strategy, each replica's copy: what `update_step` receives),
`add_variable_from_reference` (the public call every Keras optimizer makes for a slot) records each slot under
its variable's index and name, and `exclude_from_weight_decay` records what it excludes. The slots stay where
Keras tracks them, so checkpoints keep their layout.

Example:
>>> import keras, numpy as np
>>> class Adam(PerVariableState, keras.optimizers.AdamW):
...     pass
>>> optimizer = Adam(weight_decay=0.1)
>>> optimizer.exclude_from_weight_decay(var_names=["bias"])
>>> kernel, bias = keras.Variable(np.ones(2), name="kernel"), keras.Variable(np.ones(2), name="bias")
>>> optimizer.build([kernel, bias])
>>> optimizer.index_of(bias), optimizer.slot(1, "velocity").name, optimizer.decays(kernel), optimizer.decays(bias)
(1, 'bias_velocity', True, False)
"""

import dataclasses
import re

import tensorflow as tf


@dataclasses.dataclass
class _Records:
    """A plain holder, so neither Keras's tracker nor `tf.train.Checkpoint` tracks what it holds a second time."""

    index: dict = dataclasses.field(default_factory=dict)  # id of a variable or replica copy -> its index
    slots: dict = dataclasses.field(default_factory=dict)  # (index, slot name) -> slot variable
    excluded_ids: frozenset = frozenset()
    excluded_names: tuple = ()


class PerVariableState:
    """Mixin for a `keras.optimizers.Optimizer` subclass (before it in the bases): `index_of`, `slot`, `decays`."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.records = _Records()

    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        super().exclude_from_weight_decay(var_list=var_list, var_names=var_names)
        self.records.excluded_ids = frozenset(id(variable) for variable in var_list or ())
        self.records.excluded_names = tuple(var_names or ())

    def build(self, var_list):
        if self.built:
            return
        strategy = tf.distribute.get_strategy()
        for index, variable in enumerate(var_list):  # before Keras's build, which makes the slots
            copies = strategy.experimental_local_results(getattr(variable, "value", variable))
            self.records.index.update({id(copy): index for copy in (variable, *copies)})
        super().build(var_list)

    def add_variable_from_reference(self, reference_variable, name=None, initializer="zeros"):
        slot = super().add_variable_from_reference(reference_variable, name=name, initializer=initializer)
        index = self.records.index.get(id(reference_variable))
        if index is not None:
            self.records.slots[index, name] = slot
        return slot

    def index_of(self, variable):
        """The index in the built variable list of `variable` (or of the replica copy `update_step` gets)."""
        return self.records.index[id(variable)]

    def slot(self, index, name):
        """The slot variable `name` (Adam's "momentum", "velocity") of the variable at `index`."""
        return self.records.slots[index, name]

    def decays(self, variable):
        """Whether `variable` is weight-decayed: Keras's rule (a rate is set, and neither the variable nor a
        name pattern is excluded; patterns are searched in `variable.name`)."""
        return bool(self.weight_decay) and id(variable) not in self.records.excluded_ids and not any(
            re.search(pattern, variable.name) for pattern in self.records.excluded_names)
