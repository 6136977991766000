"""transformers 4.x's Auto classes on electra_tf: the classes transformers 4.57 resolves for ELECTRA (and BERT)
configs (tests/fixtures/transformers_data/auto.json, tools/make_transformers_data_fixtures.py), the models loaded
through them giving transformers' outputs (tests/fixtures/hf), and the refusals."""

import json
from pathlib import Path

import numpy as np
import pytest

from electra_tf.checkpoints.safetensors_io import read_safetensors
from electra_tf.config import ElectraConfig
from electra_tf.transformers import auto, names
from electra_tf.transformers.auto import AutoConfig, AutoTokenizer
from electra_tf.transformers.tokenizer import ElectraTokenizer

FIXTURES = Path(__file__).parents[1] / "fixtures"
HF = FIXTURES / "hf"
RECORDED = json.loads((FIXTURES / "transformers_data" / "auto.json").read_text(encoding="utf-8"))["cases"]
# An Auto class, a fixture of its task and the output transformers recorded there.
LOADS = [("TFAutoModel", "electra_model_projected", "last_hidden_state"),
         ("TFAutoModel", "bert_model", "last_hidden_state"),  # BertModel's outputs, from our ELECTRA encoder
         ("TFAutoModelForMaskedLM", "generator", "logits"),
         ("TFAutoModelForSequenceClassification", "sequence_classification", "logits"),
         ("TFAutoModelForQuestionAnswering", "question_answering", "start_logits")]


@pytest.mark.parametrize("case", [case for case in RECORDED if "models" in case], ids=lambda case: case["fixture"])
def test_auto_config_and_auto_models_resolve_as_transformers(case):
    config = AutoConfig.from_pretrained(str(HF / case["fixture"]))
    assert type(config) is ElectraConfig
    for field, value in case["config"].items():
        if field != "model_type":
            assert getattr(config, field) == value, field
    for auto_name, theirs in case["models"].items():
        model = getattr(auto, auto_name).from_config(config)
        # transformers' ELECTRA class; for BERT its own classes, whose encoder ours reads as an ELECTRA one
        assert type(model) is getattr(names, theirs.replace("Bert", "Electra")), auto_name
        assert getattr(auto, auto_name.removeprefix("TF")) is getattr(auto, auto_name)  # the PyTorch name too


def test_auto_config_carries_labels_to_the_model():
    recorded = next(case for case in RECORDED if "labels" in case)["labels"]
    config = AutoConfig.from_pretrained(str(HF / "discriminator"), num_labels=3, id2label={0: "a", 1: "b", 2: "c"},
                                        label2id={"a": 0, "b": 1, "c": 2})
    assert config.num_labels == recorded["num_labels"]
    assert {str(key): value for key, value in config.id2label.items()} == recorded["id2label"]
    model = auto.TFAutoModelForSequenceClassification.from_config(config)
    assert model.num_labels == 3 and model.config.id2label == {0: "a", 1: "b", 2: "c"}
    loaded = auto.TFAutoModelForSequenceClassification.from_pretrained(str(HF / "discriminator"), config=config)
    assert loaded.config.id2label == {0: "a", 1: "b", 2: "c"}


@pytest.mark.parametrize("auto_name, fixture, output", LOADS, ids=lambda value: value)
def test_auto_models_load_checkpoints_with_transformers_outputs(auto_name, fixture, output):
    model = getattr(auto, auto_name).from_pretrained(str(HF / fixture))
    io = read_safetensors(str(HF / fixture / "io.safetensors"))
    outputs = model(input_ids=io["input_ids"], attention_mask=io["attention_mask"],
                    token_type_ids=io["token_type_ids"])
    np.testing.assert_allclose(np.asarray(outputs[output]), io[output], atol=1e-5)


def test_other_model_types_are_refused_in_one_line_before_any_weight(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "xlnet", "d_model": 8}))
    (tmp_path / "model.safetensors").write_bytes(b"not read")
    for load in (AutoConfig.from_pretrained, auto.TFAutoModel.from_pretrained):
        with pytest.raises(ValueError, match=r"model_type 'xlnet' is not supported \(electra or bert\)$"):
            load(str(tmp_path))
    with pytest.raises(TypeError, match=r"^TFAutoModel is not instantiated: call TFAutoModel.from_pretrained"):
        auto.TFAutoModel()


def test_auto_tokenizer_reads_the_folder_and_refuses_other_kinds(tmp_path):
    text_ids = read_safetensors(str(HF / "discriminator" / "io.safetensors"))["text_ids"].tolist()
    tokenizer = AutoTokenizer.from_pretrained(str(HF / "discriminator"), use_fast=True)
    assert isinstance(tokenizer, ElectraTokenizer) and tokenizer.lowercase
    assert tokenizer("Hello, world! (tiny)", add_special_tokens=False)["input_ids"] == text_ids
    assert not AutoTokenizer.from_pretrained(str(HF / "bert_model"), do_lower_case=False).lowercase
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\n")
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "xlnet"}))
    with pytest.raises(ValueError, match=r": config\.json says 'xlnet', not a BERT or ELECTRA WordPiece tokenizer; "
                                         r"electra_tf reads only those \(AutoTokenizer gives an ElectraTokenizer\)$"):
        AutoTokenizer.from_pretrained(str(tmp_path))
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "BertJapaneseTokenizer"}))
    with pytest.raises(ValueError, match=r"tokenizer_config\.json says 'BertJapaneseTokenizer', not a BERT"):
        AutoTokenizer.from_pretrained(str(tmp_path))
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "ElectraTokenizer"}))
    assert len(AutoTokenizer.from_pretrained(str(tmp_path))) == 6
    with pytest.raises(TypeError, match="AutoTokenizer is not instantiated"):
        AutoTokenizer()
