"""A transformers-style model call refuses what it cannot read in one sentence naming the argument, before TensorFlow
sees it (`electra_tf.transformers.checks`), and takes what transformers takes (`labels=None`, labels `[batch, 1]`)."""

import keras
import numpy as np
import pytest

from electra_tf import (
    ElectraConfig,
    ElectraForSequenceClassification,
    ElectraForTokenClassification,
    ElectraModel,
)

CONFIG = ElectraConfig(vocab_size=40, embedding_size=8, hidden_size=16, num_layers=1, num_heads=2,
                       intermediate_size=32, max_position_embeddings=16, hidden_dropout=0.0, attention_dropout=0.0)
IDS = np.array([[2, 7, 9, 3], [2, 5, 8, 3]], "int64")


@pytest.fixture(scope="module")
def models():
    keras.utils.set_random_seed(0)
    return {"encoder": ElectraModel(CONFIG), "classifier": ElectraForSequenceClassification(CONFIG, num_labels=3),
            "regression": ElectraForSequenceClassification(CONFIG, num_labels=1),
            "tagger": ElectraForTokenClassification(CONFIG, num_labels=4)}


BAD_CALLS = {
    "id beyond the vocabulary": ("encoder", {"input_ids": [[2, 40, 3]]}, ValueError,
                                 "ElectraModel: input_ids holds 40, outside the vocabulary (ids 0..39)"),
    "negative id": ("encoder", {"input_ids": [[2, -1, 3]]}, ValueError,
                    "ElectraModel: input_ids holds -1, outside the vocabulary (ids 0..39)"),
    "more tokens than positions": ("encoder", {"input_ids": np.full((1, 17), 5)}, ValueError,
                                   "ElectraModel: 17 tokens but the model has 16 positions; truncate the texts"),
    "text as input_ids": ("encoder", {"input_ids": ["a text"]}, TypeError,
                          "input_ids: strings are not token ids; tokenize them first"),
    "token type beyond the table": ("encoder", {"input_ids": IDS, "token_type_ids": np.full((2, 4), 2)}, ValueError,
                                    "ElectraModel: token_type_ids holds 2, beyond the token type table (ids 0..1)"),
    "labels of another batch": ("classifier", {"input_ids": IDS, "labels": np.array([0, 1, 2])}, ValueError,
                                "ElectraForSequenceClassification: 3 labels for a batch of 2; give one per example"),
    "a regression label of shape [1]": ("regression", {"input_ids": IDS, "labels": np.array([0.5])}, ValueError,
                                        "ElectraForSequenceClassification: 1 labels for a batch of 2"),
    "float class ids": ("classifier", {"input_ids": IDS, "labels": np.array([0.0, 1.0])}, TypeError,
                        "ElectraForSequenceClassification: labels are floats for a 3-class head; give class ids"),
    "string labels": ("classifier", {"input_ids": IDS, "labels": np.array(["yes", "no"])}, TypeError,
                      "ElectraForSequenceClassification: labels holds strings; give label ids"),
    "token labels of another shape": ("tagger", {"input_ids": IDS, "labels": np.zeros((2, 3), "int64")}, ValueError,
                                      "ElectraForTokenClassification: labels of shape [2, 3] but the model scores "
                                      "[2, 4] tokens; give one label per token (-100 where none)"),
}


@pytest.mark.parametrize("case", list(BAD_CALLS))
def test_a_bad_input_is_one_sentence_naming_the_argument(models, case):
    name, call, error, message = BAD_CALLS[case]
    with pytest.raises(error) as raised:
        models[name](**call)
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value)


def test_labels_none_and_labels_of_shape_batch_by_one_are_taken_as_transformers_takes_them(models):
    model = models["classifier"]
    assert model(input_ids=IDS, labels=None).loss is None
    flat = model(input_ids=IDS, labels=np.array([2, 0])).loss.numpy()
    np.testing.assert_allclose(model(input_ids=IDS, labels=np.array([[2], [0]])).loss.numpy(), flat)
