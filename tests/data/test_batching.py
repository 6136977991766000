"""`batching.batch_examples`: every task's dataset batches the same way (one set of settings)."""

import numpy as np
import pytest

from electra_tf.data.tasks import classification, multiple_choice, squad, tagging
from electra_tf.text.tokenizer import WordPieceTokenizer

VOCAB = "tests/fixtures/tokenizer/vocab.txt"
COUNT = 5  # examples; batches of 2: training drops the fifth, evaluation keeps it


@pytest.fixture(scope="module")
def tokenizer():
    return WordPieceTokenizer(VOCAB)


def _classification(tokenizer, shuffle):
    examples = classification.TextExamples((tuple(f"the cat {i}" for i in range(COUNT)),), np.arange(COUNT) % 2,
                                           tuple(map(str, range(COUNT))))
    return classification.classification_dataset(examples, tokenizer, 16, batch_size=2, shuffle=shuffle, seed=3)


def _choices(tokenizer, shuffle):
    examples = multiple_choice.ChoiceExamples(tuple(f"the cat {i}" for i in range(COUNT)),
                                              tuple(("a", "b") for _ in range(COUNT)), np.arange(COUNT) % 2)
    return multiple_choice.choice_dataset(examples, tokenizer, 16, batch_size=2, shuffle=shuffle, seed=3)


def _squad(tokenizer, shuffle):
    examples = [squad.SquadExample(f"q{i}", "Who sat?", f"the cat {i} sat", (("the cat", 0),)) for i in range(COUNT)]
    features = squad.squad_features(examples, tokenizer, max_seq_length=24, training=True)
    return squad.squad_dataset(features, batch_size=2, training=True, shuffle=shuffle, seed=3)


def _tagging(tokenizer, shuffle):
    sentences = [tagging.TaggedSentence(("the",) * (i + 1), ("O",) * (i + 1)) for i in range(COUNT)]
    return tagging.tagging_dataset(sentences, tokenizer, ["O"], 16, batch_size=2, shuffle=shuffle, seed=3)[0]


@pytest.mark.parametrize("make", [_classification, _choices, _squad, _tagging])
def test_every_task_batches_alike(tokenizer, make):
    sizes = [len(batch[0]["input_ids"]) for batch in make(tokenizer, shuffle=False)]
    assert sizes == [2, 2, 1]  # evaluation keeps every example, in order
    training = make(tokenizer, shuffle=True)
    assert [len(batch[0]["input_ids"]) for batch in training] == [2, 2]  # training drops the partial batch
    passes = [np.concatenate([batch[0]["input_ids"].numpy().reshape(2, -1) for batch in training])
              for _ in range(3)]
    assert any(not np.array_equal(passes[0], other) for other in passes[1:])  # reshuffled on every pass
