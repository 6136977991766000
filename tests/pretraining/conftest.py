"""What the pre-training tests share: a run interrupted, resumed from its checkpoint and compared."""

import keras
import numpy as np
import pytest
import tensorflow as tf


def _assert_resumes_exactly(make_pretrainer, data, folder):
    """Two steps, a `tf.train.Checkpoint` (as tools/run_pretraining.py resumes: weights and optimizer, data
    skipped), two more; a pre-trainer made with another seed and restored there ends on the same weights."""

    def start(seed):
        pretrainer = make_pretrainer(seed)
        pretrainer.compile(optimizer=keras.optimizers.Adam(1e-2))
        pretrainer.optimizer.build(pretrainer.trainable_variables)
        return pretrainer, tf.train.Checkpoint(model=pretrainer, optimizer=pretrainer.optimizer)

    whole, checkpoint = start(seed=1)
    whole.fit(data, steps_per_epoch=2, epochs=1, verbose=0)
    path = checkpoint.save(str(folder / "ckpt"))
    whole.fit(data.skip(2), steps_per_epoch=2, epochs=1, verbose=0)  # on, uninterrupted
    resumed, checkpoint = start(seed=9)
    checkpoint.restore(path).assert_consumed()
    resumed.fit(data.skip(2), steps_per_epoch=2, epochs=1, verbose=0)
    for a, b in zip(whole.weights, resumed.weights, strict=True):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), atol=1e-6)


@pytest.fixture
def assert_resumes_exactly(tmp_path):
    return lambda make_pretrainer, data: _assert_resumes_exactly(make_pretrainer, data, tmp_path)
