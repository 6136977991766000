"""Every pre-training variant's step, as the code computed it when the fixture was recorded (golden values).

Each variant the config allows (every objective, weight sharing, generator type and training algorithm, with
dropout on in one) is built on the tiny config, given weights drawn from each variable's path (so the result
does not depend on the order layers create their variables), and trained eagerly by SGD(1) on one fixed batch:
the step's logged losses and metrics and every variable's gradient (its change) are compared with
`tests/fixtures/pretraining_golden.npz`. A refactor that changes what any variant computes fails here.

Re-record (only when a change of the numbers is intended, and say so in the commit):
`ELECTRA_TF_WRITE_GOLDEN=1 .venv/bin/python -m pytest -q tests/pretraining/test_golden_steps.py`
"""

import dataclasses
import os
import zlib
from pathlib import Path

import keras
import numpy as np
import pytest

FIXTURE = Path(__file__).parents[1] / "fixtures" / "pretraining_golden.npz"
TOLERANCE = 1e-6
PROJECTIONS = 8  # a larger gradient is kept as its dot products with this many fixed random vectors
FULL_SIZE = 16  # gradients up to this size are kept whole

TWO_STAGE = {"training_algorithm": "two_stage", "two_stage_generator_steps": 1, "generator_hidden_size": 1.0,
             "train_steps": 10}
# name -> (PretrainingConfig fields, steps); a two-stage run steps once per phase.
VARIANTS = {
    "electra": ({}, 1),
    "gumbel": ({"sampler": "gumbel"}, 1),  # the original's sampler (the others draw by inverse CDF)
    "mlm": ({"objective": "mlm"}, 1),
    "electra_15": ({"objective": "electra_15"}, 1),
    "replace_mlm": ({"objective": "replace_mlm"}, 1),
    "all_tokens_mlm": ({"objective": "all_tokens_mlm"}, 1),
    "sharing none": ({"weight_sharing": "none"}, 1),
    "sharing all": ({"weight_sharing": "all", "generator_hidden_size": 1.0}, 1),
    "sharing all, all_tokens_mlm": ({"weight_sharing": "all", "generator_hidden_size": 1.0,
                                     "objective": "all_tokens_mlm"}, 1),
    "gdes": ({"weight_sharing": "gdes"}, 1),
    "gdes, replace_mlm": ({"weight_sharing": "gdes", "objective": "replace_mlm"}, 1),
    "gdes, adversarial": ({"weight_sharing": "gdes", "training_algorithm": "adversarial"}, 1),
    "unigram": ({"generator_type": "unigram"}, 1),
    "unigram, electra_15": ({"generator_type": "unigram", "objective": "electra_15"}, 1),
    "unigram, all_tokens_mlm": ({"generator_type": "unigram", "objective": "all_tokens_mlm"}, 1),
    "two_stage": (TWO_STAGE, 2),
    "two_stage, sharing none": ({**TWO_STAGE, "weight_sharing": "none"}, 2),
    "adversarial": ({"training_algorithm": "adversarial"}, 1),
    "adversarial, electra_15": ({"training_algorithm": "adversarial", "objective": "electra_15"}, 1),
    "sampling": ({"temperature": 0.7, "disallow_correct": True, "whole_word_masking": True,
                  "random_token_rate": 0.1, "keep_token_rate": 0.05}, 1),
    "sampling, gumbel": ({"temperature": 0.7, "disallow_correct": True, "sampler": "gumbel"}, 1),
    "weights": ({"gen_weight": 0.5, "disc_weight": 10.0, "mask_prob": 0.3}, 1),
    "dropout": ({"dropout": True}, 1),
}


def _key(path):
    return zlib.crc32(path.encode())


def named_variables(pretrainer):
    """`{name: variable}`, each variable once, named by the pre-trainer's sub-layer holding it and its path."""
    named, seen = {}, set()
    for owner in [*pretrainer.layers, pretrainer]:
        for variable in owner.weights:
            if id(variable) not in seen:
                seen.add(id(variable))
                name = f"{owner.name}:{variable.path}"
                assert name not in named, f"{name} names two variables"
                named[name] = variable
    return named


def _set_weights_from_paths(pretrainer):
    """Every variable drawn from its name: float weights ~ N(0, 0.1) (gammas 1 + that), seeds fixed."""
    for name, variable in named_variables(pretrainer).items():
        draw = np.random.default_rng(_key(name))
        shape = tuple(variable.shape)
        if "float" in str(variable.dtype):
            value = draw.normal(0.0, 0.1, shape) + (1.0 if name.endswith("gamma") else 0.0)
        else:  # seed-generator states and counters
            value = draw.integers(0, 1000, shape) if shape else 0
        variable.assign(np.asarray(value, dtype=str(variable.dtype)))


def _summary(path, gradient):
    """`gradient` whole when small, else its fixed random projections and its norm."""
    flat = gradient.reshape(-1).astype(np.float64)
    if flat.size <= FULL_SIZE:
        return flat
    projections = np.random.default_rng(_key(path) + 1).normal(size=(flat.size, PROJECTIONS))
    return np.concatenate([flat @ projections / np.sqrt(flat.size), [np.linalg.norm(flat)]])


def run_variant(tiny_config, tiny_vocab, fields, steps):
    """`{name: array}`: each step's logs and gradient summaries for one variant."""
    fields = dict(fields)
    config = tiny_config
    if fields.pop("dropout", False):
        config = dataclasses.replace(tiny_config, hidden_dropout=0.1, attention_dropout=0.1)
    pretrainer = tiny_vocab.pretrainer(config, seed=0, **fields)
    _set_weights_from_paths(pretrainer)
    pretrainer.compile(optimizer=keras.optimizers.SGD(1.0), run_eagerly=True)
    batch = tiny_vocab.batch(batch_size=4, seq_length=16, seed=5)
    values = {}
    trainable = {name: v for name, v in named_variables(pretrainer).items() if v.trainable}
    for step in range(steps):
        before = {name: np.array(v) for name, v in trainable.items()}
        pretrainer.start_phase(step)  # two-stage: a phase per step, the switch-over counted in the step's change
        logs = pretrainer.train_on_batch(batch, return_dict=True)
        for name, value in logs.items():
            values[f"{step}/log/{name}"] = np.asarray(value, np.float64)
        for name, variable in trainable.items():
            values[f"{step}/grad/{name}"] = _summary(name, before[name] - np.array(variable))
    return values


@pytest.fixture(scope="module")
def golden():
    if os.environ.get("ELECTRA_TF_WRITE_GOLDEN"):
        return None
    with np.load(FIXTURE) as stored:
        return dict(stored)


def _packed(values):
    """`{key: array}` as two arrays, the keys and their values end to end (one zip entry each, not one per key)."""
    keys = sorted(values)
    sizes = [values[key].size for key in keys]
    return np.array([f"{key}:{size}" for key, size in zip(keys, sizes)]), np.concatenate(
        [values[key].reshape(-1) for key in keys])


def _unpacked(keys, flat):
    values, start = {}, 0
    for entry in keys:
        key, size = str(entry).rsplit(":", 1)
        values[key], start = flat[start:start + int(size)], start + int(size)
    return values


@pytest.mark.parametrize("name", list(VARIANTS))
def test_every_variant_computes_the_recorded_step(name, tiny_config, tiny_vocab, golden):
    values = run_variant(tiny_config, tiny_vocab, *VARIANTS[name])
    if golden is None:  # recording
        stored = dict(np.load(FIXTURE)) if FIXTURE.exists() else {}
        stored[f"{name}|keys"], stored[f"{name}|values"] = _packed(values)
        np.savez_compressed(FIXTURE, **stored)
        pytest.skip("recorded")
    expected = _unpacked(golden[f"{name}|keys"], golden[f"{name}|values"])
    assert sorted(values) == sorted(expected)
    for key, value in values.items():
        scale = max(1.0, float(np.abs(expected[key]).max(initial=0.0)))
        np.testing.assert_allclose(value, expected[key], rtol=0, atol=TOLERANCE * scale, err_msg=key)
