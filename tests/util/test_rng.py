import numpy as np
import tensorflow as tf
from scipy import stats

from electra_tf.util import rng


def _splitmix64_reference(key, index):
    mask = (1 << 64) - 1
    x = (key + (index + 1) * 0x9E3779B97F4A7C15) & mask
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & mask
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & mask
    return ((x ^ (x >> 31)) >> 40) * 2.0 ** -24


def test_draws_equal_a_pure_python_splitmix64():
    keys = [3, 2 ** 63 + 5]
    u = rng.per_row_uniform(tf.constant(keys, tf.uint64), [2, 3]).numpy()
    expected = [[_splitmix64_reference(k, i) for i in range(6)] for k in keys]
    np.testing.assert_array_equal(u.reshape(2, 6), np.array(expected, np.float32))


def test_xla_and_plain_draws_are_identical():
    keys = rng.row_keys(7, tf.constant(11, tf.int64), tf.range(16, dtype=tf.int64), rng.SAMPLING)
    plain = rng.per_row_uniform(keys, [5, 40])
    compiled = tf.function(lambda k: rng.per_row_uniform(k, [5, 40]), jit_compile=True)(keys)
    np.testing.assert_array_equal(plain, compiled)


def test_uniformity_and_independence_of_rows_steps_and_streams():
    def draws(seed=0, counter=0, stream=rng.MASKING, rows=64):
        keys = rng.row_keys(seed, tf.constant(counter, tf.int64), tf.range(rows, dtype=tf.int64), stream)
        return rng.per_row_uniform(keys, [500]).numpy()

    u = draws()
    assert stats.kstest(u.ravel(), "uniform").pvalue > 1e-3
    assert len({row.tobytes() for row in u}) == 64
    others = [draws(counter=1), draws(seed=1), draws(stream=rng.SAMPLING)]
    for other in others:
        assert abs(np.corrcoef(u.ravel(), other.ravel())[0, 1]) < 0.02
        assert not np.array_equal(u, other)
