import numpy as np
import tensorflow as tf
from scipy import stats

from electra_tf.pretraining.sampling import sample_replacements, sample_unigram
from electra_tf.rng import SAMPLING, row_keys


def _seeds(rows, first=0):
    return row_keys(first, tf.constant(0, tf.int64), tf.range(rows, dtype=tf.int64), SAMPLING)


def test_sample_frequencies_match_the_tempered_softmax():
    logits = np.array([2.0, 1.0, 0.5, 0.0, -1.0, 1.5], np.float32)
    rows, slots = 4000, 5
    for temperature in (1.0, 0.5):
        tiled = np.tile(logits, (rows, slots, 1))
        samples = np.asarray(sample_replacements(tiled, np.zeros((rows, slots), np.int32), _seeds(rows),
                                                 temperature=temperature)).ravel()
        expected = np.exp(logits.astype(np.float64) / temperature)
        expected /= expected.sum()
        counts = np.bincount(samples, minlength=len(logits))
        assert stats.chisquare(counts, expected * counts.sum()).pvalue > 1e-3, (temperature, counts)


def test_disallow_correct_never_samples_the_original():
    rows = 500
    logits = np.tile(np.array([5.0, 0.0, 0.0, 0.0], np.float32), (rows, 2, 1))
    labels = np.zeros((rows, 2), np.int32)
    allowed = np.asarray(sample_replacements(logits, labels, _seeds(rows)))
    assert (allowed == 0).mean() > 0.8
    disallowed = np.asarray(sample_replacements(logits, labels, _seeds(rows), disallow_correct=True))
    assert (disallowed != 0).all()


def test_rows_draw_independently_of_the_batch_they_are_in():
    logits = tf.random.stateless_normal([6, 4, 30], seed=[1, 2])
    seeds = _seeds(6, first=9)
    whole = np.asarray(sample_replacements(logits, tf.zeros([6, 4], tf.int32), seeds))
    halves = [np.asarray(sample_replacements(logits[i:i + 3], tf.zeros([3, 4], tf.int32), seeds[i:i + 3]))
              for i in (0, 3)]
    np.testing.assert_array_equal(whole, np.concatenate(halves))


def test_unigram_samples_follow_the_counts_and_never_draw_an_uncounted_token():
    counts = np.array([0, 0, 1, 2, 3, 0, 4], np.float64)
    keys = _seeds(3000, first=5)
    drawn = np.asarray(sample_unigram(tf.constant(counts), tf.zeros([3000, 4]), keys)).ravel()
    observed = np.bincount(drawn, minlength=len(counts))
    assert observed[counts == 0].sum() == 0
    assert stats.chisquare(observed[counts > 0], counts[counts > 0] / counts.sum() * drawn.size).pvalue > 1e-3
    again = np.asarray(sample_unigram(tf.constant(counts), tf.zeros([3000, 4]), keys)).ravel()
    np.testing.assert_array_equal(drawn, again)
