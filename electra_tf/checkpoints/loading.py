"""Assigning a `{name: array}` dictionary into a model's variables, strictly and all at once: every mismatch is
listed in one error before anything is assigned.

Example:
>>> import keras, numpy as np
>>> w = keras.Variable(np.zeros((2, 3), "float32"), name="w")
>>> slots = {"w": Slot(w, (2, 3), lambda array: array)}
>>> report, assignments = plan(slots, {"w": np.ones((2, 3), "float32")})
>>> apply(assignments)
>>> report.loaded, float(w.numpy().sum())
(['w'], 6.0)
>>> plan(slots, {"w": np.ones((3, 2), "float32"), "v": np.ones(2, "float32")}, source="ckpt")
Traceback (most recent call last):
...
electra_tf.checkpoints.loading.CheckpointMismatchError: ckpt does not fit the model:
  shape mismatch (checkpoint vs model; is the config right?): w: (3, 2) vs (2, 3)
  unexpected (in the checkpoint, not in the model; allow_unexpected=True ignores them): v
"""

import dataclasses
from typing import Callable

import numpy as np

SHOWN = 10


class CheckpointMismatchError(ValueError):
    """A checkpoint does not fit a model: shapes, missing or unexpected weights."""


@dataclasses.dataclass(frozen=True)
class Slot:
    """Where one checkpoint array goes: the variable, the array's shape in the checkpoint, the conversion to ours."""

    variable: object
    shape: tuple
    convert: Callable


@dataclasses.dataclass
class LoadReport:
    """What a load did: names loaded, missing, unexpected; and (from `transfer.load_state`) our variables left `new`
    and the checkpoint's pre-training head `dropped`."""

    loaded: list
    missing: list = dataclasses.field(default_factory=list)
    unexpected: list = dataclasses.field(default_factory=list)
    new: list = dataclasses.field(default_factory=list)
    dropped: list = dataclasses.field(default_factory=list)


def _listing(names):
    shown = ", ".join(names[:SHOWN])
    return shown + (f" … and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


def plan(slots, arrays, allow_missing=False, allow_unexpected=False, source="checkpoint"):
    """Checks everything and converts every array; `(LoadReport, assignments)`, nothing assigned yet (`apply` does)."""
    missing = [name for name in slots if name not in arrays]
    unexpected = [name for name in arrays if name not in slots]
    mismatched = [f"{name}: {tuple(np.shape(arrays[name]))} vs {tuple(slot.shape)}"
                  for name, slot in slots.items()
                  if name in arrays and tuple(np.shape(arrays[name])) != tuple(slot.shape)]
    problems = []
    if mismatched:
        problems.append("shape mismatch (checkpoint vs model; is the config right?): " + _listing(mismatched))
    if missing and not allow_missing:
        problems.append("missing (in the model, not in the checkpoint; allow_missing=True keeps them as "
                        "initialised): " + _listing(missing))
    if unexpected and not allow_unexpected:
        problems.append("unexpected (in the checkpoint, not in the model; allow_unexpected=True ignores "
                        "them): " + _listing(unexpected))
    if problems:
        raise CheckpointMismatchError(f"{source} does not fit the model:\n  " + "\n  ".join(problems))
    assignments = []
    for name, slot in slots.items():
        if name in arrays:
            value = np.asarray(slot.convert(arrays[name]))
            check_values(name, value, slot.variable.dtype, source)
            assignments.append((slot.variable, value.astype(slot.variable.dtype)))
    report = LoadReport(loaded=[name for name in slots if name in arrays], missing=missing, unexpected=unexpected)
    return report, assignments


def check_values(name, value, dtype, source="checkpoint"):
    """Refuses what a variable of `dtype` must not take: no numbers, integers (a quantized checkpoint) for floating
    weights, NaN or infinity (a diverged or damaged checkpoint).

    >>> check_values("w", np.array([1, 2], "int8"), "float32", "model.safetensors")
    Traceback (most recent call last):
    ...
    electra_tf.checkpoints.loading.CheckpointMismatchError: model.safetensors: w is stored as int8 but the model \
    holds float32 weights (a quantized checkpoint?); use a floating-point checkpoint
    """
    if not np.issubdtype(value.dtype, np.number):
        raise CheckpointMismatchError(f"{source}: {name} holds {value.dtype}, not numbers")
    if "float" in str(dtype) and not np.issubdtype(value.dtype, np.floating):
        raise CheckpointMismatchError(f"{source}: {name} is stored as {value.dtype} but the model holds {dtype} "
                                      "weights (a quantized checkpoint?); use a floating-point checkpoint")
    if np.issubdtype(value.dtype, np.floating) and not np.isfinite(value).all():
        bad = int(np.size(value) - np.isfinite(value).sum())
        raise CheckpointMismatchError(f"{source}: {name} holds {bad} NaN or infinite value(s) of {np.size(value)}: "
                                      "the checkpoint is damaged or from a run that diverged")


def apply(assignments):
    """Assigns the values `plan` prepared."""
    for variable, value in assignments:
        variable.assign(value)
