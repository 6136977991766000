"""`electra_tf.pipeline`: raw text to masks filled, features, labels, entities and answers from a model folder, as
transformers 4.x's pipelines (their records, replayed from `tests/fixtures/pipelines/records.json`)."""

import json
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

import electra_tf
from electra_tf import (
    ElectraConfig,
    ElectraForQuestionAnswering,
    ElectraForSequenceClassification,
    ElectraForTokenClassification,
    ElectraTokenizer,
)

WORDS = ["alice", "bob", "met", "in", "paris", "the", "cat", "sat"]
FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "pipelines")
with open(os.path.join(FIXTURES, "records.json"), encoding="utf-8") as _file:
    RECORDS = json.load(_file)["records"]


def assert_same(ours, theirs, where="output"):
    """Records equal, numbers within 1e-4 (a tensor compared as its nested lists)."""
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and sorted(ours) == sorted(theirs), f"{where}: {ours} != {theirs}"
        for key in theirs:
            assert_same(ours[key], theirs[key], f"{where}[{key!r}]")
    elif isinstance(theirs, list):
        ours = ours.numpy().tolist() if isinstance(ours, tf.Tensor) else ours
        assert isinstance(ours, list) and len(ours) == len(theirs), f"{where}: {ours} != {theirs}"
        for index, (mine, other) in enumerate(zip(ours, theirs)):
            assert_same(mine, other, f"{where}[{index}]")
    elif isinstance(theirs, float):
        assert ours == pytest.approx(theirs, abs=1e-4), where
    else:
        assert ours == theirs, f"{where}: {ours!r} != {theirs!r}"


@pytest.fixture(scope="module")
def fixture_pipelines():
    """`get(model, task)`: the pipeline of a fixture model, made once."""
    made = {}

    def get(model, task):
        if (model, task) not in made:
            made[model, task] = electra_tf.pipeline(task, os.path.join(FIXTURES, model))
        return made[model, task]

    return get


@pytest.mark.parametrize("record", RECORDS, ids=[f"{r['task']}-{i}" for i, r in enumerate(RECORDS)])
def test_a_pipeline_answers_as_transformers_4_does(fixture_pipelines, record):
    """Every recorded call (fill-mask with top_k and targets; feature-extraction; token classification with every
    aggregation strategy and ignore_labels; question answering with top_k, handle_impossible_answer,
    max_answer_len, doc_stride windows and its input forms; text classification with top_k, function_to_apply,
    return_all_scores, pairs and a multi-label model) gives transformers' records."""
    run = fixture_pipelines(record["model"], record["task"])
    inputs = record["inputs"]
    keywords = record["task"] == "question-answering" and isinstance(inputs, dict) and not isinstance(
        inputs["question"], str)
    ours = run(**inputs, **record["options"]) if keywords else run(inputs, **record["options"])
    assert_same(ours, record["output"])


@pytest.fixture(scope="module")
def tiny():
    """`(tokenizer, config)`: a vocabulary of a few words, and a model config for it."""
    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
    return ElectraTokenizer(vocabulary), ElectraConfig(vocab_size=len(vocabulary), embedding_size=8, hidden_size=16,
                                                       num_layers=1, num_heads=2, intermediate_size=32,
                                                       max_position_embeddings=64)


def test_text_classification_gives_labels_and_scores_as_transformers_does(tiny, tmp_path):
    tokenizer, config = tiny
    model = ElectraForSequenceClassification(config, num_labels=3)
    model.save_pretrained(tmp_path, tokenizer=tokenizer, label_names=["negative", "neutral", "positive"],
                          max_seq_length=16)
    classifier = electra_tf.pipeline("text-classification", str(tmp_path))
    texts = ["alice met bob", "the cat sat in paris"]
    logits = model(tokenizer.encode(texts, sequence_length=16))["logits"]
    probabilities = keras.ops.convert_to_numpy(keras.ops.softmax(logits, axis=-1))
    one = classifier("alice met bob")
    assert isinstance(one, list) and len(one) == 1 and sorted(one[0]) == ["label", "score"]
    results = classifier(texts)
    for result, row in zip(results, probabilities):
        assert result["label"] == ["negative", "neutral", "positive"][row.argmax()]
        assert result["score"] == pytest.approx(row.max(), abs=1e-5)
    every = classifier("alice met bob", top_k=None)
    assert [entry["score"] for entry in every] == sorted((entry["score"] for entry in every), reverse=True)
    assert {entry["label"] for entry in every} == {"negative", "neutral", "positive"}
    assert classifier([]) == []
    assert classifier.traces == 1  # requests of 1 and 2 texts ran the one graph
    compiled = electra_tf.pipeline("text-classification", str(tmp_path), compile=True)
    assert [result["score"] for result in compiled(texts)] == pytest.approx(
        [result["score"] for result in results], abs=1e-5)
    assert compiled.serving.compiled is not None and compiled.traces == 1
    # From a folder the weights are graph constants (the pipeline alone holds the model); a live model's are read
    # as variables, so the pipeline follows its training.
    assert classifier.serving.constants is not None and compiled.serving.constants is not None
    model.label_names = ["negative", "neutral", "positive"]
    live = electra_tf.pipeline("text-classification", model, tokenizer=tokenizer, max_seq_length=16)
    assert live.serving.constants is None
    assert [result["score"] for result in live(texts)] == pytest.approx([r["score"] for r in results], abs=1e-5)
    bias = model.weights[-1]  # the output layer's
    bias.assign(bias.numpy() + 50.0 * np.eye(bias.shape[0])[0])  # the first label far ahead
    assert live("alice met bob")[0]["label"] == "negative"


def test_text_pairs_are_given_as_transformers_takes_them(tiny, tmp_path):
    tokenizer, config = tiny
    ElectraForSequenceClassification(config, num_labels=2).save_pretrained(
        tmp_path, tokenizer=tokenizer, label_names=["no", "yes"], text_pair=True)
    classifier = electra_tf.pipeline("text-classification", tmp_path)
    result = classifier({"text": "alice met bob", "text_pair": "in paris"})  # a dict in, a dict out
    assert sorted(result) == ["label", "score"] and result["label"] in ("no", "yes")
    with pytest.raises(ValueError, match="reads text and text_pair"):
        classifier("alice met bob")


def _tagger(config, tokenizer, folder, favoured, labels=("O", "B-PER", "I-PER", "B-LOC")):
    """A tagger whose every token gets the tag `favoured` (its classifier's bias says so)."""
    model = ElectraForTokenClassification(config, num_labels=len(labels))
    kernel, bias = model.get_layer("classifier").get_weights()
    bias[labels.index(favoured)] = 100.0
    model.get_layer("classifier").set_weights([np.zeros_like(kernel), bias])
    model.save_pretrained(folder, tokenizer=tokenizer, label_names=list(labels), max_seq_length=16)
    return electra_tf.pipeline("token-classification", str(folder))


def test_token_classification_gives_a_record_per_token_and_groups_only_when_asked(tiny, tmp_path):
    tokenizer, config = tiny
    text = "Alice  met Bob"
    begins = _tagger(config, tokenizer, tmp_path / "b", "B-PER")
    assert begins(text) == [
        {"entity": "B-PER", "score": pytest.approx(1.0), "index": 1, "word": "alice", "start": 0, "end": 5},
        {"entity": "B-PER", "score": pytest.approx(1.0), "index": 2, "word": "met", "start": 7, "end": 10},
        {"entity": "B-PER", "score": pytest.approx(1.0), "index": 3, "word": "bob", "start": 11, "end": 14}]
    assert [e["word"] for e in begins(text, aggregation_strategy="simple")] == ["alice", "met", "bob"]
    goes_on = _tagger(config, tokenizer, tmp_path / "i", "I-PER")
    assert goes_on([text, "the cat"], aggregation_strategy="first") == [
        [{"entity_group": "PER", "score": pytest.approx(1.0), "word": "alice met bob", "start": 0, "end": 14}],
        [{"entity_group": "PER", "score": pytest.approx(1.0), "word": "the cat", "start": 0, "end": 7}]]
    assert _tagger(config, tokenizer, tmp_path / "o", "O")(text) == []
    assert len(goes_on(text, ignore_labels=["I-PER"])) == 0
    with pytest.raises(ValueError, match="aggregation_strategy must be one of"):
        goes_on(text, aggregation_strategy="longest")


@pytest.mark.parametrize("tags, groups", [
    (["B-PER", "I-PER", "O", "I-LOC", "B-LOC"], [("PER", 0, 2), ("LOC", 3, 4), ("LOC", 4, 5)]),  # IOB2 / IOB1
    (["B-PER", "E-PER", "S-PER", "B-LOC", "I-LOC", "E-LOC"], [("PER", 0, 2), ("PER", 2, 3), ("LOC", 3, 6)]),  # BIOES
    (["U-PER", "B-PER", "L-PER", "L-PER"], [("PER", 0, 1), ("PER", 1, 3), ("PER", 3, 4)]),  # BILOU
    (["NN", "NN", "VB"], [("NN", 0, 2), ("VB", 2, 3)]),  # labels of no scheme group while they repeat
])
def test_entities_group_as_transformers_and_as_the_span_scheme_says(tiny, tmp_path, tags, groups):
    tokenizer, config = tiny
    tagger = _tagger(config, tokenizer, tmp_path, "O")
    entities = [{"entity": tag, "score": 0.5, "word": f"w{i}", "start": i, "end": i + 1} for i, tag in enumerate(tags)]
    grouped = tagger.group_entities(entities)
    assert [(g["entity_group"], g["start"], g["end"]) for g in grouped if g["entity_group"] != "O"] == groups


@pytest.mark.parametrize("head", ["huggingface", "original"])
def test_question_answering_gives_answers_with_their_probabilities(tiny, tmp_path, head):
    tokenizer, config = tiny
    ElectraForQuestionAnswering(config, head=head).save_pretrained(tmp_path, tokenizer=tokenizer, max_seq_length=32)
    answerer = electra_tf.pipeline("question-answering", str(tmp_path))
    context = "Alice met Bob in Paris"
    result = answerer(question="who met bob?", context=context)
    assert sorted(result) == ["answer", "end", "score", "start"] and 0 < result["score"] <= 1
    assert result["answer"] == context[result["start"]:result["end"]] and result["answer"]
    both = answerer([{"question": "who?", "context": context}, {"question": "where?", "context": "the cat sat"}])
    assert len(both) == 2 and both[0] == answerer({"question": "who?", "context": context})
    ranked = answerer(question="who?", context=context, top_k=3, handle_impossible_answer=True)
    scores = [answer["score"] for answer in ranked]
    assert len(ranked) == 3 and scores == sorted(scores, reverse=True) and sum(scores) <= 1 + 1e-6


def test_a_pipeline_of_another_task_or_an_unknown_one_is_refused(tiny, tmp_path):
    tokenizer, config = tiny
    ElectraForSequenceClassification(config, num_labels=2).save_pretrained(tmp_path, tokenizer=tokenizer)
    with pytest.raises(ValueError, match="a question-answering pipeline needs a model of that task"):
        electra_tf.pipeline("question-answering", str(tmp_path))
    with pytest.raises(ValueError, match="task must be one of"):
        electra_tf.pipeline("summarization", str(tmp_path))
    # Without label names, labels are named as transformers names them.
    assert electra_tf.pipeline("text-classification", str(tmp_path))("alice")[0]["label"] in ("LABEL_0", "LABEL_1")
