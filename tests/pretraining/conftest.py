"""What the pre-training tests share: a run interrupted, resumed from its checkpoint and compared."""

import keras
import numpy as np
import pytest
import tensorflow as tf


def _fit_steps(pretrainer, data, steps):
    """`steps` more update steps of `pretrainer` on `data` (read from its start), phase by phase as the run
    trains (`ElectraPretrainer.start_phase`): a fit per phase, the data read on across them."""
    done = int(pretrainer.optimizer.iterations.numpy())
    target, read = done + steps, 0
    while done < target:
        end = pretrainer.start_phase(done)
        count = target - done if end is None else min(end, target) - done
        pretrainer.fit(data.skip(read), steps_per_epoch=count, epochs=1, verbose=0)
        done, read = done + count, read + count


def _assert_resumes_exactly(make_pretrainer, data, folder):
    """Two steps, a `tf.train.Checkpoint` (as tools/run_pretraining.py resumes: weights and optimizer, data
    skipped), two more; a pre-trainer made with another seed and restored there ends on the same weights."""

    def start(seed):
        pretrainer = make_pretrainer(seed)
        pretrainer.compile(optimizer=keras.optimizers.Adam(1e-2))
        pretrainer.optimizer.build(pretrainer.trainable_variables)
        return pretrainer, tf.train.Checkpoint(model=pretrainer, optimizer=pretrainer.optimizer)

    whole, checkpoint = start(seed=1)
    _fit_steps(whole, data, 2)
    path = checkpoint.save(str(folder / "ckpt"))
    _fit_steps(whole, data.skip(2), 2)  # on, uninterrupted
    resumed, checkpoint = start(seed=9)
    checkpoint.restore(path).assert_consumed()
    _fit_steps(resumed, data.skip(2), 2)
    for a, b in zip(whole.weights, resumed.weights, strict=True):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), atol=1e-6)


@pytest.fixture
def assert_resumes_exactly(tmp_path):
    return lambda make_pretrainer, data: _assert_resumes_exactly(make_pretrainer, data, tmp_path)


@pytest.fixture
def fit_steps():
    return _fit_steps
