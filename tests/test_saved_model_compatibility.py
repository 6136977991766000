"""`.keras` files written before the package was reorganised (commit 2d517d5) still load, with the same outputs."""

from pathlib import Path

import keras
import numpy as np
import pytest

import electra_tf  # noqa: F401  (registers our classes with Keras, as any user's `import electra_tf` does)
from electra_tf import ElectraDiscriminator, ElectraForSequenceClassification

FIXTURES = Path(__file__).parent / "fixtures" / "keras_2d517d5"
EXPECTED = np.load(FIXTURES / "expected.npz")
BATCH = {name: EXPECTED[f"batch/{name}"] for name in ("input_ids", "attention_mask", "token_type_ids")}
MODELS = sorted(path.stem for path in FIXTURES.glob("*.keras") if path.stem != "pretrainer")


def inputs_for(name):
    if name == "generator":
        return dict(BATCH, mask_positions=np.array([[1, 3], [2, 5]], "int32"))
    if name == "multiple_choice":
        return {key: np.stack([value, value[::-1]], 1) for key, value in BATCH.items()}
    return BATCH


@pytest.mark.parametrize("name", MODELS)
def test_a_model_saved_before_the_redesign_loads_with_the_same_outputs(name):
    model = keras.saving.load_model(FIXTURES / f"{name}.keras", safe_mode=True)
    outputs = model(inputs_for(name), training=False)
    expected = {key.split("/", 1)[1]: value for key, value in EXPECTED.items() if key.startswith(f"{name}/")}
    assert sorted(outputs) == sorted(expected)
    for key, value in expected.items():
        np.testing.assert_allclose(np.asarray(outputs[key]), value, atol=1e-6, err_msg=key)


def test_a_saved_fine_tuned_model_keeps_its_optimizer_and_trains_on():
    model = keras.saving.load_model(FIXTURES / "finetuned_classifier.keras", safe_mode=True)
    assert type(model.optimizer).__name__ == "AdamW" and model.optimizer.lr_multipliers  # was LayerwiseAdamW
    assert int(model.optimizer.iterations) == 1
    model.fit(BATCH, {"logits": np.array([0, 2])}, epochs=1, verbose=0)
    assert int(model.optimizer.iterations) == 2


def test_a_saved_pretrainer_loads_and_its_networks_load_into_our_classes():
    pretrainer = keras.saving.load_model(FIXTURES / "pretrainer.keras", safe_mode=True)
    outputs = pretrainer(BATCH)
    # The same masked batch and generator; the replacements are drawn by today's default sampler (inverse CDF,
    # not the Gumbel-max of the recording), so the discriminator is checked on the batch they corrupted.
    np.testing.assert_allclose(np.asarray(outputs["mlm_logits"]), EXPECTED["pretrainer/mlm_logits"], atol=1e-6)
    discriminator = ElectraDiscriminator.from_pretrained(FIXTURES / "pretrainer.keras")
    corrupted = dict(BATCH, input_ids=np.asarray(outputs["corrupted_ids"]))
    np.testing.assert_allclose(np.asarray(discriminator(corrupted)["logits"]), np.asarray(outputs["rtd_logits"]),
                               atol=1e-6)
    selected = np.zeros(BATCH["input_ids"].shape, bool)
    np.put_along_axis(selected, np.asarray(outputs["mask_positions"]), np.asarray(outputs["mask_weights"]) > 0, 1)
    replaced = np.asarray(outputs["corrupted_ids"]) != BATCH["input_ids"]
    assert replaced.any() and not (replaced & ~selected).any()  # only selected tokens are replaced
    classifier = ElectraForSequenceClassification.from_pretrained(FIXTURES / "classifier_original.keras")
    assert classifier.num_labels == 3 and classifier.head == "original"
