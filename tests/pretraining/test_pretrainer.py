import keras
import numpy as np
import pytest
import tensorflow as tf

from electra_tf import ElectraPretrainer, PretrainingConfig
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
    masked = out["masked"]
    logits = np.asarray(out["mlm_logits"], np.float64)
    labels, weights = np.asarray(masked.labels), np.asarray(masked.weights)
    nll = -np.take_along_axis(_log_softmax(logits), labels[..., None], axis=-1)[..., 0]
    mlm = (nll * weights).sum() / (weights.sum() + 1e-6)
    z = np.asarray(out["rtd_logits"], np.float64)
    y = np.asarray(out["rtd_labels"], np.float64)
    real = batch["attention_mask"].astype(np.float64)
    bce = np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))
    rtd = (bce * real).sum() / (real.sum() + 1e-6)
    assert reported["mlm_loss"] == pytest.approx(mlm, rel=1e-5)
    assert reported["rtd_loss"] == pytest.approx(rtd, rel=1e-5)
    assert reported["loss"] == pytest.approx(mlm + 50 * rtd, rel=1e-5)
    # Labels: replaced AND different, on real tokens only.
    corrupted = np.asarray(out["corrupted_ids"])
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


def test_two_replica_step_equals_one_replica_step(tiny_config, tiny_vocab):
    batch = tiny_vocab.batch(batch_size=8, seq_length=16, seed=7, min_length=5)  # unequal lengths per replica
    single, single_weights = _one_sgd_step(tiny_vocab, tiny_config, batch, tf.distribute.get_strategy())
    mirrored, mirrored_weights = _one_sgd_step(tiny_vocab, tiny_config, batch, tf.distribute.MirroredStrategy(["CPU:0", "CPU:1"]))
    for name in ("loss", "mlm_loss", "rtd_loss", "mlm_accuracy", "rtd_accuracy"):
        assert mirrored[name][0] == pytest.approx(single[name][0], rel=1e-4), name
    moved = 0
    for a, b in zip(single_weights, mirrored_weights):
        np.testing.assert_allclose(b, a, atol=2e-5)
        moved += 1
    assert moved == len(single_weights)


def test_jit_compile_under_mirrored_strategy_compiles_each_replica(tiny_config, tiny_vocab):
    batch = tiny_vocab.batch(batch_size=8, seq_length=16, seed=7, min_length=5)
    single, single_weights = _one_sgd_step(tiny_vocab, tiny_config, batch, tf.distribute.get_strategy())
    strategy = tf.distribute.MirroredStrategy(["CPU:0", "CPU:1"])
    mirrored, mirrored_weights = _one_sgd_step(tiny_vocab, tiny_config, batch, strategy, jit_compile=True)
    # Same masks and samples with and without XLA (electra_tf.models.rng): only rounding differs.
    assert mirrored["loss"][0] == pytest.approx(single["loss"][0], rel=1e-5)
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
