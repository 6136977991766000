import dataclasses
import json
import math
import pathlib

import pytest

import electra_tf
from electra_tf import ElectraConfig, PretrainingConfig, generator_config, load_run_config, save_run_config
from electra_tf.config import FinetuningConfig, field_help


@pytest.mark.parametrize("name, hidden, layers, heads, embedding, gen_hidden, gen_heads, mask_prob, predictions", [
    ("electra_small", 256, 12, 4, 128, 64, 1, 0.15, 19),
    ("electra_base", 768, 12, 12, 768, 256, 4, 0.15, 79),
    ("electra_large", 1024, 24, 16, 1024, 256, 4, 0.25, 130),
])
def test_shipped_configs_hold_the_papers_sizes(name, hidden, layers, heads, embedding, gen_hidden, gen_heads,
                                               mask_prob, predictions):
    model, pretraining = load_run_config(name)
    assert (model.hidden_size, model.num_layers, model.num_heads, model.embedding_size) == (
        hidden, layers, heads, embedding)
    assert model.intermediate_size == 4 * hidden
    generator = generator_config(model, pretraining)
    assert (generator.hidden_size, generator.num_heads, generator.intermediate_size) == (
        gen_hidden, gen_heads, 4 * gen_hidden)
    assert generator.num_layers == layers and generator.embedding_size == embedding
    assert pretraining.mask_prob == mask_prob
    assert pretraining.predictions_per_seq == predictions
    assert (pretraining.gen_weight, pretraining.disc_weight) == (1.0, 50.0)
    assert (pretraining.mask_token_rate, pretraining.keep_token_rate, pretraining.random_token_rate) == (
        0.85, 0.15, 0.0)


def test_tiny_config_loads():
    model, pretraining = load_run_config("electra_tiny")
    assert model.hidden_size == 64 and model.num_layers == 2
    assert generator_config(model, pretraining).hidden_size == 32


def test_json_round_trip_keeps_derived_fields_derived(tmp_path):
    model = ElectraConfig(hidden_size=64, num_heads=2, embedding_size=32)
    pretraining = PretrainingConfig(max_seq_length=64)
    path = tmp_path / "run.json"
    save_run_config(str(path), model, pretraining)
    assert json.loads(path.read_text())["pretraining"]["max_predictions_per_seq"] is None
    loaded_model, loaded_pretraining = load_run_config(str(path))
    assert loaded_model == model and loaded_pretraining == pretraining
    # A changed length re-derives the number of predictions.
    assert loaded_pretraining.replace(max_seq_length=512).predictions_per_seq == 79
    # An explicit value is kept.
    assert PretrainingConfig(max_predictions_per_seq=20).replace(max_seq_length=512).predictions_per_seq == 20


@pytest.mark.parametrize("cls, values, field", [
    (ElectraConfig, {"hidden_size": 100, "num_heads": 3}, "hidden_size"),
    (ElectraConfig, {"hidden_act": "swish"}, "hidden_act"),
    (ElectraConfig, {"hidden_dropout": 1.0}, "hidden_dropout"),
    (ElectraConfig, {"num_layers": 0}, "num_layers"),
    (ElectraConfig, {"vocab_size": "30522"}, "vocab_size"),
    (PretrainingConfig, {"mask_prob": 0.0}, "mask_prob"),
    (PretrainingConfig, {"mask_prob": 1.0}, "mask_prob"),
    (PretrainingConfig, {"generator_hidden_size": 0.0}, "generator_hidden_size"),
    (PretrainingConfig, {"objective": "bert"}, "objective"),
    (PretrainingConfig, {"mask_token_rate": 0.8}, "mask_token_rate"),
    (PretrainingConfig, {"temperature": 0.0}, "temperature"),
    (PretrainingConfig, {"max_predictions_per_seq": 200}, "max_predictions_per_seq"),
    (PretrainingConfig, {"weight_sharing": "some"}, "weight_sharing"),
    (PretrainingConfig, {"weight_sharing": "all"}, "weight_sharing"),  # needs a full-size generator
    (PretrainingConfig, {"generator_type": "unigram", "weight_sharing": "all", "generator_hidden_size": 1.0},
     "weight_sharing"),
    (PretrainingConfig, {"generator_type": "unigram", "training_algorithm": "adversarial"}, "training_algorithm"),
    (PretrainingConfig, {"training_algorithm": "two_stage", "two_stage_generator_steps": 5}, "training_algorithm"),
    (PretrainingConfig, {"training_algorithm": "two_stage", "generator_hidden_size": 1.0}, "two_stage_generator_steps"),
    (PretrainingConfig, {"two_stage_generator_steps": 5}, "two_stage_generator_steps"),
    (PretrainingConfig, {"objective": "mlm", "weight_sharing": "gdes"}, "weight_sharing"),
    (PretrainingConfig, {"objective": "replace_mlm", "training_algorithm": "adversarial"}, "training_algorithm"),
    (PretrainingConfig, {"untied_generator_embeddings": True, "weight_sharing": "gdes"}, "untied_generator_embeddings"),
])
def test_inconsistent_values_name_the_field(cls, values, field):
    with pytest.raises(ValueError, match=rf"{cls.__name__}\.{field}"):
        cls(**values)


def test_unknown_key_is_an_error():
    with pytest.raises(ValueError, match="unknown key.*hidden_sise"):
        ElectraConfig.from_dict({"hidden_sise": 3})


def test_generator_of_zero_width_is_an_error():
    with pytest.raises(ValueError, match="generator_hidden_size.*width 0"):
        generator_config(ElectraConfig(hidden_size=4, num_heads=1), PretrainingConfig(generator_hidden_size=0.1))


def test_mlm_objective_uses_the_full_size_generator():
    model = ElectraConfig()
    assert generator_config(model, PretrainingConfig(objective="mlm")) == model


def test_bad_run_config_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="no config file"):
        load_run_config(str(tmp_path / "missing.json"))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_run_config(str(bad))
    bad.write_text(json.dumps({"model": {}, "optimizer": {}}))
    with pytest.raises(ValueError, match="'model' and 'pretraining'"):
        load_run_config(str(bad))


def test_untied_generator_embeddings_is_the_older_spelling_of_no_sharing():
    old = PretrainingConfig.from_dict({"untied_generator_embeddings": True})
    assert old.sharing == "none" and old.to_dict()["weight_sharing"] == "none"
    assert "untied_generator_embeddings" not in old.to_dict()
    assert PretrainingConfig(weight_sharing="none").sharing == "none"
    assert old.replace(weight_sharing="embeddings").sharing == "embeddings"


def test_every_config_field_has_its_help_and_no_config_is_changed_after_it_is_made():
    for cls in (ElectraConfig, PretrainingConfig, FinetuningConfig):
        assert all(field_help(field) for field in dataclasses.fields(cls))

    @dataclasses.dataclass(frozen=True)
    class Undocumented:
        size: int = 1

    with pytest.raises(TypeError, match="config field 'size' has no help text: declare it with _field"):
        field_help(dataclasses.fields(Undocumented)[0])  # (a KeyError at import, in a FIELD_HELP dict)
    # A frozen config derives (properties), it is never changed after __init__.
    package = pathlib.Path(electra_tf.__file__).parent
    assert not [path for path in package.rglob("*.py") if "object.__setattr__" in path.read_text(encoding="utf-8")]



def test_two_stage_and_tie_all_generators_have_the_discriminators_exact_shape():
    model = ElectraConfig(hidden_size=32, num_heads=2)  # a fraction-derived generator would have 1 head
    for fields in ({"weight_sharing": "all"}, {"training_algorithm": "two_stage", "two_stage_generator_steps": 1}):
        assert generator_config(model, PretrainingConfig(generator_hidden_size=1.0, **fields)) == model


@pytest.mark.parametrize("field, value", [("epochs", math.inf), ("learning_rate", math.inf), ("epochs", math.nan),
                                          ("layerwise_lr_decay", -math.inf)])
def test_a_range_is_of_finite_numbers(field, value):
    """`--epochs=inf` passed `> 0` and ended in an OverflowError traceback after the model was loaded."""
    with pytest.raises(ValueError, match=rf"^FinetuningConfig.{field}: must be a finite number .*, got {value}$"):
        FinetuningConfig(task="rte", **{field: value})
