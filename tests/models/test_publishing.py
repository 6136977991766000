"""A model publishes itself: `save_pretrained` writes a model card and its vocabulary's identity, and
`model.push_to_hub(repo_id)` uploads that folder (to the loopback hub: no network)."""

import json

import huggingface_hub
import numpy as np
import pytest

from electra_tf import ElectraForSequenceClassification, ElectraTokenizer
from electra_tf.text.vocabulary import vocabulary_hash
from electra_tf.tools.local_hub import LocalHub


@pytest.fixture
def hub(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_DISABLE_XET", True)
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_TOKEN", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    with LocalHub({}) as local:
        monkeypatch.setenv("HF_ENDPOINT", local.endpoint)
        yield local


def test_save_pretrained_writes_a_card_and_the_vocabulary_s_identity(tiny_pretrained_dir, tmp_path):
    tokenizer = ElectraTokenizer.from_pretrained(str(tiny_pretrained_dir))
    model = ElectraForSequenceClassification.from_pretrained(str(tiny_pretrained_dir), num_labels=2)
    model.save_pretrained(str(tmp_path / "model"), tokenizer=tokenizer, label_names=["neg", "pos"],
                          base_model="google/electra-small-discriminator", scores={"dev": {"accuracy": 0.75}})
    card = huggingface_hub.ModelCard.load(str(tmp_path / "model" / "README.md"))
    assert (card.data.library_name, card.data.pipeline_tag) == ("electra_tf", "text-classification")
    assert card.data.base_model == "google/electra-small-discriminator"
    assert card.data.eval_results[0].metric_value == 0.75 and "neg" in card.text
    info = json.loads((tmp_path / "model" / "electra_tf.json").read_text())
    assert info["vocabulary_sha256"] == vocabulary_hash(tokenizer.get_vocabulary())


def test_a_model_pushes_itself_and_loads_back_by_id(hub, tiny_pretrained_dir):
    model = ElectraForSequenceClassification.from_pretrained(str(tiny_pretrained_dir), num_labels=2)
    model.label_names = ["neg", "pos"]
    url = model.push_to_hub("me/tiny-sentiment", token="hf_write", commit_message="a classifier", private=True)
    assert url.startswith(f"{hub.endpoint}/me/tiny-sentiment/commit/")
    assert hub.commits == [("me/tiny-sentiment", "main", "a classifier")]
    loaded = ElectraForSequenceClassification.from_pretrained("me/tiny-sentiment", token="hf_write")
    assert loaded.label_names == ("neg", "pos")
    for a, b in zip(loaded.weights, model.weights, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    with pytest.raises(ValueError, match="repo"):
        model.push_to_hub("", token="hf_write")
    tokenizer = ElectraTokenizer.from_pretrained(str(tiny_pretrained_dir))
    tokenizer.push_to_hub("me/tiny-tokenizer", token="hf_write")
    assert ElectraTokenizer.from_pretrained("me/tiny-tokenizer").get_vocabulary() == tokenizer.get_vocabulary()


def test_a_folder_whose_vocabulary_was_replaced_is_refused_naming_both(tiny_pretrained_dir, tmp_path):
    model = ElectraForSequenceClassification.from_pretrained(str(tiny_pretrained_dir), num_labels=2)
    model.save_pretrained(str(tmp_path / "model"))
    vocab = tmp_path / "model" / "vocab.txt"
    lines = vocab.read_text(encoding="utf-8").split("\n")
    lines[5], lines[6] = lines[6], lines[5]  # two words swapped: same size, other meaning
    vocab.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(ValueError, match=r"its vocabulary \(sha256 .*\) is not the one electra_tf.json records"):
        ElectraForSequenceClassification.from_pretrained(str(tmp_path / "model"))
    with pytest.raises(ValueError, match="is not the one electra_tf.json records"):
        ElectraTokenizer.from_pretrained(str(tmp_path / "model"))
