"""Our `AdamW` is Keras's AdamW, with or without the fused kernel; `adam_bias_correction=False` is the original
`AdamWeightDecayOptimizer`, checked against its formula in NumPy."""
import keras
import numpy as np
import pytest
import tensorflow as tf

from electra_tf import PretrainingConfig, pretraining_optimizer
from electra_tf.training import optimization
from electra_tf.training.optimization import AdamW, WarmupLinearDecay, create_optimizer


def original_adam_weight_decay(weights, gradients, steps, lr, warmup, total, wd, beta_1=0.9, beta_2=0.999,
                               eps=1e-6, clip=1.0, decayed=("kernel",)):
    """google-research/electra `model/optimization.py`, in NumPy: polynomial (linear) decay times the warm-up
    fraction, `clip_by_global_norm`, then Adam without bias correction and decoupled weight decay."""
    weights = {name: value.astype(np.float64).copy() for name, value in weights.items()}
    m = {name: np.zeros_like(value) for name, value in weights.items()}
    v = {name: np.zeros_like(value) for name, value in weights.items()}
    for step in range(steps):
        rate = lr * (1 - step / total) * min(1.0, step / warmup)
        grads = {name: g(step).astype(np.float64) for name, g in gradients.items()}
        norm = np.sqrt(sum(np.sum(g ** 2) for g in grads.values()))
        grads = {name: g * clip / max(norm, clip) for name, g in grads.items()}
        for name, g in grads.items():
            m[name] = beta_1 * m[name] + (1 - beta_1) * g
            v[name] = beta_2 * v[name] + (1 - beta_2) * g ** 2
            update = m[name] / (np.sqrt(v[name]) + eps)
            if name in decayed:
                update += wd * weights[name]
            weights[name] -= rate * update
    return weights


@pytest.mark.parametrize("fused", [False, True], ids=["keras_step", "fused_kernel"])
def test_original_adam_matches_the_original_formula(fused):
    rng = np.random.default_rng(0)
    start = {"kernel": rng.normal(size=(3, 4)), "bias": rng.normal(size=4)}
    grads = {name: (lambda step, shape=value.shape, seed=i: np.random.default_rng([seed, step]).normal(size=shape))
             for i, (name, value) in enumerate(start.items())}
    variables = [keras.Variable(start[name].astype("float32"), name=name) for name in start]
    optimizer = create_optimizer(1e-2, total_steps=10, warmup_steps=3, weight_decay=0.1, original_schedule=True,
                                 bias_correction=False, fused=fused)
    assert isinstance(optimizer, AdamW) and not optimizer.bias_correction
    for step in range(6):
        optimizer.apply([keras.ops.convert_to_tensor(grads[name](step).astype("float32")) for name in start],
                        variables)
    expected = original_adam_weight_decay(start, grads, 6, lr=1e-2, warmup=3, total=10, wd=0.1)
    for variable in variables:
        np.testing.assert_allclose(variable.numpy(), expected[variable.name], rtol=1e-5, atol=1e-6)
    # Keras's bias-corrected AdamW takes other steps from the same gradients.
    corrected = [keras.Variable(start[name].astype("float32"), name=name) for name in start]
    keras_adam = create_optimizer(1e-2, total_steps=10, warmup_steps=3, weight_decay=0.1, original_schedule=True)
    for step in range(6):
        keras_adam.apply([keras.ops.convert_to_tensor(grads[name](step).astype("float32")) for name in start],
                         corrected)
    assert np.abs(corrected[0].numpy() - expected["kernel"]).max() > 1e-3


def test_the_config_switch_picks_the_original_adam_and_refuses_it_for_lamb():
    assert pretraining_optimizer(PretrainingConfig()).bias_correction
    assert not pretraining_optimizer(PretrainingConfig(adam_bias_correction=False)).bias_correction
    with pytest.raises(ValueError, match="PretrainingConfig.adam_bias_correction: false needs optimizer='adamw'"):
        PretrainingConfig(adam_bias_correction=False, optimizer="lamb")


@pytest.mark.parametrize("fused", [False, True], ids=["keras_step", "fused_kernel"])
def test_our_adamw_is_keras_adamw(fused):
    """Default settings: Keras's AdamW update (bias correction, decoupled decay, clipping, schedule)."""
    rng = np.random.default_rng(1)
    start = {"kernel": rng.normal(size=(3, 4)), "gamma": rng.normal(size=4)}
    results = []
    for optimizer in (create_optimizer(1e-2, total_steps=10, warmup_steps=3, weight_decay=0.1, fused=fused),
                      keras.optimizers.AdamW(learning_rate=WarmupLinearDecay(1e-2, 3, 10), weight_decay=0.1, beta_1=0.9,
                                             beta_2=0.999, epsilon=1e-6, global_clipnorm=1.0)):
        optimizer.exclude_from_weight_decay(var_names=["gamma"])
        variables = [keras.Variable(start[name].astype("float32"), name=name) for name in start]
        for step in range(5):
            optimizer.apply([keras.ops.convert_to_tensor(np.random.default_rng([i, step]).normal(
                size=start[name].shape).astype("float32")) for i, name in enumerate(start)], variables)
        results.append([v.numpy() for v in variables])
    assert type(optimizer) is keras.optimizers.AdamW
    for fused, reference in zip(*results, strict=True):
        np.testing.assert_allclose(fused, reference, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("options", [{}, {"bias_correction": False}, {"fused": True},
                                     {"fused": True, "bias_correction": False}],
                         ids=["adamw", "original_adam", "fused", "fused_original_adam"])
def test_adamw_on_two_replicas_steps_as_on_one_device(mirrored, options):
    """Each replica's variables are updated with their own slots (found by the optimizer's own index) and the
    step's one learning rate, which reaches the update per replica under a strategy. (No clipping: Keras clips
    each replica's share of the gradient before the sum.)"""

    def train(strategy, replicas):
        with strategy.scope():
            weights = keras.Variable(np.linspace(-1.0, 1.0, 6, dtype="float32").reshape(2, 3), name="kernel")
            optimizer = create_optimizer(1e-2, total_steps=10, warmup_steps=2, clip_norm=1e9, **options)
            optimizer.build([weights])

        @tf.function
        def step(gradient):
            strategy.run(lambda: optimizer.apply([gradient / replicas], [weights]))

        for gradient in (np.full((2, 3), 0.5, "float32"), np.arange(6, dtype="float32").reshape(2, 3)):
            step(tf.constant(gradient))
        return weights.numpy()

    np.testing.assert_allclose(train(mirrored, 2), train(tf.distribute.get_strategy(), 1), atol=1e-6)


def test_the_fused_kernel_is_taken_only_on_the_keras_versions_it_was_checked_on(monkeypatch):
    assert create_optimizer(1e-3, 10, 1).fused
    monkeypatch.setattr(optimization, "fused_adam_checked", lambda: False)
    assert not create_optimizer(1e-3, 10, 1).fused  # Keras's own Adam step
    with pytest.raises(ValueError, match="fused=True: TensorFlow's fused Adam kernel is not checked on keras"):
        AdamW(fused=True)
