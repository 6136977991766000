import numpy as np
import pytest
import tensorflow as tf
from scipy import stats

from electra_tf.pretraining.sampling import _first_reaching, sample_replacements, sample_unigram
from electra_tf.util.rng import SAMPLING, row_keys


def _seeds(rows, first=0):
    return row_keys(first, tf.constant(0, tf.int64), tf.range(rows, dtype=tf.int64), SAMPLING)


SAMPLERS = pytest.mark.parametrize("sampler", ["inverse_cdf", "gumbel"])


@SAMPLERS
@pytest.mark.parametrize("vocab", [6, 300])  # one block; blocks of 32 with a padded last one
def test_sample_frequencies_match_the_tempered_softmax(sampler, vocab):
    logits = np.resize(np.array([2.0, 1.0, 0.5, 0.0, -1.0, 1.5], np.float32), vocab)
    rows, slots = 4000, 5
    for temperature in (1.0, 0.5):
        tiled = np.tile(logits, (rows, slots, 1))
        samples = np.asarray(sample_replacements(tiled, np.zeros((rows, slots), np.int32), _seeds(rows),
                                                 temperature=temperature, sampler=sampler)).ravel()
        expected = np.exp(logits.astype(np.float64) / temperature)
        expected /= expected.sum()
        counts = np.bincount(samples, minlength=len(logits))
        assert stats.chisquare(counts, expected * counts.sum()).pvalue > 1e-3, (temperature, counts)


@SAMPLERS
def test_disallow_correct_never_samples_the_original(sampler):
    rows = 500
    logits = np.tile(np.array([5.0, 0.0, 0.0, 0.0], np.float32), (rows, 2, 1))
    labels = np.zeros((rows, 2), np.int32)
    allowed = np.asarray(sample_replacements(logits, labels, _seeds(rows), sampler=sampler))
    assert (allowed == 0).mean() > 0.8
    disallowed = np.asarray(sample_replacements(logits, labels, _seeds(rows), disallow_correct=True,
                                                sampler=sampler))
    assert (disallowed != 0).all()


def test_the_inverse_cdf_never_draws_a_token_of_no_weight_nor_one_past_the_vocabulary():
    # Weights that underflow to 0 beside a few that do not, in blocks of 64 (the last one padded), and uniforms
    # up to 1 - 2**-24: the draw stays on the tokens of positive weight even where rounding overshoots.
    vocab, rows = 3001, 2000
    logits = np.full((rows, 3, vocab), -1e4, np.float32)
    live = [0, 63, 64, 2999, 3000]
    logits[:, :, live] = np.linspace(0.0, 20.0, len(live), dtype=np.float32)
    drawn = np.asarray(sample_replacements(logits, np.zeros((rows, 3), np.int32), _seeds(rows)))
    assert set(np.unique(drawn)) <= set(live) and 3000 in drawn


def test_a_target_rounded_to_the_total_or_past_it_takes_the_last_token_of_positive_weight():
    # Block sums and the chosen block's cumulative weights are summed in different orders, so the remainder can
    # reach the block's last cumulative value; the trailing zero-weight entries (padding) must not be drawn.
    cumulative = tf.constant([[1.0, 2.0, 3.0, 3.0, 3.0]] * 5)
    found = _first_reaching(cumulative, tf.constant([0.5, 1.0, 2.5, 3.0, 3.5]))
    np.testing.assert_array_equal(found, [0, 1, 2, 2, 2])


@SAMPLERS
def test_rows_draw_independently_of_the_batch_they_are_in(sampler):
    logits = tf.random.stateless_normal([6, 4, 30], seed=[1, 2])
    seeds = _seeds(6, first=9)
    whole = np.asarray(sample_replacements(logits, tf.zeros([6, 4], tf.int32), seeds, sampler=sampler))
    halves = [np.asarray(sample_replacements(logits[i:i + 3], tf.zeros([3, 4], tf.int32), seeds[i:i + 3],
                                             sampler=sampler)) for i in (0, 3)]
    np.testing.assert_array_equal(whole, np.concatenate(halves))


def test_both_samplers_draw_the_same_ids_with_and_without_xla():
    logits = tf.random.stateless_normal([4, 5, 700], seed=[3, 4]) * 4
    labels, keys = tf.zeros([4, 5], tf.int32), _seeds(4, first=2)
    for sampler in ("inverse_cdf", "gumbel"):
        ids = [tf.function(lambda x: sample_replacements(x, labels, keys, sampler=sampler), jit_compile=jit)(logits)
               for jit in (False, True)]
        np.testing.assert_array_equal(*ids)


def test_an_unknown_sampler_is_refused():
    with pytest.raises(ValueError, match="'inverse_cdf' or 'gumbel'"):
        sample_replacements(tf.zeros([1, 1, 3]), tf.zeros([1, 1], tf.int32), _seeds(1), sampler="top_k")


def test_unigram_samples_follow_the_counts_and_never_draw_an_uncounted_token():
    counts = np.array([0, 0, 1, 2, 3, 0, 4], np.float64)
    keys = _seeds(3000, first=5)
    drawn = np.asarray(sample_unigram(tf.constant(counts), tf.zeros([3000, 4]), keys)).ravel()
    observed = np.bincount(drawn, minlength=len(counts))
    assert observed[counts == 0].sum() == 0
    assert stats.chisquare(observed[counts > 0], counts[counts > 0] / counts.sum() * drawn.size).pvalue > 1e-3
    again = np.asarray(sample_unigram(tf.constant(counts), tf.zeros([3000, 4]), keys)).ravel()
    np.testing.assert_array_equal(drawn, again)
