import keras
import numpy as np
import pytest
import tensorflow as tf

from electra_tf import ElectraDiscriminator, ElectraGenerator, ElectraModel
from electra_tf.layers.activations import gelu_erf


def test_model_input_and_output_names_and_shapes(tiny_config, tiny_vocab):
    batch = tiny_vocab.batch(batch_size=3, seq_length=10)
    model = ElectraModel(tiny_config, output_hidden_states=True)
    assert sorted(model.input) == ["attention_mask", "input_ids", "token_type_ids"]
    outputs = model(batch)  # an eager call: transformers' tuple of layers
    assert outputs["last_hidden_state"].shape == (3, 10, 32)
    assert len(outputs["hidden_states"]) == tiny_config.num_layers + 1
    assert all(states.shape == (3, 10, 32) for states in outputs.hidden_states)
    np.testing.assert_allclose(outputs["hidden_states"][-1], outputs["last_hidden_state"], atol=1e-6)
    assert model.predict(batch, verbose=0)["hidden_states"].shape == (3, tiny_config.num_layers + 1, 10, 32)
    assert model.embeddings_project is not None

    discriminator = ElectraDiscriminator(tiny_config)
    assert discriminator(batch)["logits"].shape == (3, 10)
    generator = ElectraGenerator(tiny_config)
    positions = np.tile(np.arange(4, dtype=np.int32), (3, 1))
    assert generator(dict(batch, mask_positions=positions))["logits"].shape == (3, 4, tiny_config.vocab_size)


def test_no_projection_when_embedding_equals_hidden(tiny_config):
    model = ElectraModel(tiny_config.replace(embedding_size=32))
    assert model.embeddings_project is None
    assert not any("embeddings_project" in v.path for v in model.weights)


def test_padding_does_not_change_real_positions(tiny_config, tiny_vocab):
    model = ElectraDiscriminator(tiny_config)
    batch = tiny_vocab.batch(batch_size=4, seq_length=12, min_length=6)
    other = {k: v.copy() for k, v in batch.items()}
    other["input_ids"] = np.where(batch["attention_mask"] == 1, batch["input_ids"], 7)
    real = batch["attention_mask"] == 1
    np.testing.assert_allclose(np.asarray(model(batch)["logits"])[real], np.asarray(model(other)["logits"])[real],
                               atol=1e-5)


def test_exact_gelu_everywhere(tiny_config):
    model = ElectraModel(tiny_config)
    x = np.linspace(-6, 6, 25, dtype=np.float32)
    exact = np.asarray(keras.activations.gelu(x, approximate=False))  # through erfc
    layer = model.transformer_layers[0]
    assert layer.activation is gelu_erf
    np.testing.assert_allclose(np.asarray(gelu_erf(x)), exact, atol=1e-6)
    np.testing.assert_allclose(np.asarray(gelu_erf(x.astype("float64"))), exact, atol=1e-6)
    np.testing.assert_allclose(np.asarray(gelu_erf(keras.ops.cast(x, "bfloat16")), dtype=np.float32), exact,
                               rtol=1e-2, atol=1e-2)
    # The gradient is GELU's: Φ(x) + x·φ(x).
    tensor = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(tensor)
        y = gelu_erf(tensor)
    pdf = np.exp(-0.5 * x.astype("float64") ** 2) / np.sqrt(2 * np.pi)
    cdf = np.asarray(keras.ops.erf(x.astype("float64") / np.sqrt(2))) * 0.5 + 0.5
    np.testing.assert_allclose(tape.gradient(y, tensor), cdf + x * pdf, atol=1e-6)
    assert layer.attention_dropout == tiny_config.attention_dropout




def test_generator_and_discriminator_share_the_whole_embedding_block(tiny_config, tiny_vocab):
    pretrainer = tiny_vocab.pretrainer(tiny_config)
    shared = pretrainer.discriminator.backbone.embedding
    assert pretrainer.generator.backbone.embedding is shared
    assert pretrainer.generator.head.token_embedding is shared.word_embeddings
    generator_vars = {id(v) for v in pretrainer.generator.weights}
    for variable in shared.weights:
        assert id(variable) in generator_vars
    # Each shared variable is trained once.
    ids = [id(v) for v in pretrainer.trainable_variables]
    assert len(ids) == len(set(ids))
    # The generator has its own projection (E=16 → 16 is none; the discriminator's 16 → 32 is its own).
    assert pretrainer.generator.backbone.embeddings_project is None
    assert pretrainer.discriminator.backbone.embeddings_project is not None


def test_a_generator_step_changes_the_discriminators_embeddings(tiny_config, tiny_vocab):
    pretrainer = tiny_vocab.pretrainer(tiny_config)
    batch = tiny_vocab.batch(batch_size=4, seq_length=16)
    disc_embedding = pretrainer.discriminator.backbone.embedding
    before = np.asarray(disc_embedding(batch["input_ids"], batch["token_type_ids"]))
    positions = np.tile(np.arange(1, 5, dtype=np.int32), (4, 1))
    with tf.GradientTape() as tape:
        logits = pretrainer.generator(dict(batch, mask_positions=positions))["logits"]
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(
            np.take_along_axis(batch["input_ids"], positions, axis=1), logits, from_logits=True))
    variables = pretrainer.generator.trainable_variables
    keras.optimizers.SGD(1.0).apply(tape.gradient(loss, variables), variables)
    after = np.asarray(disc_embedding(batch["input_ids"], batch["token_type_ids"]))
    assert np.abs(after - before).max() > 1e-3
    for variable in disc_embedding.weights:  # word, position, token type tables and the LayerNorm
        assert any(variable is v for v in variables), variable.path


def test_untied_generator_embeddings(tiny_config, tiny_vocab):
    pretrainer = tiny_vocab.pretrainer(tiny_config, untied_generator_embeddings=True)
    assert pretrainer.generator.backbone.embedding is not pretrainer.discriminator.backbone.embedding
    # The output layer stays tied to the generator's own word embeddings.
    assert pretrainer.generator.head.token_embedding is pretrainer.generator.backbone.embedding.word_embeddings


def test_keras_round_trip_preserves_weights_and_tying(tiny_config, tmp_path, tiny_vocab):
    pretrainer = tiny_vocab.pretrainer(tiny_config)
    batch = tiny_vocab.batch(batch_size=4, seq_length=16)
    expected = pretrainer(batch)
    path = str(tmp_path / "pretrainer.keras")
    pretrainer.save(path)
    loaded = keras.saving.load_model(path, safe_mode=True)
    assert loaded.generator.backbone.embedding is loaded.discriminator.backbone.embedding
    assert loaded.generator.head.token_embedding is loaded.discriminator.backbone.embedding.word_embeddings
    actual = loaded(batch)
    for key in ("mlm_logits", "rtd_logits", "corrupted_ids", "mask_positions"):
        np.testing.assert_allclose(actual[key], expected[key], atol=1e-6, err_msg=key)
    assert loaded.get_config() == pretrainer.get_config()


def test_compiled_round_trip_restores_the_optimizer_state(tiny_config, tmp_path, tiny_vocab):
    import tensorflow as tf
    pretrainer = tiny_vocab.pretrainer(tiny_config)
    pretrainer.compile(optimizer=keras.optimizers.AdamW(1e-3))
    batch = tiny_vocab.batch(batch_size=4, seq_length=16)
    pretrainer.fit(tf.data.Dataset.from_tensor_slices(batch).batch(2), epochs=1, verbose=0)
    path = str(tmp_path / "trained.keras")
    pretrainer.save(path)
    loaded = keras.saving.load_model(path, safe_mode=True)
    assert int(loaded.optimizer.iterations) == 2
    saved, restored = pretrainer.optimizer.variables, loaded.optimizer.variables
    assert len(saved) == len(restored) == 2 + 2 * len(pretrainer.trainable_variables)
    for a, b in zip(saved, restored):
        np.testing.assert_array_equal(np.asarray(b), np.asarray(a), err_msg=a.path)


@pytest.mark.parametrize("part", ["discriminator", "generator"])
def test_parts_are_usable_standalone(tiny_config, tmp_path, part, tiny_vocab):
    pretrainer = tiny_vocab.pretrainer(tiny_config)
    model = getattr(pretrainer, part)
    batch = tiny_vocab.batch(batch_size=2, seq_length=16)
    if part == "generator":
        batch["mask_positions"] = np.array([[1, 2], [3, 4]], np.int32)
    path = str(tmp_path / f"{part}.keras")
    model.save(path)
    loaded = keras.saving.load_model(path, safe_mode=True)
    assert type(loaded) is type(model)
    np.testing.assert_allclose(loaded(batch)["logits"], model(batch)["logits"], atol=1e-6)
