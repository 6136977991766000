"""What every model shares (`electra_tf.models.base`): self-describing folders, raw text in, checkpoints back."""

import json
import os
import re

import keras
import numpy as np
import pytest
from safetensors.numpy import load_file

from electra_tf import (
    ElectraConfig,
    ElectraForQuestionAnswering,
    ElectraForSequenceClassification,
    ElectraForTokenClassification,
    ElectraTokenizer,
)
from electra_tf.checkpoints.convert import convert
from electra_tf.export import export_model, query_export
from electra_tf.text.preprocessor import ElectraPreprocessor

WORDS = ["red", "blue", "green", "cat", "dog", "house", "tree", "car", "book", "river", "zebra"]


@pytest.fixture(scope="module")
def tokenizer():
    return ElectraTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS])


@pytest.fixture(scope="module")
def config(tokenizer):
    return ElectraConfig(vocab_size=tokenizer.vocabulary_size(), embedding_size=16, hidden_size=32, num_layers=1,
                         num_heads=2, intermediate_size=64, hidden_dropout=0.0, attention_dropout=0.0)


def marked_texts(n, seed=0):
    """Texts of three words; label 1 when "zebra" is among them."""
    rng = np.random.default_rng(seed)
    texts = [" ".join(rng.choice(WORDS[:-1], 3)) for _ in range(n)]
    labels = np.arange(n) % 2
    texts = [text.replace(text.split()[0], "zebra") if label else text for text, label in zip(texts, labels)]
    return texts, labels


def test_a_model_with_a_preprocessor_fits_evaluates_and_predicts_raw_text_and_saves_with_it(config, tokenizer,
                                                                                            tmp_path):
    keras.utils.set_random_seed(0)
    model = ElectraForSequenceClassification(config, num_labels=2,
                                             preprocessor=ElectraPreprocessor(tokenizer, sequence_length=8))
    model.compile(optimizer=keras.optimizers.Adam(3e-3),
                  loss={"logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True)},
                  metrics={"logits": ["accuracy"]})
    texts, labels = marked_texts(64)
    model.fit(texts, {"logits": labels}, batch_size=16, epochs=8, verbose=0)
    assert model.evaluate(texts, {"logits": labels}, verbose=0, return_dict=True)["accuracy"] >= 0.9
    logits = model.predict(["zebra cat dog", "red blue tree"], verbose=0)["logits"]
    assert logits.argmax(-1).tolist() == [1, 0]
    ids = tokenizer.encode(["zebra cat dog", "red blue tree"], sequence_length=8)
    np.testing.assert_allclose(model.predict({k: v.numpy() for k, v in ids.items()}, verbose=0)["logits"], logits,
                               atol=1e-6)  # ids still work, and give the same numbers
    model.save(tmp_path / "model.keras")
    loaded = keras.saving.load_model(tmp_path / "model.keras", safe_mode=True)
    assert loaded.preprocessor.sequence_length == 8
    np.testing.assert_allclose(loaded.predict(["zebra cat dog", "red blue tree"], verbose=0)["logits"], logits,
                               atol=1e-6)
    pairs = (["zebra cat", "red dog"], ["tree", "book"])  # (texts, second texts)
    assert model.predict(pairs, verbose=0)["logits"].shape == (2, 2)
    # The export takes its tokenizer and length from the preprocessor: the same numbers from raw text.
    path = export_model(model, None, str(tmp_path / "exports"), label_names=["plain", "zebra"])
    answer = query_export(path, ["zebra cat dog", "red blue tree"])
    np.testing.assert_allclose(answer["logits"], logits, atol=1e-5)
    assert answer["label"].tolist() == ["zebra", "plain"]  # strings as str, not bytes


@pytest.mark.perf
def test_predict_on_raw_text_traces_once_and_gives_what_the_keras_path_gives(config, tokenizer):
    keras.utils.set_random_seed(0)
    model = ElectraForSequenceClassification(config, num_labels=3,
                                             preprocessor=ElectraPreprocessor(tokenizer, sequence_length=16))
    texts = ["zebra cat dog", "red", "blue tree house car"]
    keras_path = keras.Model.predict(model, model._text_dataset(texts), verbose=0)["logits"]  # (padded to 16)
    np.testing.assert_allclose(model.predict(texts, batch_size=2, verbose=0)["logits"], keras_path, atol=1e-5)
    model.predict(["cat"], verbose=0)
    model.predict(["a longer text of words than before", "dog"], verbose=0)
    assert model._text_predictor.traces == 1  # one graph for every batch size and length
    model.predict((["cat"], ["dog"]), verbose=0)
    assert model._text_predictor.traces == 2  # pairs: their own graph, once
    tagger = ElectraForTokenClassification(config, num_labels=2,
                                           preprocessor=ElectraPreprocessor(tokenizer, sequence_length=16))
    assert tagger.predict(texts, batch_size=2, verbose=0)["logits"].shape == (3, 16, 2)  # per token: fixed length


def test_a_model_without_text_inputs_refuses_a_preprocessor(config, tokenizer):
    with pytest.raises(ValueError, match="ElectraForQuestionAnswering does not read one text or a text pair"):
        ElectraForQuestionAnswering(config, preprocessor=ElectraPreprocessor(tokenizer))


def test_save_pretrained_writes_a_hugging_face_folder_that_describes_itself(config, tokenizer, tmp_path):
    model = ElectraForSequenceClassification(config, num_labels=2)  # the default head: Hugging Face's
    model.save_pretrained(tmp_path / "hf", tokenizer=tokenizer, label_names=["negative", "positive"],
                          max_seq_length=32)
    # The weights once, as transformers reads them (AutoModelForSequenceClassification.from_pretrained), and the
    # model card the hub shows.
    assert set(os.listdir(tmp_path / "hf")) == {"config.json", "model.safetensors", "vocab.txt",
                                                "tokenizer_config.json", "electra_tf.json", "README.md"}
    hf_config = json.loads((tmp_path / "hf" / "config.json").read_text())
    assert hf_config["architectures"] == ["ElectraForSequenceClassification"] and hf_config["model_type"] == "electra"
    assert hf_config["id2label"] == {"0": "negative", "1": "positive"}
    assert hf_config["label2id"] == {"negative": 0, "positive": 1}
    state = load_file(str(tmp_path / "hf" / "model.safetensors"))
    expected = load_file(os.path.join(os.path.dirname(__file__), "..", "fixtures", "hf", "sequence_classification",
                                      "model.safetensors"))
    any_layer = lambda keys: {re.sub(r"\.layer\.\d+\.", ".layer.N.", key) for key in keys}  # noqa: E731
    assert any_layer(state) == any_layer(expected)  # the keys transformers' own ElectraForSequenceClassification saves
    assert all(array.dtype == np.float32 for array in state.values())
    info = json.loads((tmp_path / "hf" / "electra_tf.json").read_text())
    assert info["label_names"] == ["negative", "positive"] and info["max_seq_length"] == 32
    # Back: the same model, its preprocessor (length from electra_tf.json) and its labels.
    loaded = ElectraForSequenceClassification.from_pretrained(tmp_path / "hf")
    assert loaded.preprocessor.sequence_length == 32 and loaded.preprocessor.tokenizer.vocabulary_size() == 16
    assert loaded.label_names == ("negative", "positive")
    assert loaded.id2label == {0: "negative", 1: "positive"} and loaded.label2id == {"negative": 0, "positive": 1}
    batch = tokenizer.encode(["zebra cat"], sequence_length=8)
    np.testing.assert_allclose(loaded(batch)["logits"], model(batch)["logits"], atol=1e-6)
    written = convert(str(tmp_path / "hf"), str(tmp_path / "again"), to="huggingface")[0]
    assert json.loads(open(os.path.join(written, "config.json")).read())["id2label"]["1"] == "positive"


def _folder_bytes(folder):
    return sum(os.path.getsize(os.path.join(folder, name)) for name in os.listdir(folder))


@pytest.mark.parametrize("head", ["huggingface", "original"])
def test_a_trained_model_folder_holds_its_weights_once_and_not_its_optimizer(config, tokenizer, tmp_path, head):
    wider = config.replace(hidden_size=128, intermediate_size=512)  # weights well above the files' fixed overhead
    model = ElectraForSequenceClassification(wider, num_labels=2, head=head,
                                             preprocessor=ElectraPreprocessor(tokenizer, sequence_length=8))
    model.compile(optimizer=keras.optimizers.AdamW(1e-3),
                  loss={"logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True)})
    model.optimizer.build(model.trainable_variables)  # Adam's two values per weight, as after training
    model.save_pretrained(tmp_path / head, label_names=["plain", "zebra"])
    weights = 4 * model.count_params()
    tokenizer_files = sum(os.path.getsize(tmp_path / head / name) for name in ("vocab.txt", "tokenizer_config.json"))
    assert _folder_bytes(tmp_path / head) <= 1.3 * weights + tokenizer_files
    loaded = ElectraForSequenceClassification.from_pretrained(tmp_path / head)
    assert loaded.label_names == ("plain", "zebra") and loaded.head == head
    batch = tokenizer.encode(["zebra cat", "red dog"], sequence_length=8)
    np.testing.assert_allclose(loaded(batch)["logits"], model(batch)["logits"], atol=1e-6)


def test_label_names_unknown_read_as_transformers_names_them(config):
    model = ElectraForSequenceClassification(config, num_labels=3)
    assert model.label_names is None and model.id2label == {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}
    with pytest.raises(ValueError, match="2 label names for a model with 3 labels"):
        model.label_names = ["a", "b"]


def test_the_original_head_saves_whole_and_says_which_head_converts(config, tokenizer, tmp_path):
    model = ElectraForSequenceClassification(config, num_labels=3, head="original")
    model.save_pretrained(tmp_path / "original", tokenizer=tokenizer, label_names=["a", "b", "c"])
    assert not (tmp_path / "original" / "config.json").exists()
    assert ElectraForSequenceClassification.from_pretrained(tmp_path / "original").num_labels == 3
    with pytest.raises(ValueError, match="the head='huggingface' one converts"):
        convert(str(tmp_path / "original"), str(tmp_path / "hf"), to="huggingface")
    with pytest.raises(ValueError, match="2 label names for a model with 3 labels"):
        model.save_pretrained(tmp_path / "bad", label_names=["a", "b"])
