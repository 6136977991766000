"""transformers 4.x's names, exported by electra_tf: each is our class, and reads the Hugging Face fixtures.

The fixtures (tests/fixtures/hf, written by tools/make_hf_fixtures.py) hold transformers' outputs; these tests
need neither transformers nor a network.
"""

from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import electra_tf
from electra_tf import (
    ElectraConfig,
    ElectraDiscriminator,
    ElectraForMaskedLM,
    ElectraForMultipleChoice,
    ElectraForPreTraining,
    ElectraForQuestionAnswering,
    ElectraForSequenceClassification,
    ElectraForTokenClassification,
    ElectraGenerator,
    ElectraModel,
    ElectraTokenizer,
    PretrainingConfig,
    save_run_config,
)
from electra_tf.checkpoints import hf
from electra_tf.checkpoints.safetensors_io import read_safetensors

FIXTURES = Path(__file__).parents[1] / "fixtures" / "hf"
# transformers' model name: (our class, a fixture of that class, arguments)
MODELS = {
    "TFElectraModel": (ElectraModel, "electra_model_projected", {"output_hidden_states": True}),
    "TFElectraForPreTraining": (ElectraForPreTraining, "discriminator", {}),
    "ElectraForPreTraining": (ElectraForPreTraining, "discriminator", {}),
    "TFElectraForMaskedLM": (ElectraForMaskedLM, "generator", {}),
    "ElectraForMaskedLM": (ElectraForMaskedLM, "generator", {}),
    "TFElectraForSequenceClassification": (ElectraForSequenceClassification, "sequence_classification", {}),
    "TFElectraForTokenClassification": (ElectraForTokenClassification, "token_classification", {}),
    "TFElectraForQuestionAnswering": (ElectraForQuestionAnswering, "question_answering", {}),
    "TFElectraForMultipleChoice": (ElectraForMultipleChoice, "multiple_choice", {"num_choices": 3}),
}
OTHERS = {"ElectraTokenizerFast": ElectraTokenizer, "ElectraConfig": ElectraConfig}


def test_every_transformers_name_is_exported_and_is_our_class():
    for name, ours in {**{name: spec[0] for name, spec in MODELS.items()}, **OTHERS}.items():
        theirs = getattr(electra_tf, name)
        assert name in electra_tf.__all__
        if name == "TFElectraForQuestionAnswering":  # ours with transformers' head by default: a subclass
            assert theirs.__mro__[1] is ours and set(vars(theirs)) <= {"__init__", "__module__", "__doc__"}
        else:
            assert theirs is ours, name
    assert issubclass(ElectraForPreTraining, ElectraDiscriminator) and issubclass(ElectraForMaskedLM,
                                                                                      ElectraGenerator)
    assert "AutoTokenizer" in electra_tf.__all__
    assert electra_tf.__all__ == sorted(electra_tf.__all__)


@pytest.mark.parametrize("name", list(MODELS))
def test_each_name_loads_a_hugging_face_checkpoint_with_transformers_outputs(name):
    _, fixture, arguments = MODELS[name]
    model = getattr(electra_tf, name).from_pretrained(str(FIXTURES / fixture), **arguments)
    io = read_safetensors(str(FIXTURES / fixture / "io.safetensors"))
    batch = {key: tf.constant(io[key]) for key in ("input_ids", "attention_mask", "token_type_ids")}
    if fixture == "generator":  # transformers scores every position
        batch["mask_positions"] = tf.tile(tf.range(io["input_ids"].shape[1])[None], (io["input_ids"].shape[0], 1))
    outputs = model(batch)
    key = next(key for key in ("logits", "start_logits", "last_hidden_state") if key in io)
    assert np.max(np.abs(np.asarray(outputs[key]) - io[key])) < 1e-5


def test_tf_question_answering_has_transformers_head_where_ours_has_the_original():
    discriminator = str(FIXTURES / "discriminator")
    theirs = electra_tf.TFElectraForQuestionAnswering.from_pretrained(discriminator)  # a new head on the encoder
    assert theirs.head == "huggingface" and theirs.hf_architecture == "ElectraForQuestionAnswering"
    assert ElectraForQuestionAnswering.from_pretrained(discriminator).head == "original"
    again = type(theirs).from_config(theirs.get_config())
    assert type(again) is electra_tf.TFElectraForQuestionAnswering and again.head == "huggingface"


def test_electra_config_takes_transformers_names():
    config = ElectraConfig(vocab_size=99, num_hidden_layers=2, num_attention_heads=2, hidden_size=32,
                           hidden_dropout_prob=0.2, attention_probs_dropout_prob=0.3, hidden_act="gelu_new",
                           intermediate_size=48, max_position_embeddings=16, type_vocab_size=2, layer_norm_eps=1e-7,
                           embedding_size=16)
    assert config == ElectraConfig(vocab_size=99, num_layers=2, num_heads=2, hidden_size=32, hidden_dropout=0.2,
                                   attention_dropout=0.3, hidden_act="gelu_approximate", intermediate_size=48,
                                   max_position_embeddings=16, layer_norm_eps=1e-7, embedding_size=16)
    assert (config.num_hidden_layers, config.num_attention_heads, config.hidden_dropout_prob,
            config.attention_probs_dropout_prob) == (2, 2, 0.2, 0.3)
    assert "num_hidden_layers" not in config.to_dict()
    with pytest.raises(TypeError, match=r"ElectraConfig: num_layers and num_hidden_layers \(transformers' name of "
                                        r"it\) both given"):
        ElectraConfig(num_layers=2, num_hidden_layers=3)


def test_electra_config_from_pretrained_reads_hugging_face_folders_ours_and_hub_ids(tmp_path, monkeypatch):
    folder = FIXTURES / "sequence_classification"
    expected = hf.read_folder(str(folder)).config
    assert ElectraConfig.from_pretrained(str(folder)) == expected
    assert ElectraConfig.from_pretrained(str(folder / "config.json")) == expected
    ours = ElectraConfig(vocab_size=50, hidden_size=16, num_heads=2, embedding_size=8, num_layers=1)
    save_run_config(str(tmp_path / "config.json"), ours, PretrainingConfig())
    assert ElectraConfig.from_pretrained(str(tmp_path)) == ours
    # A hub id, from a Hugging Face cache (offline): only config.json is needed.
    snapshot = tmp_path / "hub" / "models--owner--tiny-electra" / "snapshots" / ("0" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_bytes((folder / "config.json").read_bytes())
    (snapshot.parents[1] / "refs").mkdir()
    (snapshot.parents[1] / "refs" / "main").write_text("0" * 40)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert ElectraConfig.from_pretrained("owner/tiny-electra", cache_dir=str(tmp_path / "hub")) == expected
    # transformers' keyword arguments replace fields; one that is no field of ours is named
    changed = ElectraConfig.from_pretrained(str(folder), num_hidden_layers=1, attention_dropout=0.0)
    assert changed == expected.replace(num_layers=1, attention_dropout=0.0)
    with pytest.raises(ValueError, match=r"ElectraConfig: unknown key\(s\) \['num_labels'\]"):
        ElectraConfig.from_pretrained(str(folder), num_labels=3)
