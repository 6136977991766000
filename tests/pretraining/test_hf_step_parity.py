"""One joint ELECTRA step equals Hugging Face's: losses and every gradient, on the same weights and draws.

The fixture (`tests/fixtures/hf/pretraining_step`, from `tools/make_hf_fixtures.py`) holds the batch, its
masked positions, the sampled replacements, the losses and the gradients of `ElectraForMaskedLM` +
`ElectraForPreTraining` (embedding block and generator output layer tied by hand) run on the `discriminator`
and `generator` fixtures' weights. Here the same step runs through the pre-trainer's own pieces (`generate`,
`mlm_loss`, `discriminate`, `rtd_loss`, `pretraining_losses`) with those draws; no torch is needed.
"""

from pathlib import Path

import numpy as np
import tensorflow as tf

from electra_tf import ElectraPretrainer, PretrainingConfig
from electra_tf.checkpoints import hf
from electra_tf.checkpoints.mapping import model_entries, to_hf
from electra_tf.checkpoints.safetensors_io import read_safetensors
from electra_tf.checkpoints.transfer import load_state
from electra_tf.pretraining.masking import MaskedBatch, scatter_positions

FIXTURES = Path(__file__).parents[1] / "fixtures" / "hf"


def test_one_joint_step_matches_transformers():
    step = read_safetensors(str(FIXTURES / "pretraining_step" / "step.safetensors"))
    discriminator, generator = (hf.read_folder(str(FIXTURES / name)) for name in ("discriminator", "generator"))
    pretraining = PretrainingConfig(generator_hidden_size=0.5, max_seq_length=9, max_predictions_per_seq=3)
    pretrainer = ElectraPretrainer(discriminator.config, pretraining, mask_token_id=4, special_token_ids=[0, 2, 3])
    load_state(pretrainer.discriminator, discriminator.state, discriminator.architecture)
    load_state(pretrainer.generator, generator.state, generator.architecture)

    inputs = {key: tf.constant(step[key]) for key in ("input_ids", "attention_mask", "token_type_ids")}
    masked = MaskedBatch(*(tf.constant(step[key]) for key in ("masked_input_ids", "mask_positions", "mask_weights",
                                                              "mask_labels")))
    corrupted = scatter_positions(inputs["input_ids"], masked.positions, masked.weights, tf.constant(step["sampled"]))
    np.testing.assert_array_equal(corrupted.numpy(), step["corrupted_ids"])
    variables = pretrainer.trainable_variables
    with tf.GradientTape() as tape:
        outputs = pretrainer.generate(inputs, masked, training=False)  # the fixture ran without dropout
        labels = tf.cast(tf.not_equal(corrupted, inputs["input_ids"]), tf.float32) * outputs.real_tokens
        outputs = pretrainer.discriminate(inputs, outputs._replace(corrupted_ids=corrupted, rtd_labels=labels),
                                          training=False)
        losses = pretrainer.pretraining_losses(outputs)
    np.testing.assert_array_equal(outputs.rtd_labels.numpy(), step["rtd_labels"])
    for name in ("mlm_loss", "rtd_loss", "loss"):
        assert abs(float(losses[name]) - float(step[name][0])) < 1e-5, (name, float(losses[name]), step[name])

    gradients = {id(v): g for v, g in zip(variables, tape.gradient(losses["loss"], variables), strict=True)}
    compared, worst = set(), 0.0
    for network in ("discriminator", "generator"):
        for entry in model_entries(getattr(pretrainer, network)):
            if id(entry.variable) in compared:  # the shared embedding block: once, under the discriminator
                continue
            compared.add(id(entry.variable))
            expected = step[f"grad/{network}/{entry.hf}"]
            ours = to_hf(tf.convert_to_tensor(gradients[id(entry.variable)]).numpy(), entry.layout)
            if entry.hf.endswith("attention.self.key.bias"):  # 0 in exact arithmetic (softmax ignores it): round-off
                assert np.abs(ours).max() < 1e-6 and np.abs(expected).max() < 1e-6, entry.hf
                continue
            difference = np.abs(ours - expected).max() / np.abs(expected).max()
            assert difference <= 1e-5, (entry.hf, difference)
            worst = max(worst, difference)
    assert compared == {id(v) for v in variables}  # every gradient, the tied decoder's included
    print(f"largest relative gradient difference: {worst:.1e}")  # 2e-6 when written
    expected_names = {key for key in step if key.startswith("grad/")}
    assert len(expected_names) == len(compared)  # Hugging Face's tied output weight is the word embeddings
