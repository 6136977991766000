import numpy as np
import tensorflow as tf


def _tables(embedding):
    return [embedding.word_embeddings.embeddings, embedding.position_embeddings.position_embeddings,
            embedding.token_type_embeddings.embeddings]


def test_rtd_trains_only_the_residual_and_mlm_only_the_shared_tables(tiny_config, tiny_vocab):
    pretrainer = tiny_vocab.pretrainer(tiny_config, seed=0, weight_sharing="gdes")
    shared, residual = (_tables(pretrainer.generator.backbone.embedding),
                        _tables(pretrainer.discriminator.backbone.embedding))
    assert not any(a is b for a in shared for b in residual)
    batch = tiny_vocab.batch(batch_size=4, seq_length=16)
    with tf.GradientTape(persistent=True) as tape:
        losses = pretrainer.pretraining_losses(pretrainer.forward(batch, tf.constant(0, tf.int64), training=True))
    rtd_shared, rtd_residual = tape.gradient(losses["rtd_loss"], [shared, residual])
    mlm_shared, mlm_residual = tape.gradient(losses["mlm_loss"], [shared, residual])
    assert all(g is None for g in rtd_shared) and all(g is None for g in mlm_residual)
    for gradient in rtd_residual[:1] + mlm_shared[:1]:
        assert np.abs(np.asarray(tf.convert_to_tensor(gradient))).max() > 0
    # The residuals start at zero: the discriminator starts from the generator's tables.
    assert all(not np.asarray(table).any() for table in residual)


def test_the_exported_discriminator_folds_the_residual_in(tiny_config, tiny_vocab):
    pretrainer = tiny_vocab.pretrainer(tiny_config, seed=0, weight_sharing="gdes")
    for table in _tables(pretrainer.discriminator.backbone.embedding):
        table.assign(tf.random.normal(table.shape, stddev=0.05, seed=1))
    batch = tiny_vocab.batch(batch_size=4, seq_length=16)
    folded = pretrainer.export_networks()["discriminator"]
    assert type(folded.backbone.embedding).__name__ == "ElectraEmbedding"
    np.testing.assert_allclose(folded(batch)["logits"], pretrainer.discriminator(batch)["logits"], atol=1e-5)
    shared, residual = (_tables(pretrainer.generator.backbone.embedding),
                        _tables(pretrainer.discriminator.backbone.embedding))
    np.testing.assert_allclose(folded.backbone.embedding.word_embeddings.embeddings,
                               np.asarray(shared[0]) + np.asarray(residual[0]), atol=1e-7)
