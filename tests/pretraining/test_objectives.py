"""Each variant's loss on a fixed tiny batch against a NumPy reference computed from the same forward pass."""

import numpy as np
import pytest
import tensorflow as tf

from electra_tf.pretraining.training_algorithms import DISCRIMINATOR_PHASE, GENERATOR_PHASE

TWO_STAGE = {"training_algorithm": "two_stage", "two_stage_generator_steps": 2, "generator_hidden_size": 1.0,
             "train_steps": 10}


def _log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def _log_sigmoid(x):
    return -np.logaddexp(0.0, -x)


def _bce(labels, logits):
    return np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))


def _head_logits(pretrainer, out):
    """What the parts' heads compute in their losses: the kept masked LM's logits, the reward baseline's."""
    logits = {}
    if hasattr(pretrainer, "main_mlm_head"):
        replace = pretrainer.pretraining_config.objective == "replace_mlm"  # at the masked positions only
        logits["main_mlm_logits"] = pretrainer.objective.kept.logits(out, out.masked.positions if replace else None)
    if hasattr(pretrainer, "reward_baseline"):
        logits["baseline_logits"] = pretrainer.reward_baseline(
            tf.gather(out.generator_hidden, out.masked.positions, batch_dims=1))[..., 0]
    return logits


def _reference(objective, algorithm, out, batch, head_logits=None):
    """(total, {name: loss}) in float64, as the paper defines each variant's losses."""
    array = {k: np.asarray(v, np.float64) for k, v in {**out._asdict(), **(head_logits or {})}.items()
             if k != "masked" and v is not None}
    masked = out.masked
    weights, labels, positions = (np.asarray(masked.weights, np.float64), np.asarray(masked.labels),
                                  np.asarray(masked.positions))
    real = batch["attention_mask"].astype(np.float64)
    predictions, tokens = weights.sum() + 1e-6, real.sum() + 1e-6
    losses = {}
    if "mlm_logits" in array:
        nll = -np.take_along_axis(_log_softmax(array["mlm_logits"]), labels[..., None], -1)[..., 0]
        losses["mlm_loss"] = (nll * weights).sum() / predictions
    bce = _bce(array["rtd_labels"], array["rtd_logits"])
    at_slots = np.take_along_axis(bce, positions, axis=1)
    losses["rtd_loss"] = ((at_slots * weights).sum() / predictions if objective == "electra_15"
                          else (bce * real).sum() / tokens)
    if objective == "replace_mlm":
        nll = -np.take_along_axis(_log_softmax(array["main_mlm_logits"]), labels[..., None], -1)[..., 0]
        losses["main_mlm_loss"] = (nll * weights).sum() / predictions
        return losses["mlm_loss"] + losses["main_mlm_loss"], losses
    if objective == "all_tokens_mlm":
        copy = 1 / (1 + np.exp(array["rtd_logits"]))  # D: the probability of copying the input token
        softmax = np.exp(_log_softmax(array["main_mlm_logits"]))
        original = batch["input_ids"]
        p = (copy * (np.asarray(out.corrupted_ids) == original)
             + (1 - copy) * np.take_along_axis(softmax, original[..., None], -1)[..., 0])
        losses["main_mlm_loss"] = -(np.log(p) * real).sum() / tokens
        return losses["mlm_loss"] + losses["main_mlm_loss"], losses
    if algorithm == "adversarial":
        reward = at_slots
        baseline = -_log_sigmoid(array["baseline_logits"])
        log_p = np.take_along_axis(_log_softmax(array["mlm_logits"]), np.asarray(out.sampled)[..., None], -1)[..., 0]
        losses["policy_loss"] = -(log_p * (reward - baseline) * weights).sum() / predictions
        losses["baseline_loss"] = (_bce(np.exp(-reward), array["baseline_logits"]) * weights).sum() / predictions
        return losses["policy_loss"] + losses["baseline_loss"] + 50 * losses["rtd_loss"], losses
    return losses.get("mlm_loss", 0.0) + 50 * losses["rtd_loss"], losses


@pytest.mark.parametrize("fields", [
    {"objective": "electra_15"}, {"objective": "replace_mlm"}, {"objective": "all_tokens_mlm"},
    {"training_algorithm": "adversarial"}, {"generator_type": "unigram"}, {"weight_sharing": "gdes"},
    {"weight_sharing": "all", "generator_hidden_size": 1.0}, {"whole_word_masking": True},
], ids=lambda fields: "-".join(str(v) for v in fields.values()))
def test_variant_losses_equal_a_numpy_reference(tiny_config, tiny_vocab, fields):
    pretrainer = tiny_vocab.pretrainer(tiny_config, seed=0, **fields)
    batch = tiny_vocab.batch(batch_size=8, seq_length=16, seed=3)
    out = pretrainer.forward(batch, tf.constant(5, tf.int64), training=False)
    losses = {k: float(v) for k, v in pretrainer.pretraining_losses(out).items()}
    total, expected = _reference(pretrainer.pretraining_config.objective,
                                 pretrainer.pretraining_config.training_algorithm, out, batch,
                                 _head_logits(pretrainer, out))
    objective = pretrainer.pretraining_config.objective
    assert set(expected) - set(losses) == ({"rtd_loss"} if objective == "replace_mlm" else set())  # RTD untrained
    for name in set(expected) & set(losses):
        assert losses[name] == pytest.approx(expected[name], rel=1e-4, abs=1e-6), name
    assert losses["loss"] == pytest.approx(total, rel=1e-4)
    if fields.get("generator_type") == "unigram":
        assert "mlm_loss" not in losses and pretrainer.generator is None


def test_two_stage_phases_train_one_loss_each(tiny_config, tiny_vocab):
    pretrainer = tiny_vocab.pretrainer(tiny_config, seed=0, **TWO_STAGE)
    batch = tiny_vocab.batch(batch_size=8, seq_length=16, seed=3)
    pretrainer.phase = GENERATOR_PHASE
    out = pretrainer.forward(batch, tf.constant(0, tf.int64), training=False)
    losses = pretrainer.pretraining_losses(out)
    assert out.rtd_logits is None and float(losses["loss"]) == pytest.approx(float(losses["mlm_loss"]))
    pretrainer.phase = DISCRIMINATOR_PHASE
    out = pretrainer.forward(batch, tf.constant(0, tf.int64), training=False)
    losses = pretrainer.pretraining_losses(out)
    _, expected = _reference("electra", "two_stage", out, batch)
    assert float(losses["rtd_loss"]) == pytest.approx(expected["rtd_loss"], rel=1e-5)
    assert float(losses["loss"]) == pytest.approx(50 * expected["rtd_loss"], rel=1e-5)
