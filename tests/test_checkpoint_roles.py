"""A checkpoint's role checked against what it is used for, on every path: a generator needs a trained
masked-LM head (Fast-ELECTRA's frozen generator, a continued pre-training's generator); a frozen generator is
never replaced by a continued pre-training's start; a model folder's `electra_tf.json` describes its weights."""

import shutil
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from electra_tf import (
    ElectraConfig,
    ElectraDiscriminator,
    ElectraForSequenceClassification,
    ElectraPretrainer,
    ElectraTokenizer,
    PretrainingConfig,
    load_run_config,
)
from electra_tf.checkpoints.ours import write_run_folder
from electra_tf.pretraining.init_checkpoint import load_initial_weights, load_pretrainer_weights
from electra_tf.pretraining.run import RunOptions, run_pretraining

HF_FIXTURES = Path(__file__).parent / "fixtures" / "hf"
DISCRIMINATOR, GENERATOR = str(HF_FIXTURES / "discriminator"), str(HF_FIXTURES / "generator")
NO_HEAD = "without a trained masked-LM head"


@pytest.fixture(scope="module")
def config():
    """The Hugging Face discriminator fixture's shape (its generator fixture is this config's generator)."""
    return ElectraConfig(vocab_size=99, embedding_size=16, hidden_size=32, num_layers=2, num_heads=2,
                         intermediate_size=48, max_position_embeddings=16)


def fast_electra_config(checkpoint):
    return PretrainingConfig(max_seq_length=16, generator_type="pretrained", weight_sharing="none",
                             generator_checkpoint=checkpoint, generator_hidden_size=0.5)


def pretrainer(config, pretraining):
    return ElectraPretrainer(config, pretraining, mask_token_id=4, special_token_ids=[0, 1, 2, 3])


def test_fast_electra_refuses_a_discriminator_as_its_generator_before_any_work(tmp_path, fixture_vocab, config):
    model, _ = load_run_config("electra_tiny")
    options = RunOptions(model_dir=str(tmp_path / "run"), vocab_file=fixture_vocab, train_text_files=fixture_vocab)
    with pytest.raises(ValueError) as refused:
        run_pretraining(model, fast_electra_config(DISCRIMINATOR), options)
    message = str(refused.value)
    assert message.startswith(f"PretrainingConfig.generator_checkpoint: {DISCRIMINATOR} (huggingface): holds a "
                              "ElectraForPreTraining (a discriminator) " + NO_HEAD), message
    assert "\n" not in message and not (tmp_path / "run").exists()
    with pytest.raises(ValueError, match=NO_HEAD):  # the Python API's pre-trainer too
        pretrainer(config, fast_electra_config(DISCRIMINATOR))


def test_a_continued_mlm_pretraining_refuses_a_start_without_a_masked_lm_head(config):
    mlm = pretrainer(config, PretrainingConfig(max_seq_length=16, objective="mlm"))
    before = [np.asarray(w) for w in mlm.generator.weights]
    with pytest.raises(ValueError, match=f"{DISCRIMINATOR} \\(huggingface\\): holds a ElectraForPreTraining "
                                         f"\\(a discriminator\\) {NO_HEAD}"):
        load_pretrainer_weights(mlm, DISCRIMINATOR)
    for a, b in zip(before, mlm.generator.weights):  # nothing assigned
        np.testing.assert_array_equal(a, b)


def test_a_continued_fast_electra_keeps_its_frozen_generator(tmp_path, config):
    fast = pretrainer(config, fast_electra_config(GENERATOR))
    frozen = [np.asarray(w) for w in fast.generator.weights]
    other = pretrainer(config, fast_electra_config(GENERATOR))
    for weight in other.generator.weights:  # another run's generator: not the one --generator_checkpoint names
        weight.assign(tf.ones_like(weight))
    for weight in other.discriminator.weights:
        weight.assign(tf.fill(weight.shape, 0.5))
    prefix = tf.train.Checkpoint(model=other).save(str(tmp_path / "checkpoints" / "ckpt"))
    write_run_folder(tmp_path / "final", other.export_networks(), config, other.pretraining_config)
    for start in (prefix, str(tmp_path / "final")):
        loaded = load_initial_weights(fast, start)
        assert loaded == start
        for a, b in zip(frozen, fast.generator.weights):
            np.testing.assert_array_equal(a, b)
        assert all(np.all(np.asarray(w) == 0.5) for w in fast.discriminator.weights)
        for weight in fast.discriminator.weights:
            weight.assign(tf.zeros_like(weight))


def test_a_folder_whose_description_is_not_its_weights_is_refused_by_export_and_from_pretrained(
        tmp_path, fixture_vocab, run_tool, refused):
    # A 3-label classifier's folder (Hugging Face weights and electra_tf.json) whose weights were then
    # overwritten by a discriminator's: the description says one thing, the weights another.
    config = ElectraConfig(vocab_size=1418, embedding_size=16, hidden_size=32, num_layers=1, num_heads=2,
                           intermediate_size=64, max_position_embeddings=128)
    folder, other = tmp_path / "classifier", tmp_path / "discriminator"
    ElectraForSequenceClassification(config, num_labels=3).save_pretrained(
        folder, tokenizer=ElectraTokenizer(fixture_vocab), label_names=["no", "maybe", "yes"])
    ElectraDiscriminator(config).save_pretrained(other)
    for name in ("config.json", "model.safetensors"):
        shutil.copyfile(other / name, folder / name)
    message = (f"{folder}/electra_tf.json says the folder holds a ElectraForSequenceClassification (Hugging Face "
               f"class ElectraForSequenceClassification), but the weights in {folder} are a ElectraForPreTraining's")
    for cls in (ElectraForSequenceClassification, ElectraDiscriminator):
        with pytest.raises(ValueError) as wrong:
            cls.from_pretrained(str(folder))
        assert str(wrong.value).startswith(message), str(wrong.value)
    refused(run_tool("export_model", f"--model={folder}", f"--export_dir={tmp_path / 'exports'}"), message)
    assert not (tmp_path / "exports").exists()
