"""COCO-LM's corrective language modeling (`objective="clm"`): trains, and each loss reaches the weights it should."""

import numpy as np
import tensorflow as tf

from electra_tf.pretraining.losses import copy_mlm_loss


def _losses_and_gradients(pretrainer, batch, variables):
    """The step's outputs, losses and each loss's gradients with respect to `variables`."""
    with tf.GradientTape(persistent=True) as tape:
        outputs = pretrainer.forward(batch, tf.constant(0, tf.int64), training=True)
        losses = pretrainer.pretraining_losses(outputs)
    return outputs, losses, {name: tape.gradient(loss, variables) for name, loss in losses.items()}


def _moved(gradients):
    return any(g is not None and float(tf.reduce_max(tf.abs(g))) > 0 for g in gradients)


def test_clm_trains_with_finite_losses(tiny_config, tiny_vocab):
    pretrainer = tiny_vocab.pretrainer(tiny_config, seed=0, objective="clm")
    pretrainer.compile(optimizer="adam", run_eagerly=True)  # two tiny steps: no tracing
    batch = tiny_vocab.batch(batch_size=4, seed=1)
    history = pretrainer.fit(batch, batch_size=2, epochs=1, verbose=0).history
    for name in ("loss", "mlm_loss", "rtd_loss", "main_mlm_loss", "main_mlm_accuracy"):
        assert np.all(np.isfinite(history[name])), name


def test_the_copy_gate_learns_from_its_own_loss_only(tiny_config, tiny_vocab):
    pretrainer = tiny_vocab.pretrainer(tiny_config, seed=0, objective="clm")
    gate = pretrainer.discriminator.head.trainable_variables
    encoder = pretrainer.discriminator.backbone.trainable_variables
    lm_head = [v for v in pretrainer.main_mlm_head.trainable_variables if all(v is not e for e in encoder)]  # untied
    batch = tiny_vocab.batch(batch_size=4, seed=2)
    _, losses, gradients = _losses_and_gradients(pretrainer, batch, {"gate": gate, "lm": lm_head, "encoder": encoder})
    assert not _moved(gradients["main_mlm_loss"]["gate"])  # p_copy is read through a stop-gradient
    assert _moved(gradients["main_mlm_loss"]["lm"]) and _moved(gradients["main_mlm_loss"]["encoder"])
    assert _moved(gradients["rtd_loss"]["gate"]) and _moved(gradients["loss"]["gate"])
    assert not _moved(gradients["rtd_loss"]["lm"])
    weights = pretrainer.pretraining_config
    np.testing.assert_allclose(float(losses["loss"]), float(
        weights.gen_weight * losses["mlm_loss"] + losses["main_mlm_loss"] + weights.disc_weight * losses["rtd_loss"]),
        rtol=1e-6)


def test_clm_likelihood_is_all_tokens_mlm_s_and_only_its_gradient_differs(tiny_config, tiny_vocab):
    """The same forward pass and the same value as All-Tokens MLM's copy likelihood; All-Tokens MLM trains the
    gate through it, CLM does not."""
    batch = tiny_vocab.batch(batch_size=4, seed=3)
    for objective, gate_moves in (("all_tokens_mlm", True), ("clm", False)):
        pretrainer = tiny_vocab.pretrainer(tiny_config, seed=0, objective=objective)
        outputs, losses, gradients = _losses_and_gradients(pretrainer, batch,
                                                           pretrainer.discriminator.head.trainable_variables)
        denominators = pretrainer.denominators(outputs.masked, outputs.real_tokens)
        np.testing.assert_allclose(float(losses["main_mlm_loss"]), float(copy_mlm_loss(
            outputs, pretrainer.objective.kept.logits(outputs), denominators)),
                                   rtol=1e-6)
        assert _moved(gradients["main_mlm_loss"]) == gate_moves, objective
