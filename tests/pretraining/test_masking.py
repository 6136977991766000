import numpy as np
import pytest
import tensorflow as tf
from scipy import stats

from electra_tf.config import PretrainingConfig
from electra_tf.pretraining.batch_masking import BatchMasker
from electra_tf.pretraining.masking import mask_tokens, num_to_predict, scatter_positions
from electra_tf.util.rng import MASKING, row_keys

P = 6


def _draws(tiny_vocab, rows=4000, seq_length=16, mask_prob=0.15, with_replacement=False, mask_token_rate=0.85,
           random_token_rate=0.0, seed=0, max_predictions=P):
    batch = tiny_vocab.batch(batch_size=rows, seq_length=seq_length, seed=seed, min_length=4)
    keys = row_keys(seed, tf.constant(0, tf.int64), tf.range(rows, dtype=tf.int64), MASKING)
    out = mask_tokens(batch["input_ids"], batch["attention_mask"], keys, mask_prob=mask_prob,
                      max_predictions=max_predictions, mask_token_id=tiny_vocab.mask,
                      special_token_ids=tiny_vocab.special_ids,
                      vocab_size=tiny_vocab.size, mask_token_rate=mask_token_rate,
                      random_token_rate=random_token_rate, with_replacement=with_replacement)
    return batch, {k: np.asarray(v) for k, v in out._asdict().items()}


def test_count_rule_and_never_special_tokens(tiny_vocab):
    batch, out = _draws(tiny_vocab, mask_prob=0.3)
    ids, attention = batch["input_ids"], batch["attention_mask"]
    n_tokens = attention.sum(1)
    candidates = ((attention == 1) & ~np.isin(ids, tiny_vocab.special_ids)).sum(1)
    expected = np.clip(np.round(n_tokens * 0.3), 1, P).astype(int)  # numpy rounds half to even, as tf.round
    np.testing.assert_array_equal(out["weights"].sum(1), np.minimum(expected, candidates))
    np.testing.assert_array_equal(np.asarray(num_to_predict(attention, 0.3, P)), expected)
    for row in range(len(ids)):
        used = out["positions"][row][out["weights"][row] > 0]
        assert len(set(used)) == len(used)  # without replacement: exact count, distinct positions
        assert attention[row, used].all()
        assert not np.isin(ids[row, used], tiny_vocab.special_ids).any()
        np.testing.assert_array_equal(out["labels"][row][out["weights"][row] > 0], ids[row, used])
        changed = np.flatnonzero(out["input_ids"][row] != ids[row])
        assert set(changed) <= set(used)
    # Unused slots point at position 0 with weight 0.
    assert (out["positions"][out["weights"] == 0] == 0).all()


def test_masking_rate_is_mask_prob(tiny_vocab):
    # Enough slots that the cap never binds: the rate is round(n * p) / n.
    batch, out = _draws(tiny_vocab, rows=3000, seq_length=64, mask_prob=0.15, max_predictions=20)
    n_tokens = batch["attention_mask"].sum(1)
    rate = out["weights"].sum() / n_tokens.sum()
    assert abs(rate - 0.15) < 0.01


def test_positions_are_uniform_over_candidates(tiny_vocab):
    rows, seq_length = 6000, 12
    ids = np.tile(np.array([[2] + list(range(10, 20)) + [3]], np.int32), (rows, 1))
    keys = row_keys(0, tf.constant(0, tf.int64), tf.range(rows, dtype=tf.int64), MASKING)
    out = mask_tokens(ids, np.ones_like(ids), keys, mask_prob=0.2, max_predictions=3, mask_token_id=tiny_vocab.mask,
                      special_token_ids=tiny_vocab.special_ids, vocab_size=tiny_vocab.size)
    positions = np.asarray(out.positions)[np.asarray(out.weights) > 0]
    counts = np.bincount(positions, minlength=seq_length)
    assert counts[0] == 0 and counts[-1] == 0
    assert stats.chisquare(counts[1:-1]).pvalue > 1e-3


def test_85_15_split_and_no_random_tokens_by_default(tiny_vocab):
    batch, out = _draws(tiny_vocab, rows=4000, seq_length=32)
    used = out["weights"] > 0
    new = np.take_along_axis(out["input_ids"], out["positions"], axis=1)[used]
    masked = (new == tiny_vocab.mask).mean()
    kept = (new == out["labels"][used]).mean()
    assert abs(masked - 0.85) < 0.02 and abs(kept - 0.15) < 0.02
    assert masked + kept == pytest.approx(1.0)


def test_random_token_rate(tiny_vocab):
    _, out = _draws(tiny_vocab, rows=4000, seq_length=32, mask_token_rate=0.8, random_token_rate=0.1)
    used = out["weights"] > 0
    new = np.take_along_axis(out["input_ids"], out["positions"], axis=1)[used]
    labels = out["labels"][used]
    assert abs((new == tiny_vocab.mask).mean() - 0.8) < 0.02
    randomised = (new != tiny_vocab.mask) & (new != labels)
    assert abs(randomised.mean() - 0.1 * (1 - 1 / tiny_vocab.size)) < 0.02
    assert new.min() >= 0 and new.max() < tiny_vocab.size


def test_with_replacement_reproduces_the_original_sampling(tiny_vocab):
    batch, out = _draws(tiny_vocab, rows=3000, seq_length=16, mask_prob=0.4, with_replacement=True)
    n_tokens = batch["attention_mask"].sum(1)
    expected = np.clip(np.round(n_tokens * 0.4), 1, P)
    np.testing.assert_array_equal(out["weights"].sum(1), expected)
    distinct = [len(set(out["positions"][r][out["weights"][r] > 0])) for r in range(len(n_tokens))]
    assert np.mean(np.array(distinct) < expected) > 0.1  # duplicates happen, as in the original
    used = out["positions"][out["weights"] > 0]
    ids = np.take_along_axis(batch["input_ids"], out["positions"], axis=1)[out["weights"] > 0]
    assert not np.isin(ids, tiny_vocab.special_ids).any() and used.min() > 0


def test_same_seed_same_draws_different_seed_different_draws(tiny_vocab):
    _, a = _draws(tiny_vocab, rows=50, seed=1)
    _, b = _draws(tiny_vocab, rows=50, seed=1)
    _, c = _draws(tiny_vocab, rows=50, seed=2)
    np.testing.assert_array_equal(a["positions"], b["positions"])
    assert (a["positions"] != c["positions"]).any()


def test_sequences_shorter_than_the_prediction_slots_are_an_error(tiny_vocab):
    with pytest.raises(ValueError, match="shorter than max_predictions_per_seq"):
        mask_tokens(np.zeros((1, 4), np.int32), np.ones((1, 4), np.int32), tf.zeros([1], tf.uint64),
                    mask_prob=0.15, max_predictions=5, mask_token_id=tiny_vocab.mask,
                    special_token_ids=tiny_vocab.special_ids,
                    vocab_size=tiny_vocab.size)


def test_scatter_positions_ignores_unused_slots_even_at_a_real_position_zero():
    ids = tf.constant([[11, 12, 13]])
    out = scatter_positions(ids, tf.constant([[0, 0, 2]]), tf.constant([[1.0, 0.0, 1.0]]), tf.constant([[7, 8, 9]]))
    np.testing.assert_array_equal(out, [[7, 12, 9]])


def _whole_word_draws(tiny_vocab, rows=3000, seq_length=24, mask_prob=0.3, with_replacement=False, max_predictions=8):
    batch = tiny_vocab.batch(batch_size=rows, seq_length=seq_length, seed=4, min_length=6)
    continuation = np.isin(np.arange(tiny_vocab.size), tiny_vocab.continuation_ids)
    keys = row_keys(0, tf.constant(0, tf.int64), tf.range(rows, dtype=tf.int64), MASKING)
    out = mask_tokens(batch["input_ids"], batch["attention_mask"], keys, mask_prob=mask_prob,
                      max_predictions=max_predictions, mask_token_id=tiny_vocab.mask,
                      special_token_ids=tiny_vocab.special_ids, vocab_size=tiny_vocab.size,
                      with_replacement=with_replacement, word_continuation=continuation)
    return batch, continuation, {k: np.asarray(v) for k, v in out._asdict().items()}


def _word_of_each_token(ids, attention, continuation, special_ids):
    """Per row, the word index of each candidate token (-1 elsewhere), by the `##` rule."""
    candidate = (attention == 1) & ~np.isin(ids, special_ids)
    words = np.full(ids.shape, -1)
    for row in range(len(ids)):
        word = -1
        for t in range(ids.shape[1]):
            if candidate[row, t]:
                if not (continuation[ids[row, t]] and t > 0 and candidate[row, t - 1]):
                    word += 1
                words[row, t] = word
    return words


def test_whole_word_masking_masks_words_whole_within_the_token_count(tiny_vocab):
    batch, continuation, out = _whole_word_draws(tiny_vocab)
    ids, attention = batch["input_ids"], batch["attention_mask"]
    words = _word_of_each_token(ids, attention, continuation, tiny_vocab.special_ids)
    count = np.asarray(num_to_predict(attention, 0.3, 8))
    used_counts = out["weights"].sum(1)
    assert (used_counts <= count).all()
    for row in range(len(ids)):
        used = out["positions"][row][out["weights"][row] > 0]
        assert len(set(used)) == len(used)
        chosen = set(words[row, used])
        assert -1 not in chosen
        # Every piece of a chosen word is chosen: words are masked whole.
        assert set(used) == set(np.flatnonzero(np.isin(words[row], list(chosen))))
        # BERT's rule: a word left out would not have fitted in the count.
        lengths = np.bincount(words[row][words[row] >= 0])
        left_out = [w for w in range(len(lengths)) if w not in chosen]
        assert all(used_counts[row] + lengths[w] > count[row] for w in left_out)
    assert (used_counts == count).mean() > 0.7  # mostly the full count
    assert abs(used_counts.sum() / attention.sum() - 0.3) < 0.04


def test_whole_word_masking_picks_words_uniformly_and_splits_85_15_per_token(tiny_vocab):
    rows = 6000
    # Ten words of one piece (positions 1-10), then two of two pieces each (11-12, 13-14).
    ids = np.tile(np.array([[2, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 40, 16, 41, 3]], np.int32), (rows, 1))
    continuation = np.isin(np.arange(tiny_vocab.size), tiny_vocab.continuation_ids)
    keys = row_keys(1, tf.constant(0, tf.int64), tf.range(rows, dtype=tf.int64), MASKING)
    out = mask_tokens(ids, np.ones_like(ids), keys, mask_prob=0.07, max_predictions=3, mask_token_id=tiny_vocab.mask,
                      special_token_ids=tiny_vocab.special_ids, vocab_size=tiny_vocab.size,
                      word_continuation=continuation)
    positions, weights = np.asarray(out.positions), np.asarray(out.weights)
    # round(16 * 0.07) = 1 token: two-piece words never fit, the ten one-piece words share the draws evenly.
    assert (weights.sum(1) == 1).all()
    counts = np.bincount(positions[weights > 0], minlength=16)
    assert counts[[0, 11, 12, 13, 14, 15]].sum() == 0
    assert stats.chisquare(counts[1:11]).pvalue > 1e-3
    new = np.take_along_axis(np.asarray(out.input_ids), positions, axis=1)[weights > 0]
    assert abs((new == tiny_vocab.mask).mean() - 0.85) < 0.02


def test_whole_word_masking_with_replacement_draws_words_again(tiny_vocab):
    batch, continuation, out = _whole_word_draws(tiny_vocab, mask_prob=0.5, with_replacement=True)
    words = _word_of_each_token(batch["input_ids"], batch["attention_mask"], continuation, tiny_vocab.special_ids)
    count = np.asarray(num_to_predict(batch["attention_mask"], 0.5, 8))
    assert (out["weights"].sum(1) <= count).all()
    repeated = 0
    for row in range(len(words)):
        used = out["positions"][row][out["weights"][row] > 0]
        chosen = set(words[row, used])
        assert -1 not in chosen and set(used) == set(np.flatnonzero(np.isin(words[row], list(chosen))))
        repeated += len(set(used)) < len(used)
    assert repeated > 0.1 * len(words)  # duplicates happen, as with the original's token draws


def test_whole_word_masking_draws_depend_only_on_the_keys(tiny_vocab):
    first = _whole_word_draws(tiny_vocab, rows=64)[2]
    again = _whole_word_draws(tiny_vocab, rows=64)[2]
    np.testing.assert_array_equal(first["positions"], again["positions"])
    np.testing.assert_array_equal(first["input_ids"], again["input_ids"])


@pytest.mark.parametrize("with_replacement", [False, True])
def test_a_segmenter_s_word_marks_join_tokens_as_continuation_pieces_do(with_replacement):
    """Chinese shards tell words by `continues_word` (a segmenter's), not by `##` ids: the same words told either
    way give the same draws, through the pre-trainer's `BatchMasker`."""
    rng = np.random.default_rng(1)
    marks = rng.random((64, 24)) < 0.4
    marks[:, 0] = False
    ids = rng.integers(5, 40, size=(64, 24)) + 40 * marks  # a continuing token is one of the ids 45..79
    inputs = {"input_ids": tf.constant(ids, tf.int32), "attention_mask": tf.ones([64, 24], tf.int32)}
    config = PretrainingConfig(max_seq_length=24, mask_prob=0.3, whole_word_masking=True,
                               mask_with_replacement=with_replacement)
    by_pieces = BatchMasker(config, 80, 4, [0, 2, 3], word_continuation_ids=range(45, 80))(inputs, counter=3)
    by_marks = BatchMasker(config, 80, 4, [0, 2, 3], word_continuation_ids=[])(
        {**inputs, "continues_word": tf.constant(marks, tf.int32)}, counter=3)
    for a, b in zip(by_pieces, by_marks):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert by_marks.weights.numpy().sum() > 200
    unmasked = BatchMasker(config.replace(whole_word_masking=False), 80, 4, [0, 2, 3])(
        {**inputs, "continues_word": tf.constant(marks, tf.int32)}, counter=3)  # the marks serve whole words only
    plain = BatchMasker(config.replace(whole_word_masking=False), 80, 4, [0, 2, 3])(inputs, counter=3)
    np.testing.assert_array_equal(unmasked.positions.numpy(), plain.positions.numpy())
