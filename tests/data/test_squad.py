"""SQuAD reading, windowing, tf.data and postprocessing (electra_tf.data.tasks.squad)."""

import json
import os
import pathlib
import re

import numpy as np
import pytest
import tensorflow as tf

from electra_tf.data.tasks.squad import (
    SquadExample,
    postprocess,
    read_squad,
    squad_dataset,
    squad_features,
    write_predictions,
)
from electra_tf.finetuning.metrics import squad_scores
from electra_tf.text.tokenizer import WordPieceTokenizer

VOCAB = pathlib.Path(__file__).parents[1] / "fixtures" / "tokenizer" / "vocab.txt"
CONTEXT = ("In 1901, Marie Curie's laboratory in Paris (France) measured radium. The Nobel committee, "
           "meeting in Stockholm, praised her work; Pierre O'Neil-Smith, Jr. disagreed loudly. Years later "
           "(1895-1943) the archive moved to Lyon, where the Rhône meets the Saône, and a new director, "
           "Dr. Ada Lovelace-King, catalogued 12,000 letters before the war ended the project.")
ANSWERS = ["1901", "Marie Curie's", "Paris (France)", "Stockholm", "Pierre O'Neil-Smith, Jr.", "1895",
           "the Rhône meets the Saône", "Dr. Ada Lovelace-King", "12,000 letters", "the project."]


@pytest.fixture(scope="module")
def tokenizer():
    return WordPieceTokenizer(str(VOCAB))


def _example(qas_id, answer, context=CONTEXT, question="Who or what is it?"):
    return SquadExample(qas_id, question, context, ((answer, context.index(answer)),), False)


def _windowed_examples():
    examples = [_example(f"q{i}", answer) for i, answer in enumerate(ANSWERS)]
    return examples + [SquadExample("none", "Who painted it?", CONTEXT, (), True)]


def _context_tokens(features, row, scored_only=False):
    """(char_start, char_end, id) of the window's context tokens (only those scored there with `scored_only`)."""
    keep = features.token_is_max_context[row] if scored_only else features.token_char_start[row] >= 0
    return list(zip(features.token_char_start[row][keep], features.token_char_end[row][keep],
                    features.input_ids[row][keep]))


def _answer_in_window(features, row, char_start, char_end):
    """Whether the window's context tokens cover [char_start, char_end), and whether they touch it."""
    starts, ends = features.token_char_start[row], features.token_char_end[row]
    context = starts >= 0
    covers = starts[context].min() <= char_start and ends[context].max() >= char_end
    touches = np.any(context & (starts < char_end) & (ends > char_start))
    return covers, touches


def test_windows_map_answers_to_their_characters(tokenizer):
    examples = _windowed_examples()
    features = squad_features(examples, tokenizer, max_seq_length=40, doc_stride=10, max_query_length=16,
                              training=True)
    assert features.input_ids.shape == (len(features), 40) and len(features) > 3 * len(examples)
    document = _context_tokens(squad_features(examples[:1], tokenizer, max_seq_length=512), 0)
    crossing_edges = 0
    for index, example in enumerate(examples):
        rows = np.flatnonzero(features.example_index == index)
        assert len(rows) > 3
        # Every context token is scored in exactly one window.
        assert sum((_context_tokens(features, row, scored_only=True) for row in rows), []) == document
        if example.is_impossible:
            assert np.all(features.start_positions[rows] == 0) and np.all(features.end_positions[rows] == 0)
            assert np.all(features.is_impossible[rows] == 1)
            continue
        text, char_start = example.answers[0]
        found_in = 0
        for row in rows:
            covers, touches = _answer_in_window(features, row, char_start, char_start + len(text))
            start, end = features.start_positions[row], features.end_positions[row]
            if covers:
                found_in += 1
                assert features.is_impossible[row] == 0
                assert CONTEXT[features.token_char_start[row, start]:features.token_char_end[row, end]] == text
            else:
                crossing_edges += touches
                assert (start, end, features.is_impossible[row]) == (0, 0, 1)
        assert found_in >= 1, text
    assert crossing_edges > 0  # some answers are cut by a window edge
    assert features.truncated_questions == 0


def test_windows_follow_the_original_layout(tokenizer):
    question = "Where did the archive move to after many long years of quiet and careful work?"
    example = _example("q", "Lyon", question=question)
    features = squad_features([example], tokenizer, max_seq_length=48, doc_stride=12, max_query_length=8)
    assert features.truncated_questions == 1 and features.start_positions is None
    query = tokenizer.tokenize(question).numpy()[:8]
    for row in range(len(features)):
        ids, types = features.input_ids[row], features.token_type_ids[row]
        length = features.attention_mask[row].sum()
        assert np.array_equal(ids[:10], [tokenizer.cls_token_id, *query, tokenizer.sep_token_id])
        assert ids[length - 1] == tokenizer.sep_token_id and np.all(ids[length:] == tokenizer.pad_token_id)
        assert np.all(types[:10] == 0) and np.all(types[10:length] == 1) and np.all(types[length:] == 0)
        char_start = features.token_char_start[row]
        assert np.all(char_start[:10] == -1) and np.all(char_start[10:length - 1] >= 0)
        assert np.all(char_start[length - 1:] == -1)
    # Windows of 48 - 8 - 3 tokens, doc_stride apart, the last one reaching the end of the context.
    document = _context_tokens(squad_features([example], tokenizer, max_seq_length=512), 0)
    windows = [_context_tokens(features, row) for row in range(len(features))]
    assert len(windows) > 2
    assert all(window == document[12 * row:12 * row + 37] for row, window in enumerate(windows))
    assert windows[-1][-1] == document[-1] != windows[-2][-1]  # the last window, and only it, reaches the end
    # A token is scored in the window where min(left, right context) is largest (+ 0.01 * window length).
    starts, lengths = 12 * np.arange(len(windows)), np.array([len(window) for window in windows])
    for token in range(len(document)):
        inside = (starts <= token) & (token < starts + lengths)
        scores = np.where(inside, np.minimum(token - starts, starts + lengths - 1 - token) + 0.01 * lengths, -1)
        row = int(np.argmax(scores))
        assert features.token_is_max_context[row, 10 + token - starts[row]]
    assert features.token_is_max_context.sum() == len(document)


def test_non_ascii_offsets_map_back_exactly(tokenizer):
    context = "Café Müller (naïve) met İstanbul's 日本 friends 😀! at “Zürich” 北京 X😀Y, in 1999."
    answers = ["Café Müller", "naïve", "İstanbul's", "日本", "😀", "“Zürich”", "北京", "X😀Y", "1999."]
    examples = [_example(f"q{i}", answer, context) for i, answer in enumerate(answers)]
    features = squad_features(examples, tokenizer, max_seq_length=96, training=True)
    assert len(features) == len(examples)
    for row, (text, _) in enumerate(example.answers[0] for example in examples):
        start, end = features.start_positions[row], features.end_positions[row]
        assert context[features.token_char_start[row, start]:features.token_char_end[row, end]] == text
    # The token spans tile the non-space characters: in order, each character in exactly one span
    # (pieces of a word that cannot be aligned share the whole word).
    spans = sorted(set(zip(features.token_char_start[0], features.token_char_end[0])) - {(-1, -1)})
    covered = "".join(context[start:end] for start, end in spans)
    assert covered == "".join(context.split())
    assert {"afé", "ü", "日", "本", "😀", "X😀Y", "北京"} <= {context[start:end] for start, end in spans}
    # Round trip through postprocess: logits on the answer tokens give back the original characters.
    outputs = _logits(features, *[(row, start, end, 10.0) for row, (start, end)
                                  in enumerate(zip(features.start_positions, features.end_positions))])
    predictions, _, _ = postprocess(examples, features, outputs)
    assert [predictions[example.qas_id] for example in examples] == answers


def _tokens_of(features, row, text, context=CONTEXT):
    """First and last token of the window covering exactly the characters of `text`."""
    start = context.index(text)
    starts, ends = features.token_char_start[row], features.token_char_end[row]
    inside = np.flatnonzero((starts >= start) & (ends <= start + len(text)) & (starts >= 0))
    assert len(inside) and starts[inside[0]] == start and ends[inside[-1]] == start + len(text)
    return inside[0], inside[-1]


def _scoring_row(features, text):
    """The window where the first token of `text` is scored (has its most context)."""
    start = CONTEXT.index(text)
    (row,) = np.flatnonzero(np.any(features.token_is_max_context & (features.token_char_start == start), axis=1))
    return row


def _logits(features, *spans):
    """Hugging Face outputs: zeros, plus `score` at (row, start) and (row, end) for each span."""
    start_logits, end_logits = np.zeros(features.input_ids.shape), np.zeros(features.input_ids.shape)
    for row, start, end, score in spans:
        start_logits[row, start] = end_logits[row, end] = score
    return {"start_logits": start_logits, "end_logits": end_logits}


def test_postprocess_round_trip_gives_the_original_substring(tokenizer):
    examples = [_example(f"q{i}", answer) for i, answer in enumerate(ANSWERS)]
    # Windows wide enough that every answer lies inside the window where its first token is scored.
    features = squad_features(examples, tokenizer, max_seq_length=80, doc_stride=16, training=True)
    assert len(features) > 3 * len(examples)
    # Logits on the answer's first and last token wherever they appear, as a trained model would give.
    outputs = _logits(features)
    for row, index in enumerate(features.example_index):
        text, start = examples[index].answers[0]
        outputs["start_logits"][row, features.token_char_start[row] == start] = 5.0
        outputs["end_logits"][row, features.token_char_end[row] == start + len(text)] = 5.0
    predictions, nbest, null_odds = postprocess(examples, features, outputs)
    assert predictions == {example.qas_id: example.answers[0][0] for example in examples}
    assert squad_scores(predictions, examples)["exact_match"] == 100.0
    for entries in nbest.values():
        texts = [entry["text"] for entry in entries]
        probabilities = [entry["probability"] for entry in entries]
        assert 1 < len(entries) <= 20 and len(set(texts)) == len(texts)
        assert probabilities == sorted(probabilities, reverse=True) and np.isclose(sum(probabilities), 1.0)
        assert all(CONTEXT[entry["char_start"]:entry["char_end"]] == entry["text"] for entry in entries)
    assert set(null_odds) == set(predictions)


def test_postprocess_keeps_spans_within_max_answer_length(tokenizer):
    answer = "Pierre O'Neil-Smith, Jr."
    example = _example("q", answer)
    features = squad_features([example], tokenizer, max_seq_length=128)
    start, end = _tokens_of(features, 0, answer)
    outputs = _logits(features, (0, start, end, 5.0))
    assert postprocess([example], features, outputs, max_answer_length=end - start + 1)[0]["q"] == answer
    shorter = postprocess([example], features, outputs, max_answer_length=end - start)
    assert shorter[0]["q"] not in ("", answer)
    starts, ends = features.token_char_start[0], features.token_char_end[0]
    assert all(np.sum((starts >= entry["char_start"]) & (ends <= entry["char_end"]) & (starts >= 0)) <= end - start
               for entry in shorter[1]["q"])


def test_postprocess_scores_a_token_only_in_its_max_context_window(tokenizer):
    example = _example("q", "Stockholm")
    features = squad_features([example], tokenizer, max_seq_length=40, doc_stride=10, max_query_length=16)
    best_row = _scoring_row(features, "Stockholm")
    other_row = next(row for row in range(len(features))
                     if row != best_row and CONTEXT.index("Stockholm") in features.token_char_start[row])
    start, end = _tokens_of(features, other_row, "Stockholm")
    # A weaker one-token span elsewhere in the window where "Stockholm" is scored.
    stockholm_chars = range(CONTEXT.index("Stockholm"), CONTEXT.index("Stockholm") + len("Stockholm"))
    weaker = next(token for token in np.flatnonzero(features.token_is_max_context[best_row])
                  if features.token_char_start[best_row, token] not in stockholm_chars)
    weaker_text = CONTEXT[features.token_char_start[best_row, weaker]:features.token_char_end[best_row, weaker]]
    # The stronger span (20 + 20) starts where "Stockholm" has less context: it is not a candidate there;
    # the weaker one (15 + 15) beats what is left of it (a scored start there + 20).
    outputs = _logits(features, (other_row, start, end, 20.0), (best_row, weaker, weaker, 15.0))
    assert postprocess([example], features, outputs)[0]["q"] == weaker_text
    outputs = _logits(features, (best_row, *_tokens_of(features, best_row, "Stockholm"), 20.0),
                      (best_row, weaker, weaker, 15.0))
    assert postprocess([example], features, outputs)[0]["q"] == "Stockholm"


def _joint_outputs(features, row, candidates, end_peaks, start_logit=5.0):
    """Original joint-head outputs: start logits at the candidates, end logits per candidate row."""
    n, length = features.input_ids.shape
    start_logits = np.zeros((n, length))
    start_candidates = np.zeros((n, len(candidates)), np.int32)
    end_logits = np.zeros((n, len(candidates), length))
    start_logits[row, candidates] = start_logit
    start_candidates[row] = candidates
    for k, peaks in enumerate(end_peaks):
        for position, logit in peaks:
            end_logits[row, k, position] = logit
    return {"start_logits": start_logits, "end_logits": end_logits, "start_candidates": start_candidates}


def test_postprocess_joint_head_scores_with_log_softmax(tokenizer):
    example = _example("q", "Stockholm")
    features = squad_features([example], tokenizer, max_seq_length=384)
    assert len(features) == 1
    paris, france = _tokens_of(features, 0, "Paris"), _tokens_of(features, 0, "(France)")
    stockholm = _tokens_of(features, 0, "Stockholm")
    # Two equal start candidates (log-prob about log 0.5 each). Row 0 splits its end mass over two ends
    # (raw 10 + 14 = 24, log-probs about -0.7 - 0.7); row 1 is sure of "Stockholm" (raw 10 + 12 = 22,
    # log-probs about -0.7 + 0): log-probabilities, not raw logits, decide.
    outputs = _joint_outputs(features, 0, [paris[0], stockholm[0]],
                             [[(paris[1], 14.0), (france[1], 14.0)], [(stockholm[1], 12.0)]], start_logit=10.0)
    predictions, nbest, _ = postprocess([example], features, outputs)
    assert predictions == {"q": "Stockholm"}
    assert nbest["q"][0]["start_logit"] == pytest.approx(np.log(0.5), abs=0.01)
    assert nbest["q"][0]["end_logit"] == pytest.approx(0.0, abs=0.01)
    assert {entry["text"] for entry in nbest["q"][1:3]} == {"Paris", "Paris (France)"}
    # Without an answerable classifier the null is [CLS] as a start candidate followed by [CLS] as its end.
    outputs = _joint_outputs(features, 0, [0, stockholm[0]], [[(0, 12.0)], [(stockholm[1], 7.0)]])
    assert postprocess([example], features, outputs, version_2=True)[0] == {"q": ""}
    assert postprocess([example], features, outputs)[0] == {"q": "Stockholm"}
    outputs = _joint_outputs(features, 0, [0, stockholm[0]], [[(0, 0.5)], [(stockholm[1], 7.0)]])
    assert postprocess([example], features, outputs, version_2=True)[0] == {"q": "Stockholm"}


def test_postprocess_v2_null_decision_with_span_scores(tokenizer):
    example = _example("q", "Stockholm")
    features = squad_features([example], tokenizer, max_seq_length=40, doc_stride=10, max_query_length=16)
    row = _scoring_row(features, "Stockholm")
    # Best span 3 + 3; null scores 2 + 2 in this window and 2.5 + 2.5 elsewhere: the smallest counts, odds -2.
    outputs = _logits(features, (row, *_tokens_of(features, row, "Stockholm"), 3.0))
    outputs["start_logits"][:, 0] = outputs["end_logits"][:, 0] = 2.5
    outputs["start_logits"][row, 0] = outputs["end_logits"][row, 0] = 2.0
    predictions, _, null_odds = postprocess([example], features, outputs, version_2=True)
    assert predictions == {"q": "Stockholm"} and null_odds["q"] == pytest.approx(-2.0)
    assert postprocess([example], features, outputs, version_2=True, null_threshold=-2.5)[0] == {"q": ""}
    assert postprocess([example], features, outputs, version_2=True, null_threshold=-1.5)[0] == {"q": "Stockholm"}
    outputs["start_logits"][:, 0] = outputs["end_logits"][:, 0] = 3.5
    assert postprocess([example], features, outputs, version_2=True)[0] == {"q": ""}
    assert postprocess([example], features, outputs)[0] == {"q": "Stockholm"}  # v1.1 always answers


@pytest.mark.parametrize("answerable_logits, v2_prediction", [((-3.0, -2.0), "Stockholm"), ((-2.5, -1.0), "")])
def test_postprocess_v2_null_decision_with_answerable_classifier(tokenizer, answerable_logits, v2_prediction):
    example = _example("q", "Stockholm")
    features = squad_features([example], tokenizer, max_seq_length=40, doc_stride=10, max_query_length=16)
    row = _scoring_row(features, "Stockholm")
    start, end = _tokens_of(features, row, "Stockholm")
    outputs = _joint_outputs(features, row, [start], [[(end, 7.0)]])
    # The smallest answerable logit over the windows against ELECTRA's -2.75 (higher = impossible).
    logits = np.full(len(features), 5.0)
    logits[[row, (row + 1) % len(features)]] = answerable_logits
    outputs["answerable_logits"] = logits
    predictions, _, null_odds = postprocess([example], features, outputs, version_2=True)
    assert predictions == {"q": v2_prediction} and null_odds["q"] == min(answerable_logits)
    assert postprocess([example], features, outputs)[0] == {"q": "Stockholm"}


def test_postprocess_rejects_outputs_of_other_features(tokenizer):
    example = _example("q", "Stockholm")
    features = squad_features([example], tokenizer, max_seq_length=384)
    for start_shape, end_shape in [((2, 384), (2, 384)), ((1, 384), (1, 383)), ((1, 512), (1, 3, 512))]:
        with pytest.raises(ValueError, match=r"do not fit features \(1, 384\)"):
            postprocess([example], features,
                        {"start_logits": np.zeros(start_shape), "end_logits": np.zeros(end_shape)})
    with pytest.raises(ValueError, match="start_candidates"):
        postprocess([example], features, {"start_logits": np.zeros((1, 384)), "end_logits": np.zeros((1, 2, 384))})


def _squad_file(tmp_path, content, name="squad.json"):
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return str(path)


def _squad(*qas, context="Ann met Bob in Paris."):
    return {"version": "v2.0", "data": [{"title": "t", "paragraphs": [{"context": context, "qas": list(qas)}]}]}


def _qa(qas_id, answers=(), is_impossible=None):
    qa = {"id": qas_id, "question": "Who?", "answers": [{"text": text, "answer_start": start}
                                                        for text, start in answers]}
    if is_impossible is not None:
        qa["is_impossible"] = is_impossible
    return qa


def test_read_squad_v1_and_v2(tmp_path):
    unanswerable = _qa("q3", is_impossible=True) | {"plausible_answers": [{"text": "Bob", "answer_start": 8}]}
    path = _squad_file(tmp_path, _squad(_qa("q1", [("Ann", 0), ("Ann met Bob", 0)]),
                                        _qa("q2", [("Paris", 15)], is_impossible=False), unanswerable))
    examples = read_squad(path)
    assert [example.answers for example in examples] == [(("Ann", 0), ("Ann met Bob", 0)), (("Paris", 15),), ()]
    assert [example.is_impossible for example in examples] == [False, False, True]
    assert examples[0] == SquadExample("q1", "Who?", "Ann met Bob in Paris.", (("Ann", 0), ("Ann met Bob", 0)))


def test_read_squad_misplaced_answer(tmp_path):
    path = _squad_file(tmp_path, _squad(_qa("q1", [("Ann", 0)]), _qa("q2", [("Ann", 0), ("Bob", 3)]),
                                        _qa("q3", [("Paris", 15)])))
    with pytest.raises(ValueError, match=r"squad\.json: question 'q2': the answer 'Bob' is not at character 3"):
        read_squad(path)
    examples = read_squad(path, on_bad_answer="skip")
    assert [example.qas_id for example in examples] == ["q1", "q3"] and examples.skipped_ids == ("q2",)


@pytest.mark.parametrize("squad, message", [
    ({"version": "1.1"}, "the file has no 'data'"),
    ({"data": [{"title": "t"}]}, r"data\[0\] has no 'paragraphs'"),
    ({"data": [{"paragraphs": [{"qas": []}]}]}, r"data\[0\]\.paragraphs\[0\] has no 'context'"),
    (_squad({"question": "Who?", "answers": []}), r"paragraphs\[0\]\.qas\[0\] has no 'id'"),
    (_squad({"id": "q7", "answers": []}), "question 'q7' has no 'question'"),
    (_squad({"id": "q7", "question": "Who?"}), "question 'q7' has no 'answers'"),
    (_squad(_qa("q7") | {"answers": [{"text": "Ann"}]}), "an answer of question 'q7' has no 'answer_start'"),
    (_squad(_qa("q7"), _qa("q7")), "question 'q7' appears more than once"),
    ([1, 2], "the file has no 'data'"),
])
def test_read_squad_missing_keys(tmp_path, squad, message):
    with pytest.raises(ValueError, match=message):
        read_squad(_squad_file(tmp_path, squad))


@pytest.mark.parametrize("content, message", [
    ("", "the file is empty"), (" \n", "the file is empty"), ('{"data": [', "not valid JSON")])
def test_read_squad_unreadable_file(tmp_path, content, message):
    path = _squad_file(tmp_path, content)
    with pytest.raises(ValueError, match=re.escape(f"{path}: {message}")):
        read_squad(path)


def test_squad_dataset_shapes_and_dtypes(tokenizer):
    examples = _windowed_examples()
    features = squad_features(examples, tokenizer, max_seq_length=40, doc_stride=10, training=True)
    training = squad_dataset(features, batch_size=4, training=True, shuffle=True, seed=1)
    x_spec, y_spec = training.element_spec
    assert {name: (spec.shape.as_list(), spec.dtype) for name, spec in x_spec.items()} == {
        "input_ids": ([4, 40], tf.int32), "attention_mask": ([4, 40], tf.int32),
        "token_type_ids": ([4, 40], tf.int32), "start_positions": ([4], tf.int32)}
    assert {name: (spec.shape.as_list(), spec.dtype) for name, spec in y_spec.items()} == {
        "start_positions": ([4], tf.int32), "end_positions": ([4], tf.int32), "is_impossible": ([4], tf.int32)}
    batches = list(training.as_numpy_iterator())
    assert len(batches) == len(features) // 4
    assert all(np.array_equal(x["start_positions"], y["start_positions"]) for x, y in batches)
    first = np.concatenate([x["input_ids"] for x, _ in batches])
    assert not np.array_equal(first, features.input_ids[:len(first)])  # shuffled

    evaluation = squad_dataset(features, batch_size=4, training=False)
    x_spec, _ = evaluation.element_spec
    assert sorted(x_spec) == ["attention_mask", "input_ids", "token_type_ids"]
    prediction = squad_dataset(squad_features(examples, tokenizer, max_seq_length=40, doc_stride=10),
                               batch_size=4, training=False)
    assert {name: (spec.shape.as_list(), spec.dtype) for name, spec in prediction.element_spec.items()} == {
        name: ([None, 40], tf.int32) for name in ("input_ids", "attention_mask", "token_type_ids")}
    inputs = list(prediction.as_numpy_iterator())
    assert np.array_equal(np.concatenate([x["input_ids"] for x in inputs]), features.input_ids)
    assert np.array_equal(np.concatenate([x["attention_mask"] for x in inputs]), features.input_ids != 0)
    with pytest.raises(ValueError, match="training=True"):
        squad_dataset(squad_features(examples[:1], tokenizer, max_seq_length=40), batch_size=4, training=True)


def test_write_predictions_replaces_the_file(tmp_path):
    path = str(tmp_path / "predictions.json")
    write_predictions({"q1": "old"}, path)
    write_predictions({"q1": "Zürich 日本", "q2": ""}, path)
    assert json.loads(pathlib.Path(path).read_text(encoding="utf-8")) == {"q1": "Zürich 日本", "q2": ""}
    assert os.listdir(tmp_path) == ["predictions.json"]
