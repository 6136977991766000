import json

import keras
import numpy as np
import pytest
import tensorflow as tf

from electra_tf import ElectraConfig, ElectraPretrainer, PretrainingConfig
from electra_tf.checkpoints.safetensors_io import read_safetensors
from electra_tf.pretraining.training_algorithms import phase_at
from electra_tf.training.optimization import micro_steps

ELECTRA_METRICS = ["loss", "mlm_loss", "mlm_accuracy", "sampled_mlm_accuracy", "rtd_loss", "rtd_accuracy",
                   "rtd_precision", "rtd_recall", "rtd_auc"]




def dataset(batch, batch_size):
    return tf.data.Dataset.from_tensor_slices(batch).batch(batch_size, drop_remainder=True)


def _log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def test_losses_equal_a_numpy_reference(tiny_config, tiny_vocab):
    pretrainer = tiny_vocab.pretrainer(tiny_config, seed=0)
    batch = tiny_vocab.batch(batch_size=8, seq_length=16, seed=3)
    pretrainer.compile(optimizer="sgd")
    reported = pretrainer.evaluate(dataset(batch, 8), return_dict=True, verbose=0)
    # The first evaluation batch draws with counter -3 (see `test_step`).
    out = pretrainer.forward(batch, tf.constant(-3, tf.int64), training=False)
    masked = out.masked
    logits = np.asarray(out.mlm_logits, np.float64)
    labels, weights = np.asarray(masked.labels), np.asarray(masked.weights)
    nll = -np.take_along_axis(_log_softmax(logits), labels[..., None], axis=-1)[..., 0]
    mlm = (nll * weights).sum() / (weights.sum() + 1e-6)
    z = np.asarray(out.rtd_logits, np.float64)
    y = np.asarray(out.rtd_labels, np.float64)
    real = batch["attention_mask"].astype(np.float64)
    bce = np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))
    rtd = (bce * real).sum() / (real.sum() + 1e-6)
    assert reported["mlm_loss"] == pytest.approx(mlm, rel=1e-5)
    assert reported["rtd_loss"] == pytest.approx(rtd, rel=1e-5)
    assert reported["loss"] == pytest.approx(mlm + 50 * rtd, rel=1e-5)
    # Labels: replaced AND different, on real tokens only.
    corrupted = np.asarray(out.corrupted_ids)
    np.testing.assert_array_equal(y, (corrupted != batch["input_ids"]) * real)
    mlm_accuracy = ((logits.argmax(-1) == labels) * weights).sum() / weights.sum()
    assert reported["mlm_accuracy"] == pytest.approx(mlm_accuracy, abs=1e-6)
    assert sorted(reported) == sorted(ELECTRA_METRICS)


def test_a_sample_equal_to_the_original_is_labelled_original(tiny_config, tiny_vocab):
    pretrainer = tiny_vocab.pretrainer(tiny_config, seed=0, mask_prob=0.5)
    word = 9
    ids = np.full((4, 16), word, np.int32)
    ids[:, 0], ids[:, -1] = 2, 3
    batch = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    bias = next(w for w in pretrainer.generator.head.weights if w.path.endswith("output_bias"))
    bias.assign(np.where(np.arange(tiny_config.vocab_size) == word, 100.0, 0.0).astype(np.float32))
    out = pretrainer(batch)
    assert np.asarray(out["mask_weights"]).sum() > 0
    np.testing.assert_array_equal(np.asarray(out["sampled"])[np.asarray(out["mask_weights"]) > 0], word)
    assert np.asarray(out["rtd_labels"]).sum() == 0


def test_rtd_gradients_reach_shared_embeddings_but_not_the_generator(tiny_config, tiny_vocab):
    pretrainer = tiny_vocab.pretrainer(tiny_config, seed=0)
    batch = tiny_vocab.batch(batch_size=4, seq_length=16)
    with tf.GradientTape() as tape:
        out = pretrainer.forward(batch, tf.constant(0, tf.int64), training=True)
        rtd_loss = pretrainer.pretraining_losses(out)["rtd_loss"]
    generator_only = [v for v in pretrainer.generator.trainable_variables
                      if not any(v is s for s in pretrainer.discriminator.trainable_variables)]
    shared_word_table = pretrainer.discriminator.backbone.embedding.word_embeddings.embeddings
    gradients = tape.gradient(rtd_loss, generator_only + [shared_word_table])
    assert all(g is None for g in gradients[:-1])
    assert gradients[-1] is not None and np.abs(np.asarray(tf.convert_to_tensor(gradients[-1]))).max() > 0


def test_a_tiny_model_overfits_a_repeated_batch(tiny_config, tiny_vocab):
    pretrainer = tiny_vocab.pretrainer(tiny_config, seed=0, mask_prob=0.25, generator_hidden_size=1.0)
    batch = tiny_vocab.batch(batch_size=4, seq_length=16, seed=5)
    pretrainer.compile(optimizer=keras.optimizers.Adam(3e-3))
    first = pretrainer.evaluate(dataset(batch, 4).repeat(5), return_dict=True, verbose=0)
    pretrainer.fit(dataset(batch, 4).repeat(), steps_per_epoch=400, epochs=1, verbose=0)
    last = pretrainer.evaluate(dataset(batch, 4).repeat(5), return_dict=True, verbose=0)
    assert last["mlm_loss"] < 0.5 * first["mlm_loss"], (first, last)
    assert last["rtd_loss"] < 0.5 * first["rtd_loss"], (first, last)


def _one_sgd_step(tiny_vocab, config, batch, strategy, jit_compile="auto"):
    with strategy.scope():
        pretrainer = tiny_vocab.pretrainer(config, seed=1)
        pretrainer.compile(optimizer=keras.optimizers.SGD(0.5), jit_compile=jit_compile)
    history = pretrainer.fit(dataset(batch, 8), epochs=1, verbose=0)
    return history.history, [np.asarray(v) for v in pretrainer.trainable_variables]


def test_two_replica_step_equals_one_replica_step(tiny_config, tiny_vocab, mirrored):
    batch = tiny_vocab.batch(batch_size=8, seq_length=16, seed=7, min_length=5)  # unequal lengths per replica
    single, single_weights = _one_sgd_step(tiny_vocab, tiny_config, batch, tf.distribute.get_strategy())
    on_two, mirrored_weights = _one_sgd_step(tiny_vocab, tiny_config, batch, mirrored)
    for name in ("loss", "mlm_loss", "rtd_loss", "mlm_accuracy", "rtd_accuracy"):
        assert on_two[name][0] == pytest.approx(single[name][0], rel=1e-4), name
    moved = 0
    for a, b in zip(single_weights, mirrored_weights):
        np.testing.assert_allclose(b, a, atol=2e-5)
        moved += 1
    assert moved == len(single_weights)


def test_jit_compile_under_mirrored_strategy_compiles_each_replica(tiny_config, tiny_vocab, mirrored):
    batch = tiny_vocab.batch(batch_size=8, seq_length=16, seed=7, min_length=5)
    single, single_weights = _one_sgd_step(tiny_vocab, tiny_config, batch, tf.distribute.get_strategy())
    on_two, mirrored_weights = _one_sgd_step(tiny_vocab, tiny_config, batch, mirrored, jit_compile=True)
    # Same masks and samples with and without XLA (electra_tf.models.rng): only rounding differs.
    assert on_two["loss"][0] == pytest.approx(single["loss"][0], rel=1e-5)
    for a, b in zip(single_weights, mirrored_weights):
        np.testing.assert_allclose(b, a, atol=2e-5)
    initial = [np.asarray(v) for v in tiny_vocab.pretrainer(tiny_config, seed=1).trainable_variables]
    assert max(np.abs(a - w).max() for a, w in zip(single_weights, initial)) > 1e-2  # the step moved weights


def test_gradient_accumulation_equals_one_step_on_a_k_times_larger_batch(tiny_config, tiny_vocab):
    # Equal lengths: every micro-batch has the same counts, so the mean of the
    # micro-batch means is the big batch's mean.
    batch = tiny_vocab.batch(batch_size=8, seq_length=16, seed=9, min_length=16)
    weights = []
    for accumulation, batch_size in ((1, 8), (2, 4)):
        pretrainer = tiny_vocab.pretrainer(tiny_config, seed=2)
        pretrainer.compile(optimizer=keras.optimizers.SGD(0.5, gradient_accumulation_steps=accumulation
                                                          if accumulation > 1 else None))
        pretrainer.fit(dataset(batch, batch_size), epochs=1, verbose=0)
        assert int(pretrainer.optimizer.iterations) == 1 and int(micro_steps(pretrainer.optimizer)) == accumulation
        weights.append([np.asarray(v) for v in pretrainer.trainable_variables])
    initial = [np.asarray(v) for v in tiny_vocab.pretrainer(tiny_config, seed=2).trainable_variables]
    assert max(np.abs(a - w).max() for a, w in zip(weights[0], initial)) > 1e-2
    for a, b in zip(*weights):
        np.testing.assert_allclose(b, a, atol=2e-5)


def test_training_is_deterministic_for_a_seed(tiny_config, tiny_vocab):
    batch = tiny_vocab.batch(batch_size=8, seq_length=16, seed=2)
    runs = []
    for _ in range(2):
        pretrainer = tiny_vocab.pretrainer(tiny_config, seed=4)
        pretrainer.compile(optimizer=keras.optimizers.Adam(1e-3))
        runs.append(pretrainer.fit(dataset(batch, 4).repeat(2), epochs=1, verbose=0).history["loss"])
    assert runs[0] == runs[1]


def test_jit_compile_on_one_device_matches_the_plain_step(tiny_config, tiny_vocab):
    batch = tiny_vocab.batch(batch_size=8, seq_length=16, seed=8)
    losses = []
    for jit in (False, True):
        pretrainer = tiny_vocab.pretrainer(tiny_config, seed=3)
        pretrainer.compile(optimizer=keras.optimizers.Adam(1e-3), jit_compile=jit)
        assert pretrainer.jit_compile is jit
        losses.append(pretrainer.fit(dataset(batch, 4).repeat(2), epochs=1, verbose=0).history["loss"][0])
    assert np.isfinite(losses[1])
    assert losses[1] == pytest.approx(losses[0], rel=1e-5)


def test_mlm_objective_trains_a_full_size_generator_alone(tiny_config, tiny_vocab):
    pretrainer = tiny_vocab.pretrainer(tiny_config, seed=0, objective="mlm")
    assert pretrainer.discriminator is None
    assert pretrainer.generator.config == tiny_config
    assert pretrainer.backbone is pretrainer.generator.backbone
    pretrainer.compile(optimizer=keras.optimizers.Adam(1e-3))
    history = pretrainer.fit(dataset(tiny_vocab.batch(batch_size=8), 4), epochs=1, verbose=0).history
    assert sorted(history) == ["loss", "mlm_accuracy", "mlm_loss"]
    assert history["loss"][0] == pytest.approx(history["mlm_loss"][0])


def test_special_token_ids_must_be_in_the_vocabulary(tiny_config):
    with pytest.raises(ValueError, match="outside the vocabulary"):
        ElectraPretrainer(tiny_config, PretrainingConfig(), mask_token_id=103, special_token_ids=[0, 101, 102])


# === The paper's variants ===
TWO_STAGE = {"training_algorithm": "two_stage", "two_stage_generator_steps": 2, "generator_hidden_size": 1.0,
             "train_steps": 10}
VARIANTS = {
    "no sharing": {"weight_sharing": "none"}, "tie all": {"weight_sharing": "all", "generator_hidden_size": 1.0},
    "gdes": {"weight_sharing": "gdes"}, "unigram": {"generator_type": "unigram"}, "two-stage": TWO_STAGE,
    "adversarial": {"training_algorithm": "adversarial"}, "electra 15%": {"objective": "electra_15"},
    "replace mlm": {"objective": "replace_mlm"}, "all-tokens mlm": {"objective": "all_tokens_mlm"},
    "whole words": {"whole_word_masking": True},
}


def _gradients(tape, loss, variables):
    return [None if g is None else np.asarray(tf.convert_to_tensor(g)) for g in tape.gradient(loss, variables)]


def test_adversarial_generator_learns_only_from_the_reward(tiny_config, tiny_vocab):
    pretrainer = tiny_vocab.pretrainer(tiny_config, seed=0, training_algorithm="adversarial")
    shared = {id(v) for v in pretrainer.discriminator.trainable_variables}
    generator_only = [v for v in pretrainer.generator.trainable_variables if id(v) not in shared]
    baseline = pretrainer.reward_baseline.trainable_variables
    batch = tiny_vocab.batch(batch_size=8, seq_length=16)
    with tf.GradientTape(persistent=True) as tape:
        losses = pretrainer.pretraining_losses(pretrainer.forward(batch, tf.constant(0, tf.int64), training=True))
    total = _gradients(tape, losses["loss"], generator_only + baseline)
    policy = _gradients(tape, losses["policy_loss"], generator_only)
    for a, b in zip(total[:len(generator_only)], policy):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-8)
    for a, b in zip(total[len(generator_only):], _gradients(tape, losses["baseline_loss"], baseline)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-8)
    # The reward is a constant: neither REINFORCE loss reaches the discriminator's own weights.
    discriminator_only = [v for v in pretrainer.discriminator.trainable_variables
                          if not any(v is g for g in pretrainer.generator.trainable_variables)]
    assert all(g is None for g in _gradients(tape, losses["policy_loss"] + losses["baseline_loss"],
                                             discriminator_only))
    assert 0 <= float(losses["baseline_loss"])


def test_tie_all_runs_one_encoder_for_both_roles(tiny_config, tiny_vocab):
    pretrainer = tiny_vocab.pretrainer(tiny_config, seed=0, weight_sharing="all", generator_hidden_size=1.0)
    assert pretrainer.generator.backbone is pretrainer.discriminator.backbone
    parts = (pretrainer.discriminator.backbone, pretrainer.generator.head, pretrainer.discriminator.head)
    assert len(pretrainer.trainable_variables) == len({id(v) for part in parts for v in part.trainable_variables})
    with pytest.raises(ValueError, match="PretrainingConfig.weight_sharing: 'all' shares one encoder"):
        PretrainingConfig(weight_sharing="all")


def test_replace_mlm_trains_the_kept_mlm_and_not_the_rtd_head(tiny_config, tiny_vocab):
    pretrainer = tiny_vocab.pretrainer(tiny_config, seed=0, objective="replace_mlm")
    head = {id(v) for v in pretrainer.discriminator.head.trainable_variables}
    trained = {id(v) for v in pretrainer.phase_variables()}
    assert not head & trained and {id(v) for v in pretrainer.main_mlm_head.trainable_variables} <= trained


def test_two_stage_switch_over_keeps_the_generator_and_starts_the_discriminator_from_it(tiny_config, tiny_vocab):
    pretrainer = tiny_vocab.pretrainer(tiny_config, seed=0, **TWO_STAGE)
    pretrainer.compile(optimizer=keras.optimizers.SGD(0.5))
    data = dataset(tiny_vocab.batch(batch_size=8, seq_length=16, seed=2), 4).repeat()
    generator_ids = {id(v) for v in pretrainer.generator.trainable_variables}  # with the shared embeddings
    discriminator_only = [v for v in pretrainer.discriminator.trainable_variables if id(v) not in generator_ids]
    discriminator_before = [np.asarray(v) for v in discriminator_only]
    assert pretrainer.start_phase(0) == 2  # the generator phase ends at step 2
    pretrainer.fit(data, steps_per_epoch=2, epochs=1, verbose=0)  # the generator phase
    generator_after = [np.asarray(v) for v in pretrainer.generator.trainable_variables]
    for before, after in zip(discriminator_before, discriminator_only):
        np.testing.assert_array_equal(before, after)  # untouched while the generator trains
    assert pretrainer.start_phase(2) is None and pretrainer.train_function is None  # the last phase: a new step
    for d, g in zip(pretrainer.discriminator.backbone.weights, pretrainer.generator.backbone.weights):
        np.testing.assert_array_equal(d, g)
    pretrainer.fit(data, steps_per_epoch=2, epochs=1, verbose=0)  # the discriminator phase
    shared = {id(v) for v in pretrainer.discriminator.trainable_variables}
    for before, after in zip(generator_after, pretrainer.generator.trainable_variables):
        if id(after) not in shared:
            np.testing.assert_array_equal(before, after)  # frozen
    pairs = zip(pretrainer.discriminator.backbone.trainable_variables,
                pretrainer.generator.backbone.trainable_variables)
    moved = [np.abs(np.asarray(d) - np.asarray(g)).max() for d, g in pairs]
    assert max(moved) > 0  # the discriminator trains from the generator's weights
    assert phase_at(pretrainer.algorithm, 1) == "generator" and phase_at(pretrainer.algorithm, 2) == "discriminator"


@pytest.mark.parametrize("name", ["two-stage", "adversarial", "gdes", "unigram, whole words"])
def test_resuming_mid_way_reproduces_the_uninterrupted_run(tiny_config, tiny_vocab, assert_resumes_exactly, name):
    # Two-stage stops at its switch-over (step 2), the state a resumed run must get right. With dropout: its
    # seed states are the layers' own TensorFlow dependencies, so the bare `tf.train.Checkpoint(model=...)`
    # holds them and the resumed run drops the units the uninterrupted one dropped.
    fields = VARIANTS.get(name, {"generator_type": "unigram", "whole_word_masking": True})
    config = tiny_config.replace(hidden_dropout=0.1, attention_dropout=0.1)
    assert_resumes_exactly(lambda seed: tiny_vocab.pretrainer(config, seed=seed, **fields),
                           dataset(tiny_vocab.batch(batch_size=8, seq_length=16, seed=6), 4).repeat())


def test_every_variant_exports_a_discriminator_in_hugging_face_layout(fixtures_dir, tiny_vocab, tmp_path):
    reference = read_safetensors(str(fixtures_dir / "hf" / "discriminator"))
    hf_config = json.loads((fixtures_dir / "hf" / "discriminator" / "config.json").read_text())
    config = ElectraConfig(vocab_size=hf_config["vocab_size"], embedding_size=16, hidden_size=32, num_layers=2,
                           num_heads=2, intermediate_size=48, max_position_embeddings=16)
    expected = {name: tuple(value.shape) for name, value in reference.items()}
    for name, fields in VARIANTS.items():
        vocab = TinyIds(hf_config["vocab_size"])
        pretrainer = ElectraPretrainer(config, PretrainingConfig(max_seq_length=16, **{"generator_hidden_size": 0.5,
                                                                                        **fields}),
                                       mask_token_id=4, special_token_ids=[0, 1, 2, 3], **vocab.inputs(fields))
        folder = tmp_path / name.replace(" ", "_")
        pretrainer.export_networks()["discriminator"].save_pretrained(str(folder))
        saved = read_safetensors(str(folder))
        assert {key: tuple(value.shape) for key, value in saved.items()} == expected, name


class TinyIds:
    """What a variant's pre-trainer needs over a vocabulary of `size` ids."""

    def __init__(self, size):
        self.size = size

    def inputs(self, fields):
        extra = {}
        if fields.get("whole_word_masking"):
            extra["word_continuation_ids"] = list(range(self.size // 2, self.size))
        if fields.get("generator_type") == "unigram":
            extra["unigram_counts"] = [1.0] * self.size
        return extra


def test_two_stage_under_mirrored_strategy_equals_one_device_across_the_switch(tiny_config, tiny_vocab, mirrored,
                                                                               fit_steps):
    batch = tiny_vocab.batch(batch_size=8, seq_length=16, seed=7, min_length=5)
    weights = []
    for strategy in (tf.distribute.get_strategy(), mirrored):
        with strategy.scope():
            pretrainer = tiny_vocab.pretrainer(tiny_config, seed=1, **TWO_STAGE)
            pretrainer.compile(optimizer=keras.optimizers.SGD(0.5))
        fit_steps(pretrainer, dataset(batch, 8).repeat(), 3)  # 2 + 1 steps
        weights.append([np.asarray(v) for v in pretrainer.trainable_variables])
    for a, b in zip(*weights):
        np.testing.assert_allclose(b, a, atol=2e-5)
