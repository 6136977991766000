"""`electra_tf.pipeline`: raw text to labels, entities and answers from a model folder, as transformers' pipelines."""

import keras
import numpy as np
import pytest

import electra_tf
from electra_tf import (
    ElectraConfig,
    ElectraForQuestionAnswering,
    ElectraForSequenceClassification,
    ElectraForTokenClassification,
    ElectraTokenizer,
)

WORDS = ["alice", "bob", "met", "in", "paris", "the", "cat", "sat"]


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
    result = classifier({"text": "alice met bob", "text_pair": "in paris"})
    assert len(result) == 1 and result[0]["label"] in ("no", "yes")
    with pytest.raises(ValueError, match="reads text and text_pair"):
        classifier("alice met bob")


def _tagger(config, tokenizer, folder, favoured):
    """A tagger whose every word gets the tag `favoured` (its classifier's bias says so)."""
    labels = ["O", "B-PER", "I-PER", "B-LOC"]
    model = ElectraForTokenClassification(config, num_labels=len(labels))
    kernel, bias = model.get_layer("classifier").get_weights()
    bias[labels.index(favoured)] = 100.0
    model.get_layer("classifier").set_weights([np.zeros_like(kernel), bias])
    model.save_pretrained(folder, tokenizer=tokenizer, label_names=labels, max_seq_length=16)
    return electra_tf.pipeline("token-classification", str(folder))


def test_token_classification_groups_words_into_entities_with_character_offsets(tiny, tmp_path):
    tokenizer, config = tiny
    text = "Alice  met Bob"
    begins = _tagger(config, tokenizer, tmp_path / "b", "B-PER")
    assert begins(text) == [
        {"entity_group": "PER", "score": pytest.approx(1.0), "word": "Alice", "start": 0, "end": 5},
        {"entity_group": "PER", "score": pytest.approx(1.0), "word": "met", "start": 7, "end": 10},
        {"entity_group": "PER", "score": pytest.approx(1.0), "word": "Bob", "start": 11, "end": 14}]
    goes_on = _tagger(config, tokenizer, tmp_path / "i", "I-PER")
    assert goes_on([text, "the cat"]) == [
        [{"entity_group": "PER", "score": pytest.approx(1.0), "word": "Alice  met Bob", "start": 0, "end": 14}],
        [{"entity_group": "PER", "score": pytest.approx(1.0), "word": "the cat", "start": 0, "end": 7}]]
    assert _tagger(config, tokenizer, tmp_path / "o", "O")(text) == []
    # B- starts an entity, I- of the same type goes on with it, another type or O ends it (made-up outputs).
    outputs = {"num_words": np.array([5]), "label_id": np.array([[1, 2, 0, 3, 2]]),
               "probability": np.array([[0.9, 0.7, 0.8, 0.6, 0.5]]), "word_start": np.array([[0, 6, 10, 13, 19]]),
               "word_end": np.array([[5, 9, 12, 18, 24]])}
    assert begins._entities("Alice Bob in Paris today", outputs, 0) == [
        {"entity_group": "PER", "score": pytest.approx(0.8), "word": "Alice Bob", "start": 0, "end": 9},
        {"entity_group": "LOC", "score": pytest.approx(0.6), "word": "Paris", "start": 13, "end": 18},
        {"entity_group": "PER", "score": pytest.approx(0.5), "word": "today", "start": 19, "end": 24}]
    words = electra_tf.pipeline("token-classification", str(tmp_path / "b"), aggregation_strategy="none")(text)
    assert [(w["entity"], w["index"], w["word"], w["start"], w["end"]) for w in words] == [
        ("B-PER", 0, "Alice", 0, 5), ("B-PER", 1, "met", 7, 10), ("B-PER", 2, "Bob", 11, 14)]


def test_question_answering_gives_an_answer_from_the_context(tiny, tmp_path):
    tokenizer, config = tiny
    ElectraForQuestionAnswering(config, head="huggingface").save_pretrained(tmp_path, tokenizer=tokenizer,
                                                                            max_seq_length=32)
    answerer = electra_tf.pipeline("question-answering", str(tmp_path))
    context = "Alice met Bob in Paris"
    result = answerer(question="who met bob?", context=context)
    assert sorted(result) == ["answer", "end", "score", "start"]
    assert result["answer"] == context[result["start"]:result["end"]] and result["answer"]
    both = answerer([{"question": "who?", "context": context}, {"question": "where?", "context": "the cat sat"}])
    assert len(both) == 2 and both[0] == answerer({"question": "who?", "context": context})


def test_a_pipeline_of_another_task_or_an_unknown_one_is_refused(tiny, tmp_path):
    tokenizer, config = tiny
    ElectraForSequenceClassification(config, num_labels=2).save_pretrained(tmp_path, tokenizer=tokenizer)
    with pytest.raises(ValueError, match="a question-answering pipeline needs a model of that task"):
        electra_tf.pipeline("question-answering", str(tmp_path))
    with pytest.raises(ValueError, match="task must be one of"):
        electra_tf.pipeline("summarization", str(tmp_path))
    # Without label names, labels are named as transformers names them.
    assert electra_tf.pipeline("text-classification", str(tmp_path))("alice")[0]["label"] in ("LABEL_0", "LABEL_1")
