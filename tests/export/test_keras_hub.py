"""keras-hub presets both ways, made offline with keras-hub itself from random weights."""

import keras
import keras_hub
import numpy as np
import pytest

from electra_tf import (
    ElectraConfig,
    ElectraForSequenceClassification,
    ElectraModel,
    ElectraPreprocessor,
    ElectraTextClassifier,
    ElectraTokenizer,
    save_keras_hub_preset,
)

VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "quick", "brown", "fox", "jumps", "##es", "."]
TEXTS = ["The quick brown fox.", "the fox jumps", "foxes"]


def config(**changes):
    return ElectraConfig(**{"vocab_size": len(VOCABULARY), "embedding_size": 8, "hidden_size": 16, "num_layers": 2,
                            "num_heads": 2, "intermediate_size": 32, "max_position_embeddings": 24,
                            "hidden_act": "gelu_approximate", "hidden_dropout": 0.0, "attention_dropout": 0.0,
                            **changes})


def hub_inputs(batch):
    return {"token_ids": batch["input_ids"], "segment_ids": batch["token_type_ids"],
            "padding_mask": batch["attention_mask"]}


@pytest.fixture(scope="module")
def tokenizer():
    return ElectraTokenizer(VOCABULARY)


def test_a_keras_hub_preset_loads_into_our_models_with_its_tokenizer(tmp_path, tokenizer):
    keras.utils.set_random_seed(0)
    backbone = keras_hub.models.ElectraBackbone(vocab_size=len(VOCABULARY), num_layers=2, num_heads=2, hidden_dim=16,
                                                embedding_dim=8, intermediate_dim=32, max_sequence_length=24)
    backbone.save_to_preset(str(tmp_path))
    keras_hub.models.ElectraTokenizer(vocabulary=VOCABULARY, lowercase=True).save_to_preset(str(tmp_path))
    ours = ElectraModel.from_pretrained(str(tmp_path))
    assert ours.config.hidden_act == "gelu_approximate" and ours.config.max_position_embeddings == 24
    batch = tokenizer.encode(TEXTS, sequence_length=10)
    np.testing.assert_allclose(ours(batch)["last_hidden_state"], backbone(hub_inputs(batch))["sequence_output"],
                               atol=1e-5)
    loaded_tokenizer = ElectraTokenizer.from_pretrained(str(tmp_path))
    assert loaded_tokenizer.get_vocabulary() == VOCABULARY and loaded_tokenizer.lowercase
    assert ours.preprocessor is not None  # raw text in, from the preset's tokenizer
    np.testing.assert_allclose(ours.predict(TEXTS, verbose=0)["last_hidden_state"][:, :10],
                               backbone(hub_inputs(tokenizer.encode(TEXTS, sequence_length=24)))[
                                   "sequence_output"][:, :10], atol=1e-5)


def test_our_model_is_a_preset_keras_hubs_backbone_loads_with_the_same_outputs(tmp_path, tokenizer):
    keras.utils.set_random_seed(1)
    model = ElectraModel(config())
    save_keras_hub_preset(model, str(tmp_path), tokenizer)
    backbone = keras_hub.models.ElectraBackbone.from_preset(str(tmp_path))
    batch = tokenizer.encode(TEXTS, sequence_length=10)
    np.testing.assert_allclose(backbone(hub_inputs(batch))["sequence_output"], model(batch)["last_hidden_state"],
                               atol=1e-5)
    hub_tokenizer = keras_hub.models.ElectraTokenizer.from_preset(str(tmp_path))
    assert np.asarray(hub_tokenizer("the quick foxes")).tolist() == \
        tokenizer.encode("the quick foxes", add_special_tokens=False)


def test_exact_gelu_is_written_with_a_warning_and_differs_only_by_the_approximation(tmp_path, tokenizer, caplog):
    keras.utils.set_random_seed(2)
    model = ElectraModel(config(hidden_act="gelu"))
    save_keras_hub_preset(model, str(tmp_path), tokenizer)
    assert "tanh approximation" in caplog.text
    backbone = keras_hub.models.ElectraBackbone.from_preset(str(tmp_path))
    batch = tokenizer.encode(TEXTS, sequence_length=10)
    difference = np.abs(backbone(hub_inputs(batch))["sequence_output"] - model(batch)["last_hidden_state"]).max()
    assert 0 < difference < 1e-2
    with pytest.raises(ValueError, match="keras-hub's ElectraBackbone runs GELU"):
        save_keras_hub_preset(ElectraModel(config(hidden_act="relu")), str(tmp_path / "relu"), tokenizer)


def test_a_classifier_is_a_keras_hub_text_classifier_preset(tmp_path, tokenizer):
    keras.utils.set_random_seed(3)
    model = ElectraForSequenceClassification(config(), num_labels=3, head="original",  # keras-hub's task head
                                             preprocessor=ElectraPreprocessor(tokenizer, sequence_length=12))
    save_keras_hub_preset(model, str(tmp_path))
    classifier = keras_hub.models.TextClassifier.from_preset(str(tmp_path))
    assert isinstance(classifier, ElectraTextClassifier)
    np.testing.assert_allclose(classifier.predict(TEXTS, verbose=0), model.predict(TEXTS, verbose=0)["logits"],
                               atol=1e-5)
    fresh = keras_hub.models.TextClassifier.from_preset(str(tmp_path), num_classes=5)  # a new head
    assert fresh.predict(TEXTS, verbose=0).shape == (3, 5)
