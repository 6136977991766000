"""Answer spans from question-answering logits, in-graph: the one set of rules of the serving graph (the best
span of a window) and SQuAD's evaluation (`data.tasks.squad.postprocess`: every window's candidates).

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

# ELECTRA's `qa_na_threshold`: "" when the answerable classifier's smallest logit exceeds it.
ANSWERABLE_NULL_THRESHOLD = -2.75
# BERT's `null_score_diff_threshold`: "" when null score - best span score exceeds it.
SPAN_NULL_THRESHOLD = 0.0
# Stands for "no span": JSON (TF Serving's REST API) has no infinity.
NO_SPAN_ODDS = 3.0e38

Candidates = collections.namedtuple("Candidates", "start end start_score end_score valid null_score")
Span = collections.namedtuple("Span", "start end score null_odds found has_answerable_logits")


def _top(scores, allowed, n):
    """`(indices, values)` of the `n` highest allowed scores along the last axis, best first (ties: the lower
    index); values are -inf where fewer than `n` are allowed."""
    top = tf.math.top_k(tf.where(allowed, scores, float("-inf")), tf.minimum(n, tf.shape(scores)[-1]))
    return top.indices, top.values


def _log_softmax(logits, allowed):
    return tf.nn.log_softmax(tf.where(allowed, logits, float("-inf")), axis=-1)


def span_candidates(start_logits, end_logits, context, start_candidates=None, max_answer_length=30,
                    n_best_size=20, start_allowed=None):
    """Every candidate span of each row, best starts first: a `Candidates` of `[B, M]` tensors and the null score
    `[B]`. A span lies on `context` tokens, `start <= end < start + max_answer_length`, among the `n_best_size`
    best starts and ends. `end_logits` is `[B, L]` (Hugging Face's head: scores are logits) or `[B, K, L]`
    given `start_candidates` `[B, K]` (the joint head: log-probabilities); `start_allowed` `[B, L]` filters
    the starts after they are chosen (the tokens with their maximum context in the window).
    """
    start_logits, end_logits = tf.cast(start_logits, tf.float32), tf.cast(end_logits, tf.float32)
    batch = tf.shape(start_logits)[0]
    if start_candidates is None:  # Hugging Face: every top start with every top end.
        starts, start_scores = _top(start_logits, context, n_best_size)
        ends, end_scores = _top(end_logits, context, n_best_size)
        starts, start_scores = starts[:, :, None], start_scores[:, :, None]
        ends, end_scores = ends[:, None, :], end_scores[:, None, :]
        null_score = start_logits[:, 0] + end_logits[:, 0]
    else:  # The joint head: each start candidate with the top ends given it.
        starts = tf.cast(start_candidates, tf.int32)[:, :, None]
        answer_mask = tf.concat([tf.ones_like(context[:, :1]), context[:, 1:]], axis=1)
        start_log_probs = _log_softmax(start_logits, answer_mask)
        end_log_probs = _log_softmax(end_logits, answer_mask[:, None])
        ends, end_scores = _top(end_log_probs, context[:, None], n_best_size)
        start_scores = tf.where(tf.gather(context, starts, batch_dims=1),
                                tf.gather(start_log_probs, starts, batch_dims=1), float("-inf"))
        # [CLS]'s end log-prob where [CLS] is a candidate (0 when it is not), as the original.
        null_end = tf.reduce_sum(tf.where(starts[:, :, 0] == 0, end_log_probs[:, :, 0], 0.0), axis=1)
        null_score = start_log_probs[:, 0] + null_end
    shape = tf.shape(starts + ends)  # the broadcast shape, by an Add (graph converters have no BroadcastArgs)
    flat = lambda values: tf.reshape(tf.broadcast_to(values, shape), [batch, -1])  # noqa: E731
    start, end = flat(starts), flat(ends)
    start_score, end_score = flat(start_scores), flat(end_scores)
    valid = ((start_score > float("-inf")) & (end_score > float("-inf")) & (end >= start)
             & (end < start + max_answer_length))
    if start_allowed is not None:
        valid &= tf.gather(start_allowed, start, batch_dims=1)
    return Candidates(start, end, start_score, end_score, valid, null_score)


def best_span(start_logits, end_logits, context, start_candidates=None, answerable_logits=None,
              max_answer_length=30, n_best_size=20):
    """The best span of each row: a `Span` of `[batch]` tensors (`start`/`end` -1 when none fits); higher
    `answerable_logits` mean unanswerable."""
    candidates = span_candidates(start_logits, end_logits, context, start_candidates, max_answer_length,
                                 n_best_size)
    scores = tf.where(candidates.valid, candidates.start_score + candidates.end_score, float("-inf"))
    best = tf.argmax(scores, axis=1, output_type=tf.int32)
    found = tf.reduce_any(candidates.valid, axis=1)
    score = tf.where(found, tf.gather(scores, best, batch_dims=1), 0.0)
    start = tf.where(found, tf.gather(candidates.start, best, batch_dims=1), -1)
    end = tf.where(found, tf.gather(candidates.end, best, batch_dims=1), -1)
    if answerable_logits is not None:
        null_odds = tf.reshape(tf.cast(answerable_logits, tf.float32), [-1])
    else:
        null_odds = tf.where(found, candidates.null_score - score, NO_SPAN_ODDS)
    return Span(start, end, score, null_odds, found, answerable_logits is not None)


def answer_decision(span, version_2, null_threshold=None):
    """bool `[B]`: answer with the best span (SQuAD 2.0: when the null odds are at most `null_threshold`)."""
    if not version_2:
        return span.found
    if null_threshold is None:
        null_threshold = ANSWERABLE_NULL_THRESHOLD if span.has_answerable_logits else SPAN_NULL_THRESHOLD
    return span.found & (span.null_odds <= null_threshold)
