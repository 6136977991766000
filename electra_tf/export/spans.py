"""The best answer span of one window, in-graph: `squad.postprocess` for a single feature, as TF ops.

`electra_tf.data.tasks.squad.postprocess` is numpy over many windows per
question; a serving signature answers one `(question, context)` window with
no Python, so its choice is re-stated here with the same rules:

- a span starts and ends on context tokens, `start <= end < start +
  max_answer_length`, the start among the `n_best_size` best starts and the
  end among the `n_best_size` best ends (of its start candidate, with the
  joint head);
- Hugging Face's head scores `start_logit + end_logit`; the original joint
  head scores `log_softmax(start)[s] + log_softmax(end | s)[e]` over [CLS]
  and the context, for its `start_candidates`;
- the null score is the answerable logit when the model has that classifier;
  otherwise [CLS]'s start + end score, and the null odds are null score - best
  span score. SQuAD 2.0 predicts no answer when the null odds exceed the
  threshold (ELECTRA's -2.75 with the classifier, BERT's 0.0 without).

Example:
>>> start = tf.constant([[3.0, 0.0, 0.0, 2.0, 1.0, 0.0]])  # [CLS] who [SEP] ann bob [SEP]
>>> end = tf.constant([[3.0, 0.0, 0.0, 1.0, 2.0, 0.0]])
>>> context = tf.constant([[False, False, False, True, True, False]])
>>> span = best_span(start, end, context)
>>> span.start.numpy().tolist(), span.end.numpy().tolist(), span.score.numpy().tolist()
([3], [4], [4.0])
>>> span.null_odds.numpy().tolist(), answer_decision(span, version_2=True).numpy().tolist()
([2.0], [False])
"""

import collections

import tensorflow as tf

from electra_tf.data.tasks.squad import ANSWERABLE_NULL_THRESHOLD, SPAN_NULL_THRESHOLD

# Stands for "no span": JSON (TF Serving's REST API) has no infinity.
NO_SPAN_ODDS = 3.0e38

Span = collections.namedtuple("Span", "start end score null_odds found has_answerable_logits")


def _allowed_top(scores, allowed, n):
    """Boolean mask of the `n` highest allowed scores along the last axis (ties: the lower index)."""
    masked = tf.where(allowed, scores, float("-inf"))
    k = tf.minimum(n, tf.shape(scores)[-1])
    top = tf.math.top_k(masked, k)
    chosen = tf.reduce_sum(tf.one_hot(top.indices, tf.shape(scores)[-1], dtype=tf.int32)
                           * tf.cast(top.values > float("-inf"), tf.int32)[..., None], axis=-2)
    return chosen > 0


def _log_softmax(logits, allowed):
    return tf.nn.log_softmax(tf.where(allowed, logits, float("-inf")), axis=-1)


def best_span(start_logits, end_logits, context, start_candidates=None, answerable_logits=None,
              max_answer_length=30, n_best_size=20):
    """The best span of each row: a `Span` of `[batch]` tensors (token positions `start`/`end`, -1 when
    `found` is False, i.e. no span fits).

    Args:
        start_logits: `[B, L]`.
        end_logits: `[B, L]` (Hugging Face's head) or `[B, K, L]` given `start_candidates` `[B, K]`.
        context: bool `[B, L]`, True on the context's tokens.
        answerable_logits: `[B]` or None; higher means unanswerable.
    """
    start_logits, end_logits = tf.cast(start_logits, tf.float32), tf.cast(end_logits, tf.float32)
    length = tf.shape(start_logits)[1]
    position = tf.range(length)
    if start_candidates is None:  # Hugging Face: every top start with every top end.
        starts = _allowed_top(start_logits, context, n_best_size)
        ends = _allowed_top(end_logits, context, n_best_size)
        scores = start_logits[:, :, None] + end_logits[:, None, :]  # [B, start, end]
        valid = starts[:, :, None] & ends[:, None, :]
        span_start = tf.broadcast_to(position[None, :, None], tf.shape(scores))
        null_score = start_logits[:, 0] + end_logits[:, 0]
    else:  # The joint head: each start candidate with the top ends given it.
        candidates = tf.cast(start_candidates, tf.int32)
        answer_mask = tf.concat([tf.ones_like(context[:, :1]), context[:, 1:]], axis=1)
        start_log_probs = _log_softmax(start_logits, answer_mask)
        end_log_probs = _log_softmax(end_logits, answer_mask[:, None])
        candidate_score = tf.gather(start_log_probs, candidates, batch_dims=1)  # [B, K]
        scores = candidate_score[:, :, None] + end_log_probs  # [B, candidate, end]
        candidate_in_context = tf.gather(context, candidates, batch_dims=1)
        ends = _allowed_top(end_log_probs, context[:, None], n_best_size)
        valid = candidate_in_context[:, :, None] & ends
        span_start = tf.broadcast_to(candidates[:, :, None], tf.shape(scores))
        # [CLS]'s end log-prob where [CLS] is a candidate (0 when it is not), as the original.
        null_end = tf.reduce_sum(tf.where(candidates == 0, end_log_probs[:, :, 0], 0.0), axis=1)
        null_score = start_log_probs[:, 0] + null_end
    span_end = tf.broadcast_to(position[None, None, :], tf.shape(scores))
    valid &= (span_end >= span_start) & (span_end < span_start + max_answer_length)
    batch = tf.shape(scores)[0]
    flat_scores = tf.reshape(tf.where(valid, scores, float("-inf")), [batch, -1])
    best = tf.argmax(flat_scores, axis=1, output_type=tf.int32)
    found = tf.reduce_any(tf.reshape(valid, [batch, -1]), axis=1)
    score = tf.where(found, tf.gather(flat_scores, best, batch_dims=1), 0.0)
    start = tf.where(found, tf.gather(tf.reshape(span_start, [batch, -1]), best, batch_dims=1), -1)
    end = tf.where(found, tf.gather(tf.reshape(span_end, [batch, -1]), best, batch_dims=1), -1)
    if answerable_logits is not None:
        null_odds = tf.reshape(tf.cast(answerable_logits, tf.float32), [-1])
    else:
        null_odds = tf.where(found, null_score - score, NO_SPAN_ODDS)
    return Span(start, end, score, null_odds, found, answerable_logits is not None)


def answer_decision(span, version_2, null_threshold=None):
    """bool `[B]`: answer with the best span. SQuAD 1.1 answers whenever a span fits; 2.0 also needs
    the null odds at most `null_threshold` (default: -2.75 with the answerable classifier, else 0.0)."""
    if not version_2:
        return span.found
    if null_threshold is None:
        null_threshold = ANSWERABLE_NULL_THRESHOLD if span.has_answerable_logits else SPAN_NULL_THRESHOLD
    return span.found & (span.null_odds <= null_threshold)
