"""The in-graph best span against `squad.postprocess` on single-window features, for both QA heads."""

import numpy as np
import pytest
import tensorflow as tf

from electra_tf.text import answer_spans as spans
from electra_tf.data.tasks import squad
from electra_tf.text.tokenizer import WordPieceTokenizer

WORDS = "the of and in to a was is for on as by with he at from his an were are which this be".split()


@pytest.fixture(scope="module")
def features():
    tokenizer = WordPieceTokenizer("tests/fixtures/tokenizer/vocab.txt")
    rng = np.random.default_rng(0)
    examples = [squad.SquadExample(str(i), " ".join(rng.choice(WORDS, 3)), " ".join(rng.choice(WORDS, n)))
                for i, n in enumerate(rng.integers(0, 30, size=48))]
    features = squad.squad_features(examples, tokenizer, max_seq_length=64)
    assert len(features) == len(examples)  # one window each
    return examples, features


def _in_graph(features, outputs, version_2, **kwargs):
    context = tf.constant(features.token_char_start >= 0)
    span = spans.best_span(outputs["start_logits"], outputs["end_logits"], context,
                           start_candidates=outputs.get("start_candidates"),
                           answerable_logits=outputs.get("answerable_logits"), **kwargs)
    return span, spans.answer_decision(span, version_2).numpy()


@pytest.mark.parametrize("head", ["huggingface", "original", "original_answerable"])
@pytest.mark.parametrize("version_2", [False, True])
def test_best_span_is_postprocess_for_one_window(features, head, version_2):
    examples, features = features
    rng = np.random.default_rng(1)
    n, length = features.input_ids.shape
    outputs = {"start_logits": rng.normal(0, 3, (n, length)).astype(np.float32)}
    if head == "huggingface":
        outputs["end_logits"] = rng.normal(0, 3, (n, length)).astype(np.float32)
    else:
        outputs["start_candidates"] = np.stack([rng.permutation(length)[:5] for _ in range(n)]).astype(np.int32)
        outputs["start_candidates"][::4, 0] = 0  # [CLS] among the candidates now and then
        outputs["end_logits"] = rng.normal(0, 3, (n, 5, length)).astype(np.float32)
    if head == "original_answerable":
        outputs["answerable_logits"] = rng.normal(-2.75, 2, n).astype(np.float32)
    predictions, nbest, null_odds = squad.postprocess(examples, features, outputs, max_answer_length=6,
                                                      n_best_size=4, version_2=version_2)
    span, has_answer = _in_graph(features, outputs, version_2, max_answer_length=6, n_best_size=4)
    found = span.found.numpy()
    for i, example in enumerate(examples):
        best = nbest[example.qas_id]
        assert found[i] == bool(best)
        if best:
            start, end = span.start.numpy()[i], span.end.numpy()[i]
            chars = features.token_char_start[i, start], features.token_char_end[i, end]
            assert chars == (best[0]["char_start"], best[0]["char_end"])
            assert span.score.numpy()[i] == pytest.approx(best[0]["start_logit"] + best[0]["end_logit"], abs=1e-4)
            assert span.null_odds.numpy()[i] == pytest.approx(null_odds[example.qas_id], abs=1e-4)
        assert predictions[example.qas_id] == (example.context[slice(*chars)] if has_answer[i] else "")
    assert 0 < has_answer.sum() < len(examples) if version_2 else has_answer.sum() == found.sum()


def test_no_context_means_no_span():
    span = spans.best_span(tf.zeros([2, 4]), tf.zeros([2, 4]), tf.zeros([2, 4], tf.bool))
    assert span.found.numpy().tolist() == [False, False] and span.start.numpy().tolist() == [-1, -1]
    assert np.all(span.null_odds.numpy() == spans.NO_SPAN_ODDS)  # finite: JSON has no infinity
    empty = spans.best_span(tf.zeros([0, 4]), tf.zeros([0, 3, 4]), tf.zeros([0, 4], tf.bool),
                            start_candidates=tf.zeros([0, 3], tf.int32))
    assert empty.start.shape == empty.score.shape == (0,)
