"""Dynamic in-graph masking by the original ELECTRA rules (`pretrain_helpers.mask`), with whole-word masking
(BERT's) and positions drawn without replacement, so the count is exact (`with_replacement=True`: the original's
draw). The rules: docs/pretraining.md and docs/pretraining_variants.md.
"""

from typing import NamedTuple

import tensorflow as tf

from electra_tf.util import rng


class MaskedBatch(NamedTuple):
    """What masking produces for a batch."""

    input_ids: tf.Tensor  # [batch, sequence] int32, the generator's input
    positions: tf.Tensor  # [batch, P] int32, selected positions (0 where unused)
    weights: tf.Tensor  # [batch, P] float32, 1 for a used prediction slot
    labels: tf.Tensor  # [batch, P] int32, the original ids at `positions`


def scatter_positions(ids, positions, weights, values):
    """`ids` with `ids[b, positions[b, p]] = values[b, p]` wherever `weights[b, p] > 0`: dense, deterministic (no
    scatter with duplicate indices) and of static shapes for XLA.

    Example:
    >>> scatter_positions(tf.constant([[5, 6, 7]]), tf.constant([[2, 0]]),
    ...                   tf.constant([[1.0, 0.0]]), tf.constant([[9, 9]])).numpy()
    array([[5, 6, 9]], dtype=int32)
    """
    hit = tf.equal(positions[:, :, None], tf.range(tf.shape(ids)[1], dtype=positions.dtype)[None, None, :])
    hit &= weights[:, :, None] > 0
    new_values = tf.reduce_max(tf.where(hit, values[:, :, None], tf.int32.min), axis=1)
    return tf.where(tf.reduce_any(hit, axis=1), new_values, ids)


def num_to_predict(attention_mask, mask_prob, max_predictions):
    """Per-example prediction count, `max(1, min(P, round(num_tokens * mask_prob)))`, [CLS] and [SEP] counted."""
    num_tokens = tf.reduce_sum(tf.cast(attention_mask, tf.float32), axis=1)
    count = tf.cast(tf.round(num_tokens * mask_prob), tf.int32)
    return tf.clip_by_value(count, 1, max_predictions)


def _select_without_replacement(candidates, noise, max_predictions):
    # The top-P of uniform scores on candidates (-1 elsewhere): a uniformly random subset, in random order.
    scores = tf.where(candidates, noise, -1.0)
    top_scores, positions = tf.math.top_k(scores, k=max_predictions)
    return positions, top_scores >= 0.0


def _select_with_replacement(candidates, noise, max_predictions):
    # The k-th candidate (k uniform in [0, num_candidates)) for each slot.
    num_candidates = tf.reduce_sum(tf.cast(candidates, tf.int32), axis=1, keepdims=True)
    k = tf.minimum(tf.cast(noise[:, :max_predictions] * tf.cast(num_candidates, tf.float32), tf.int32),
                   num_candidates - 1)
    rank = tf.cumsum(tf.cast(candidates, tf.int32), axis=1, exclusive=True)
    match = candidates[:, None, :] & tf.equal(rank[:, None, :], k[:, :, None])
    positions = tf.argmax(tf.cast(match, tf.int32), axis=2, output_type=tf.int32)
    return positions, tf.broadcast_to(num_candidates > 0, tf.shape(positions))


def _segment_per_row(values, segments, valid, reduce):
    """`reduce` of `values` [batch, L] into L segments per row (`segments` [batch, L], used where `valid`)."""
    batch, length = tf.shape(values)[0], tf.shape(values)[1]
    flat = tf.where(valid, tf.range(batch)[:, None] * length + segments, batch * length)  # the rest to a dump
    reduced = reduce(tf.reshape(values, [-1]), tf.reshape(flat, [-1]), batch * length + 1)
    return tf.reshape(reduced[:-1], [batch, length])


def _words(candidates, input_ids, word_continuation, continues_word=None):
    """Each row's words: (start position, number of pieces) `[batch, L]` each (0 past the row's words), and
    their count. A `##` piece (or one `continues_word` marks) after a non-candidate starts a word of its own."""
    continues = tf.gather(tf.cast(word_continuation, tf.bool), input_ids)
    if continues_word is not None:
        continues |= tf.cast(continues_word, tf.bool)
    after_candidate = tf.pad(candidates[:, :-1], [[0, 0], [1, 0]])
    starts = candidates & ~(continues & after_candidate)
    word = tf.cumsum(tf.cast(starts, tf.int32), axis=1) - 1
    positions = tf.broadcast_to(tf.range(tf.shape(input_ids)[1]), tf.shape(input_ids))
    start = _segment_per_row(positions, word, starts, tf.math.unsorted_segment_max)
    pieces = _segment_per_row(tf.ones_like(word), word, candidates, tf.math.unsorted_segment_sum)
    return tf.maximum(start, 0), pieces, tf.reduce_sum(tf.cast(starts, tf.int32), axis=1)


def _select_whole_words(candidates, input_ids, word_continuation, noise, count, max_predictions,
                        with_replacement, continues_word=None):
    """Positions of whole words, taken in a random order while they fit in `count` tokens (one that would
    overflow it is skipped, as BERT does)."""
    start, pieces, num_words = _words(candidates, input_ids, word_continuation, continues_word)
    length = tf.shape(noise)[1]
    if with_replacement:  # `length` draws of a uniformly random word, as the original draws tokens
        draws = tf.minimum(tf.cast(noise * tf.cast(num_words[:, None], tf.float32), tf.int32),
                           tf.maximum(num_words[:, None] - 1, 0))
        valid = tf.broadcast_to(num_words[:, None] > 0, tf.shape(draws))
    else:  # a random permutation of the words
        scores, draws = tf.math.top_k(tf.where(tf.range(length)[None, :] < num_words[:, None], noise, -1.0), k=length)
        valid = scores >= 0.0
    drawn = tf.where(valid, tf.gather(pieces, draws, batch_dims=1), 0)
    # BERT's rule: a word that would overflow the count is skipped, and the next ones still tried.
    ends = tf.transpose(tf.scan(lambda total, n: tf.where(total + n <= count, total + n, total),
                                tf.transpose(drawn), initializer=tf.zeros_like(count)))
    taken = ends - tf.pad(ends[:, :-1], [[0, 0], [1, 0]])
    # Slot s holds piece `s - (end - taken)` of the draw whose span of slots covers s.
    slots = tf.broadcast_to(tf.range(max_predictions), [tf.shape(noise)[0], max_predictions])
    owner = tf.minimum(tf.searchsorted(ends, slots, side="right"), length - 1)
    first_slot = tf.gather(ends - taken, owner, batch_dims=1)
    positions = tf.gather(start, tf.gather(draws, owner, batch_dims=1), batch_dims=1) + slots - first_slot
    return positions, slots < ends[:, -1:]


def mask_tokens(input_ids, attention_mask, keys, *, mask_prob, max_predictions, mask_token_id,
                special_token_ids, vocab_size, mask_token_rate=0.85, random_token_rate=0.0,
                with_replacement=False, word_continuation=None, continues_word=None):
    """Selects and corrupts up to `max_predictions` positions per example with the `[batch]` `keys`
    (`rng.row_keys`): a `MaskedBatch`. `word_continuation`: `[vocab_size]` booleans, true for the `##` pieces; given,
    whole words are masked, `continues_word` (`[batch, sequence]`, the shards' feature) joining words too.

    Example:
    >>> ids = tf.constant([[101, 7, 8, 9, 102, 0]])
    >>> mask = tf.constant([[1, 1, 1, 1, 1, 0]])
    >>> keys = tf.constant([7], tf.uint64)
    >>> out = mask_tokens(ids, mask, keys, mask_prob=0.4, max_predictions=3, mask_token_id=103,
    ...                   special_token_ids=[0, 101, 102, 103], vocab_size=200)
    >>> int(out.weights.numpy().sum())
    2
    """
    input_ids = tf.cast(input_ids, tf.int32)
    attention_mask = tf.cast(attention_mask, tf.int32)
    sequence_length = input_ids.shape[1]
    if sequence_length is not None and sequence_length < max_predictions:
        raise ValueError(f"sequence length {sequence_length} is shorter than "
                         f"max_predictions_per_seq={max_predictions}")
    is_special = tf.reduce_any(
        tf.equal(input_ids[:, :, None], tf.constant(list(special_token_ids), tf.int32)[None, None, :]), axis=2)
    candidates = (attention_mask > 0) & ~is_special

    length = tf.shape(input_ids)[1]
    noise = rng.per_row_uniform(keys, [length + 2 * max_predictions])
    selection_noise = noise[:, :length]
    action_noise = noise[:, length:length + max_predictions]
    token_noise = noise[:, length + max_predictions:]

    count = num_to_predict(attention_mask, mask_prob, max_predictions)
    if word_continuation is not None:
        positions, used = _select_whole_words(candidates, input_ids, word_continuation, selection_noise, count,
                                              max_predictions, with_replacement, continues_word)
    else:
        select = _select_with_replacement if with_replacement else _select_without_replacement
        positions, selectable = select(candidates, selection_noise, max_predictions)
        used = selectable & (tf.range(max_predictions)[None, :] < count[:, None])
    positions = tf.where(used, positions, 0)
    weights = tf.cast(used, tf.float32)
    labels = tf.gather(input_ids, positions, batch_dims=1)

    random_ids = tf.minimum(tf.cast(token_noise * vocab_size, tf.int32), vocab_size - 1)
    new_ids = tf.where(action_noise < mask_token_rate, mask_token_id,
                       tf.where(action_noise < mask_token_rate + random_token_rate, random_ids, labels))
    masked_ids = scatter_positions(input_ids, positions, weights, new_ids)
    return MaskedBatch(masked_ids, positions, weights, labels)


def continuation_token_ids(vocabulary):
    """The ids of the WordPiece tokens that continue a word (`##` pieces), for whole-word masking.

    Example:
    >>> continuation_token_ids(["[PAD]", "un", "##able", "#", "##"])
    [2]
    """
    return [i for i, token in enumerate(vocabulary) if token.startswith("##") and len(token) > 2]
