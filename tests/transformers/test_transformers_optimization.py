"""transformers 4.x's `create_optimizer` on electra_tf: the recorded schedules, optimizer settings, weight-decay
choice and updates (tests/fixtures/transformers_data/optimization.json, tools/make_transformers_data_fixtures.py)."""

import json
from pathlib import Path

import keras
import numpy as np
import pytest

from electra_tf import ElectraConfig
from electra_tf.transformers.names import TFElectraForSequenceClassification
from electra_tf.transformers.optimization import AdamWeightDecay, create_optimizer

RECORDED = json.loads((Path(__file__).parents[1] / "fixtures" / "transformers_data" / "optimization.json")
                      .read_text(encoding="utf-8"))
CASES = RECORDED["cases"]


def tiny_model():
    return TFElectraForSequenceClassification(ElectraConfig(**RECORDED["tiny_config"]), num_labels=2)


def variable_at(path, values):
    """A variable whose path is `path` (as a layer's variables get theirs)."""
    *scopes, name = path.split("/")
    if not scopes:
        return keras.Variable(np.array(values, "float32"), name=name)
    with keras.name_scope(scopes[0]):
        return variable_at("/".join(scopes[1:] + [name]), values)


@pytest.mark.parametrize("case", CASES, ids=lambda case: str(sorted(case["setting"].items())))
def test_schedule_optimizer_and_updates_are_transformers(case):
    optimizer, schedule = create_optimizer(**case["setting"])
    assert (type(optimizer).__name__, type(schedule).__name__) == (case["optimizer"], case["schedule"])
    rates = [float(schedule(step)) for step in range(len(case["learning_rates"]))]
    np.testing.assert_allclose(rates, case["learning_rates"], rtol=1e-6, atol=1e-12)
    config = optimizer.get_config()
    for key, value in case["config"].items():
        assert config[key] == (value if value is None else pytest.approx(value, rel=1e-6)), key
    # the same weights decay: transformers' tiny model and ours have the same parameters
    model = tiny_model()
    variables = model.trainable_variables
    decays = getattr(optimizer, "decays", lambda variable: False)
    assert sum(int(np.prod(v.shape)) for v in variables) == case["all_parameters"]
    assert sum(int(np.prod(v.shape)) for v in variables if decays(v)) == case["decayed_parameters"]
    # three updates with the recorded gradients give transformers' weights
    initial = np.linspace(-1, 1, 4, dtype="float32").reshape(2, 2)
    weights = {path: variable_at(path, initial) for path in case["variables_after_3_steps"]}
    for step in range(3):
        gradients = [np.full((2, 2), 0.1 * (step + 1) * (i + 1) - 0.25, "float32") for i in range(3)]
        optimizer.apply(gradients, list(weights.values()))
    for path, variable in weights.items():
        np.testing.assert_allclose(variable.numpy(), case["variables_after_3_steps"][path], rtol=1e-5, atol=1e-7)


def test_the_optimizer_and_schedule_survive_keras_serialization():
    optimizer, schedule = create_optimizer(1e-3, 30, 6, weight_decay_rate=0.1, power=2.0, min_lr_ratio=0.1)
    again = keras.optimizers.deserialize(keras.optimizers.serialize(optimizer))
    assert type(again) is AdamWeightDecay and again.weight_decay_rate == 0.1
    assert again.get_config()["learning_rate"]["class_name"].endswith("WarmUp")
    restored = keras.optimizers.schedules.deserialize(keras.optimizers.schedules.serialize(schedule))
    np.testing.assert_allclose([float(restored(s)) for s in range(32)], [float(schedule(s)) for s in range(32)])


def test_bad_step_counts_are_refused_in_one_line():
    with pytest.raises(ValueError, match=r"^num_train_steps=5 must exceed num_warmup_steps=5 \(the decay after the "
                                         r"warm-up needs at least one step\)$"):
        create_optimizer(1e-3, num_train_steps=5, num_warmup_steps=5)
    with pytest.raises(ValueError, match=r"^num_warmup_steps=-1: a count of steps \(an int >= 0\) is needed$"):
        create_optimizer(1e-3, num_train_steps=5, num_warmup_steps=-1)
