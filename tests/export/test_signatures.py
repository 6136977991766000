"""The serving graphs pad a request only to its longest text: the same outputs as padding to max_seq_length,
for texts of every length from one token to the maximum."""

import numpy as np
import pytest
import tensorflow as tf

from electra_tf import (
    ElectraConfig,
    ElectraDiscriminator,
    ElectraForMultipleChoice,
    ElectraForQuestionAnswering,
    ElectraForSequenceClassification,
    ElectraForTokenClassification,
    ElectraTokenizer,
)
from electra_tf.text import featurize
from electra_tf.export.signatures import make_serving_task

WORDS = ["red", "blue", "green", "cat", "dog", "house", "tree", "car", "book", "river"]
LENGTH = 24


@pytest.fixture(scope="module")
def tokenizer():
    return ElectraTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS])


@pytest.fixture(scope="module")
def config(tokenizer):
    return ElectraConfig(vocab_size=tokenizer.vocabulary_size(), embedding_size=8, hidden_size=16, num_layers=1,
                         num_heads=2, intermediate_size=32, max_position_embeddings=64)


def texts():
    """Every length from 1 word to more than fit (each word is one token), in mixed order."""
    rng = np.random.default_rng(0)
    return tf.constant([" ".join(rng.choice(WORDS, size=n)) for n in rng.permutation(np.arange(1, LENGTH + 4))])


def test_classification_and_the_discriminator_give_fixed_paddings_outputs(config, tokenizer):
    batch = texts()
    fixed = featurize.encode(tokenizer, LENGTH, batch)
    classifier = ElectraForSequenceClassification(config, num_labels=3)
    served = make_serving_task(classifier, tokenizer, LENGTH).serve_text(text=batch)
    np.testing.assert_allclose(served["logits"], classifier(fixed)["logits"], atol=1e-5)
    one = make_serving_task(classifier, tokenizer, LENGTH).serve_text(text=batch[:1])  # a request of one short text
    np.testing.assert_allclose(one["logits"], classifier(featurize.encode(tokenizer, LENGTH, batch[:1]))["logits"],
                               atol=1e-5)
    discriminator = ElectraDiscriminator(config)
    served = make_serving_task(discriminator, tokenizer, LENGTH).serve_text(text=batch)
    real = fixed["attention_mask"].numpy() > 0
    expected = discriminator(fixed)["logits"].numpy()
    assert served["logits"].shape == served["tokens"].shape == (len(batch), LENGTH)
    np.testing.assert_allclose(served["logits"], np.where(real, expected, 0.0), atol=1e-5)
    np.testing.assert_allclose(served["replaced_probability"], tf.sigmoid(expected) * real, atol=1e-5)


@pytest.mark.parametrize("pad_to_max_length", [False, True])
def test_a_request_runs_the_model_at_its_longest_text_or_at_max_seq_length(config, tokenizer, pad_to_max_length):
    classifier = ElectraForSequenceClassification(config, num_labels=3)
    task = make_serving_task(classifier, tokenizer, LENGTH, pad_to_max_length=pad_to_max_length)
    shapes, run = [], task.run_ids
    task.run_ids = lambda **inputs: shapes.append(tuple(inputs["input_ids"].shape)) or run(**inputs)
    short = tf.constant(["red cat"])  # 4 tokens with [CLS] and [SEP]: padded to featurize.SHORT_LENGTH (8)
    logits = task.serve_text(text=short)["logits"]
    assert shapes == [(1, LENGTH if pad_to_max_length else featurize.SHORT_LENGTH)]
    np.testing.assert_allclose(logits, classifier(featurize.encode(tokenizer, LENGTH, short))["logits"], atol=1e-5)


def test_tagging_and_question_answering_give_fixed_paddings_answers(config, tokenizer):
    batch = texts()
    tagger = ElectraForTokenClassification(config, num_labels=3)
    served = make_serving_task(tagger, tokenizer, LENGTH).serve_text(text=batch)
    inputs, _, first_piece = featurize.tagging_features(tokenizer, LENGTH, batch)
    probabilities = tf.nn.softmax(tagger(inputs)["logits"]).numpy()
    positions = first_piece.to_tensor(-1).numpy()
    expected = np.where(positions >= 0, np.take_along_axis(probabilities.argmax(-1), np.maximum(positions, 0), 1), -1)
    np.testing.assert_array_equal(served["label_id"], expected)
    for head in ("original", "huggingface"):
        model = ElectraForQuestionAnswering(config, head=head, beam_size=4, hidden_size=8)
        task = make_serving_task(model, tokenizer, LENGTH, max_query_length=4)
        served = task.serve_text(question=batch[:8], context=batch[-8:])
        inputs, _, _ = featurize.squad_window(tokenizer, LENGTH, 4, batch[:8], batch[-8:])
        full = task.serve_ids(**inputs)  # the answer over the window padded to LENGTH
        for key in ("start_position", "end_position", "has_answer"):
            np.testing.assert_array_equal(task.run_ids(**featurize.squad_window(
                tokenizer, LENGTH, 4, batch[:8], batch[-8:], pad_to_max_length=False)[0])[key], full[key])
        assert served["answer"].shape == (8,)


def test_the_compiled_model_call_pads_to_buckets_and_gives_the_uncompiled_outputs(config, tokenizer):
    """`compile=True` (multiple choice: `[batch, choices, sequence]` inputs; the export test covers the rest)."""
    model = ElectraForMultipleChoice(config, num_choices=2)
    compiled, default = (make_serving_task(model, tokenizer, LENGTH, compile=flag) for flag in (True, False))
    seen = []
    function = compiled.compiled.function
    compiled.compiled.function = lambda inputs: seen.append(tuple(inputs["input_ids"].shape)) or function(inputs)
    batch = texts()[:3]
    choices = tf.stack([batch[::-1], batch], axis=1)
    got = compiled.serve_text(context=batch, choices=choices)
    np.testing.assert_allclose(got["logits"], default.serve_text(context=batch, choices=choices)["logits"], atol=1e-5)
    assert got["logits"].shape == (3, 2) and seen == [(4, 2, 32)]  # 3 → 4 rows, 24 tokens (16·2 rounded) → 32
    assert function._jit_compile and default.compiled is None
