"""Checkpoint interop: Hugging Face and Google ELECTRA checkpoints into our models and back, with parity.

The Hugging Face fixtures (tests/fixtures/hf, written by tools/make_hf_fixtures.py) hold tiny random
`transformers` models with their inputs and outputs; these tests need neither torch nor transformers.
"""

import hashlib
import json
import logging
import os
import re
import shutil
from pathlib import Path

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
    ElectraGenerator,
    ElectraModel,
    ElectraPretrainer,
    ElectraTokenizer,
    PretrainingConfig,
    pipeline,
)
from electra_tf.checkpoints import google, hf
from electra_tf.checkpoints.google import save_google
from electra_tf.checkpoints.hf import save_huggingface
from electra_tf.checkpoints.loading import CheckpointMismatchError
from electra_tf.checkpoints.safetensors_io import read_safetensors, stored_float_dtype, write_safetensors
from electra_tf.checkpoints.sources import read_config
from electra_tf.checkpoints.transfer import load_state
from electra_tf.checkpoints.convert import convert
from electra_tf.pretraining.init_checkpoint import load_pretrainer_weights

FIXTURES = Path(__file__).parents[1] / "fixtures" / "hf"
TOLERANCE = 1e-5
HIDDEN = {"output_hidden_states": True}
CASES = {
    "electra_model_projected": (ElectraModel, HIDDEN),
    "electra_model_square": (ElectraModel, HIDDEN),
    "electra_model_gelu_new": (ElectraModel, HIDDEN),
    "bert_model": (ElectraModel, HIDDEN),
    "discriminator": (ElectraDiscriminator, HIDDEN),
    "generator": (ElectraGenerator, HIDDEN),
    "sequence_classification": (ElectraForSequenceClassification, {}),
    "token_classification": (ElectraForTokenClassification, {}),
    "question_answering": (ElectraForQuestionAnswering, {}),
    "multiple_choice": (ElectraForMultipleChoice, {"num_choices": 3}),
}


def io_of(name):
    return read_safetensors(str(FIXTURES / name / "io.safetensors"))


def inputs_of(io, cls):
    batch = {key: io[key] for key in ("input_ids", "attention_mask", "token_type_ids")}
    if cls is ElectraGenerator:  # Hugging Face scores every position
        batch["mask_positions"] = np.tile(np.arange(batch["input_ids"].shape[1], dtype=np.int32),
                                          (batch["input_ids"].shape[0], 1))
    return batch


def max_differences(model, name, cls):
    io = io_of(name)
    outputs = model(inputs_of(io, cls))
    stack = lambda value: np.stack(value, axis=1) if isinstance(value, tuple) else np.asarray(value)  # noqa: E731
    return {key: float(np.max(np.abs(stack(outputs[key]) - io[key])))  # hidden states: a tuple of layers
            for key in ("hidden_states", "logits", "start_logits", "end_logits") if key in io and key in outputs}


def vocabulary():
    return (FIXTURES / "discriminator" / "vocab.txt").read_text().split("\n")[:-1]


def copy_fixture(name, tmp_path):
    return Path(shutil.copytree(FIXTURES / name, tmp_path / name))


@pytest.mark.parametrize("name", list(CASES))
def test_huggingface_checkpoints_load_with_parity_and_go_back_exactly(name, tmp_path):
    cls, arguments = CASES[name]
    model = cls.from_pretrained(str(FIXTURES / name), **arguments)
    differences = max_differences(model, name, cls)
    assert differences and max(differences.values()) < TOLERANCE, differences
    if cls is not ElectraModel:
        assert {"logits", "start_logits"} & set(differences)
    if name == "bert_model":
        return  # a BERT checkpoint becomes an ELECTRA encoder (its pooler dropped): no BERT export
    # Ours → Hugging Face → ours is exact: the same tensors, bit for bit, and the same config.
    save_huggingface(model, str(tmp_path / "hf"), vocabulary=vocabulary())
    written, original = read_safetensors(str(tmp_path / "hf")), read_safetensors(str(FIXTURES / name))
    assert sorted(written) == sorted(original)
    for key in original:
        np.testing.assert_array_equal(written[key], original[key], err_msg=key)
    with open(tmp_path / "hf" / "config.json") as f, open(FIXTURES / name / "config.json") as g:
        assert hf.config_from_hf(json.load(f)) == hf.config_from_hf(json.load(g))
    again = cls.from_pretrained(str(tmp_path / "hf"), **arguments)
    for a, b in zip(again.weights, model.weights, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("name", ["discriminator", "bert_model"])
def test_the_tokenizer_comes_from_vocab_txt_or_tokenizer_json(name):
    assert (FIXTURES / name / "vocab.txt").exists() == (name != "bert_model")
    tokenizer = ElectraTokenizer.from_pretrained(str(FIXTURES / name))
    assert tokenizer.encode("Hello, world! (tiny)", add_special_tokens=False) == io_of(name)["text_ids"].tolist()
    assert tokenizer.lowercase


def test_a_task_model_keeps_the_encoder_of_a_pretraining_checkpoint_and_gets_a_new_head(caplog):
    with caplog.at_level(logging.INFO, logger="electra_tf"):
        model = ElectraForSequenceClassification.from_pretrained(str(FIXTURES / "discriminator"), num_labels=4)
    assert "new weights" in caplog.text and "out_proj/kernel" in caplog.text
    assert "discriminator_predictions.dense.weight" in caplog.text  # dropped, and said so
    discriminator = ElectraDiscriminator.from_pretrained(str(FIXTURES / "discriminator"))
    for a, b in zip(model.backbone.weights, discriminator.backbone.weights, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    # A task head of another class is never dropped silently; the matching class takes it with its labels.
    with pytest.raises(CheckpointMismatchError, match=r"unexpected.*classifier\.out_proj\.weight"):
        ElectraForTokenClassification.from_pretrained(str(FIXTURES / "sequence_classification"))
    ElectraForTokenClassification.from_pretrained(str(FIXTURES / "sequence_classification"), allow_unexpected=True)
    with pytest.raises(CheckpointMismatchError, match="unexpected"):
        ElectraForSequenceClassification.from_pretrained(str(FIXTURES / "sequence_classification"), head="original")
    loaded = ElectraForSequenceClassification.from_pretrained(str(FIXTURES / "sequence_classification"))
    assert loaded.head == "huggingface" and loaded.num_labels == 3
    assert loaded.config.layer_norm_eps == 1e-7


def test_a_config_that_does_not_match_the_weights_lists_names_and_shapes(tmp_path):
    folder = copy_fixture("discriminator", tmp_path)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "hidden_size": 64}))
    with pytest.raises(CheckpointMismatchError,
                       match=r"shape mismatch .*electra\.embeddings_project\.weight: \(32, 16\) vs \(64, 16\)"):
        ElectraDiscriminator.from_pretrained(str(folder))
    (folder / "config.json").write_text(json.dumps({**config, "position_embedding_type": "relative_key"}))
    with pytest.raises(ValueError, match="position_embedding_type='relative_key'"):
        ElectraDiscriminator.from_pretrained(str(folder))


def test_missing_and_unexpected_weights_are_listed_and_can_be_allowed(tmp_path):
    folder = copy_fixture("discriminator", tmp_path)
    state = read_safetensors(str(folder))
    del state["discriminator_predictions.dense.bias"]
    state["junk.weight"] = np.zeros(3, np.float32)
    write_safetensors(str(folder / "model.safetensors"), state)
    with pytest.raises(CheckpointMismatchError) as error:
        ElectraDiscriminator.from_pretrained(str(folder))
    assert "missing" in str(error.value) and "discriminator_predictions.dense.bias" in str(error.value)
    assert "unexpected" in str(error.value) and "junk.weight" in str(error.value)
    with pytest.raises(CheckpointMismatchError, match="unexpected"):
        ElectraDiscriminator.from_pretrained(str(folder), allow_missing=True)
    model = ElectraDiscriminator.from_pretrained(str(folder), allow_missing=True, allow_unexpected=True)
    np.testing.assert_array_equal(model.head.dense.bias, np.zeros(32))  # left as initialised
    np.testing.assert_array_equal(model.head.dense.kernel, state["discriminator_predictions.dense.weight"].T)


def test_a_failed_load_leaves_the_model_as_it_was():
    checkpoint = hf.read_folder(str(FIXTURES / "discriminator"))
    model = ElectraDiscriminator(checkpoint.config)
    before = [np.array(v) for v in model.weights]
    state = dict(checkpoint.state)
    state["electra.encoder.layer.1.output.dense.weight"] = np.zeros((32, 47), np.float32)  # the last layer's
    with pytest.raises(CheckpointMismatchError, match=r"layer\.1\.output\.dense\.weight: \(32, 47\) vs \(32, 48\)"):
        load_state(model, state, checkpoint.architecture)
    for a, b in zip(model.weights, before, strict=True):
        np.testing.assert_array_equal(np.asarray(a), b)


def test_folders_without_a_usable_checkpoint_give_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="no pre-trained ELECTRA here"):
        ElectraModel.from_pretrained(str(tmp_path))
    # pytorch_model.bin is a pickle: never opened, the error tells the conversion.
    folder = tmp_path / "torch_only"
    folder.mkdir()
    shutil.copyfile(FIXTURES / "discriminator" / "config.json", folder / "config.json")
    (folder / "pytorch_model.bin").write_bytes(b"not a pickle: unpickling this would fail differently")
    conversion = r"(?s)never unpickles.*ElectraForPreTraining\.from_pretrained.*save_pretrained"
    with pytest.raises(ValueError, match=conversion):
        ElectraDiscriminator.from_pretrained(str(folder))
    truncated = copy_fixture("generator", tmp_path)
    size = (truncated / "model.safetensors").stat().st_size
    with open(truncated / "model.safetensors", "r+b") as f:
        f.truncate(size // 2)
    with pytest.raises(ValueError, match=f"truncated or corrupt safetensors file .* promises {size} bytes"):
        ElectraGenerator.from_pretrained(str(truncated))
    (folder / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    with pytest.raises(ValueError, match="model_type 'gpt2' is not supported"):
        ElectraModel.from_pretrained(str(folder))


def test_older_layouts_load_too(tmp_path):
    """`bert.`-prefixed keys with LayerNorm gamma/beta and BERT's pre-training heads; sharded safetensors."""
    folder = copy_fixture("bert_model", tmp_path)
    state = read_safetensors(str(folder))
    renamed = {"bert." + key.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta"):
               array for key, array in state.items()}
    renamed["cls.predictions.bias"] = np.zeros(99, np.float32)
    write_safetensors(str(folder / "model.safetensors"), renamed)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "architectures": ["BertForPreTraining"]}))
    model = ElectraModel.from_pretrained(str(folder), output_hidden_states=True)
    assert max(max_differences(model, "bert_model", ElectraModel).values()) < TOLERANCE
    sharded = copy_fixture("discriminator", tmp_path)
    state, names = read_safetensors(str(sharded)), sorted(read_safetensors(str(sharded)))
    shards = {"model-00001-of-00002.safetensors": names[:20], "model-00002-of-00002.safetensors": names[20:]}
    for shard, keys in shards.items():
        write_safetensors(str(sharded / shard), {key: state[key] for key in keys})
    os.remove(sharded / "model.safetensors")
    weight_map = {key: shard for shard, keys in shards.items() for key in keys}
    (sharded / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    model = ElectraDiscriminator.from_pretrained(str(sharded), output_hidden_states=True)
    assert max(max_differences(model, "discriminator", ElectraDiscriminator).values()) < TOLERANCE


def test_run_folders_written_before_run_config_json_load_too(tmp_path):
    """Our run config was `config.json` (the name of a Hugging Face folder's config) before `run_config.json`."""
    ours = str(tmp_path / "ours")
    convert(str(FIXTURES / "discriminator"), ours, to="ours", input_generator=str(FIXTURES / "generator"))
    os.rename(os.path.join(ours, "run_config.json"), os.path.join(ours, "config.json"))
    discriminator = ElectraDiscriminator.from_pretrained(ours)
    assert max(max_differences(discriminator, "discriminator", ElectraDiscriminator).values()) < TOLERANCE
    assert read_config(ours) == discriminator.config == ElectraConfig.from_pretrained(ours)
    prefix = convert(ours, str(tmp_path / "google" / "model.ckpt"), to="google")[0]
    values = json.loads((tmp_path / "google" / "run_config.json").read_text())
    values["pretraining"]["mask_prob"] = 0.2  # (what no shape says)
    (tmp_path / "google" / "config.json").write_text(json.dumps(values))
    os.remove(tmp_path / "google" / "run_config.json")
    assert google.read_checkpoint(prefix).pretraining.mask_prob == 0.2


# === Google TF1 checkpoints ===

@pytest.fixture(scope="module")
def google_checkpoint(tmp_path_factory):
    """The discriminator and generator fixtures under the original names, with optimizer slots and a step."""
    discriminator = hf.read_folder(str(FIXTURES / "discriminator"))
    generator = hf.read_folder(str(FIXTURES / "generator"))
    prefix = str(tmp_path_factory.mktemp("google") / "model.ckpt-7")
    kernel = "electra/encoder/layer_0/output/dense/kernel"
    extra = {"global_step": np.int64(7), f"{kernel}/adam_m": np.zeros((48, 32), np.float32),
             f"{kernel}/adam_v": np.zeros((48, 32), np.float32)}
    google.write_checkpoint(prefix, discriminator.state, generator.state, tied=True, extra=extra,
                            run_config=(discriminator.config, PretrainingConfig(generator_hidden_size=0.5)))
    shutil.copyfile(FIXTURES / "discriminator" / "vocab.txt", os.path.join(os.path.dirname(prefix), "vocab.txt"))
    return prefix


def test_google_checkpoints_load_with_parity(google_checkpoint):
    names = dict(tf.train.list_variables(google_checkpoint))
    assert names["electra/embeddings/word_embeddings"] == [99, 16]  # shared: written once
    assert not any(name.startswith("generator/embeddings/") for name in names)
    assert names["discriminator_predictions/dense_1/kernel"] == [32, 1]
    assert names["generator_predictions/output_bias"] == [99] and "global_step" in names
    for name, cls in (("discriminator", ElectraDiscriminator), ("generator", ElectraGenerator)):
        model = cls.from_pretrained(google_checkpoint, output_hidden_states=True)
        differences = max_differences(model, name, cls)
        assert max(differences.values()) < TOLERANCE, (name, differences)
    folder = os.path.dirname(google_checkpoint)  # the folder works too (its `checkpoint` file)
    encoder = ElectraModel.from_pretrained(folder, output_hidden_states=True)
    assert max(max_differences(encoder, "discriminator", ElectraModel).values()) < TOLERANCE
    assert ElectraTokenizer.from_pretrained(google_checkpoint).vocabulary_size() == 99


def test_google_variables_of_neither_network_are_unexpected(google_checkpoint, tmp_path):
    checkpoint = google.read_checkpoint(google_checkpoint)
    prefix = str(tmp_path / "model.ckpt")
    google.write_checkpoint(prefix, checkpoint.discriminator, checkpoint.generator,
                            extra={"task_specific/rte/kernel": np.zeros((32, 2), np.float32)},
                            run_config=(checkpoint.config, checkpoint.pretraining))
    with pytest.raises(CheckpointMismatchError, match=r"unexpected.*task_specific/rte/kernel"):
        ElectraDiscriminator.from_pretrained(prefix)
    ElectraDiscriminator.from_pretrained(prefix, allow_unexpected=True)


def test_a_pretrainer_restores_both_networks_and_writes_them_back(google_checkpoint, tmp_path):
    discriminator = hf.read_folder(str(FIXTURES / "discriminator"))
    pretraining = PretrainingConfig(generator_hidden_size=0.5, max_seq_length=9)
    pretrainer = ElectraPretrainer(discriminator.config, pretraining, 4, [0, 2, 3, 4])
    load_pretrainer_weights(pretrainer, google_checkpoint)
    for name, network in (("discriminator", pretrainer.discriminator), ("generator", pretrainer.generator)):
        io = io_of(name)
        logits = network(inputs_of(io, type(network)))["logits"]
        assert np.max(np.abs(np.asarray(logits) - io["logits"])) < TOLERANCE, name
    prefix = str(tmp_path / "again" / "model.ckpt")
    save_google(prefix, pretrainer.discriminator, pretrainer.generator, pretraining)
    original, written = google.read_checkpoint(google_checkpoint), google.read_checkpoint(prefix)
    for part in ("discriminator", "generator"):
        a, b = getattr(original, part), getattr(written, part)
        assert sorted(a) == sorted(b)
        for key in a:
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    # A checkpoint whose generator does not fit leaves the whole pre-trainer untouched.
    other = ElectraPretrainer(discriminator.config, pretraining.replace(generator_hidden_size=0.25), 4, [0, 2, 3, 4])
    before = [np.array(v) for v in other.weights]
    with pytest.raises(ValueError, match="generator has another model config"):
        load_pretrainer_weights(other, google_checkpoint)
    for a, b in zip(other.weights, before, strict=True):
        np.testing.assert_array_equal(np.asarray(a), b)


def test_a_google_prefix_is_written_whole_beside_the_folders_other_files(tmp_path, monkeypatch):
    discriminator = hf.read_folder(str(FIXTURES / "discriminator"))
    folder, run_config = tmp_path / "google", (discriminator.config, PretrainingConfig())
    for name in ("other.ckpt", "model.ckpt"):
        google.write_checkpoint(str(folder / name), discriminator.state, run_config=run_config)
    (folder / "model.ckpt.meta").write_bytes(b"the old prefix's graph")
    (folder / "notes.txt").write_text("mine\n")

    def contents():  # hidden files too: a temporary folder left behind would show
        return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in folder.iterdir()}

    before = contents()
    changed = {key: array + 1 for key, array in discriminator.state.items()}

    def interrupted(*args):  # midway: the tensors are written, run_config.json is not
        raise KeyboardInterrupt

    monkeypatch.setattr(google, "save_run_config", interrupted)
    with pytest.raises(KeyboardInterrupt):
        google.write_checkpoint(str(folder / "model.ckpt"), changed, run_config=run_config)
    assert contents() == before
    monkeypatch.undo()
    google.write_checkpoint(str(folder / "model.ckpt"), changed, run_config=run_config)
    after = contents()
    assert set(after) == set(before) - {"model.ckpt.meta"}  # the replaced prefix's stale file went with it
    kept = [name for name in before if name.startswith(("other.ckpt", "notes.txt"))]
    assert len(kept) == 3 and all(after[name] == before[name] for name in kept)
    written = google.read_checkpoint(str(folder / "model.ckpt")).discriminator
    assert sorted(written) == sorted(changed)
    for key, array in changed.items():
        np.testing.assert_array_equal(written[key], array, err_msg=key)


def test_a_released_style_checkpoint_with_a_full_size_generator_loads_from_its_shapes(tmp_path):
    """As the released ELECTRA-Small: no config beside it, a generator as wide as the discriminator."""
    config = ElectraConfig(vocab_size=40, embedding_size=16, hidden_size=128, num_layers=1, num_heads=2,
                           intermediate_size=64, max_position_embeddings=16)
    pretraining = PretrainingConfig(generator_hidden_size=1.0, max_seq_length=8)
    pretrainer = ElectraPretrainer(config, pretraining, 4, [0, 2, 3, 4])
    prefix = str(tmp_path / "electra_small" / "model.ckpt-1000000")
    save_google(prefix, pretrainer.discriminator, pretrainer.generator, pretraining)
    os.remove(tmp_path / "electra_small" / "run_config.json")
    inferred, inferred_pretraining = google.infer_configs(dict(tf.train.list_variables(prefix)))
    assert inferred_pretraining.generator_hidden_size == 1.0
    assert inferred.num_heads == 2 and inferred.replace(hidden_dropout=0.1) == config  # 64-wide heads
    fresh = ElectraPretrainer(config, pretraining, 4, [0, 2, 3, 4])
    load_pretrainer_weights(fresh, prefix)
    for a, b in zip(fresh.weights, pretrainer.weights, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


# === The converter and continued pre-training ===

def test_convert_a_huggingface_pair_through_every_format(tmp_path):
    ours = str(tmp_path / "ours")
    convert(str(FIXTURES / "discriminator"), ours, to="ours", input_generator=str(FIXTURES / "generator"))
    assert {"run_config.json", "discriminator.keras", "generator.keras", "vocab.txt"} <= set(os.listdir(ours))
    assert json.loads(Path(ours, "run_config.json").read_text())["pretraining"]["generator_hidden_size"] == 0.5
    discriminator = ElectraDiscriminator.from_pretrained(ours)
    assert max(max_differences(discriminator, "discriminator", ElectraDiscriminator).values()) < TOLERANCE
    generator = ElectraGenerator.from_pretrained(ours)
    assert max(max_differences(generator, "generator", ElectraGenerator).values()) < TOLERANCE
    convert(ours, str(tmp_path / "google" / "model.ckpt"), to="google")
    convert(str(tmp_path / "google"), str(tmp_path / "hf"), to="huggingface", networks="both")
    for name in ("discriminator", "generator"):
        back, original = read_safetensors(str(tmp_path / "hf" / name)), read_safetensors(str(FIXTURES / name))
        assert sorted(back) == sorted(original)
        for key in original:
            np.testing.assert_array_equal(back[key], original[key], err_msg=key)
    vocab = (FIXTURES / "generator" / "vocab.txt").read_text()
    assert (tmp_path / "hf" / "generator" / "vocab.txt").read_text() == vocab
    task = str(tmp_path / "task")
    convert(str(FIXTURES / "question_answering"), task, to="ours")
    model = ElectraForQuestionAnswering.from_pretrained(task)
    assert max(max_differences(model, "question_answering", ElectraForQuestionAnswering).values()) < TOLERANCE
    with pytest.raises(ValueError, match="Google format holds pre-training networks"):
        convert(task, str(tmp_path / "nowhere"), to="google")


def test_the_tools_convert_and_continue_pretraining_from_a_converted_model(tmp_path, run_tool):
    converted = tmp_path / "converted"
    code, _, err = run_tool("convert_checkpoint", f"--input={FIXTURES / 'discriminator'}",
                            f"--input_generator={FIXTURES / 'generator'}", "--to=ours", f"--output={converted}")
    assert code in (0, None), err[-3000:]
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(f"hello world {i} (tiny) text.\nmore words here!\n\n" for i in range(40)))
    code, out, err = run_tool(
        "run_pretraining", f"--config={converted / 'run_config.json'}", f"--vocab_file={converted / 'vocab.txt'}",
        f"--train_text_files={corpus}", f"--model_dir={tmp_path / 'run'}", f"--init_checkpoint={converted}",
        "--max_seq_length=16", "--batch_size=4", "--train_steps=1", "--warmup_steps=1", "--save_every=1",
        "--log_every=1", "--eval_every=1")
    assert code in (0, None), err[-3000:]
    assert f"initialised from {converted}" in out and "done: step 1 of 1" in out
    code, _, err = run_tool("convert_checkpoint", f"--input={tmp_path}", "--to=huggingface",
                            f"--output={tmp_path / 'out'}")
    assert code == 2 and "no pre-trained ELECTRA here" in err


@pytest.mark.parametrize("damage, message", [
    (lambda w: (w * 1000).astype(np.int8), r"word_embeddings\.weight is stored as int8 but the model holds float32"),
    (lambda w: np.where(np.arange(w.size).reshape(w.shape) == 7, np.nan, w).astype(np.float32),
     r"word_embeddings\.weight holds 1 NaN or infinite value\(s\) of \d+: the checkpoint is damaged"),
])
def test_float_weights_stored_as_integers_or_holding_nan_are_refused(tmp_path, damage, message):
    folder = copy_fixture("discriminator", tmp_path)
    state = read_safetensors(str(folder))
    key = "electra.embeddings.word_embeddings.weight"
    state[key] = damage(state[key])
    write_safetensors(str(folder / "model.safetensors"), state)
    with pytest.raises(CheckpointMismatchError, match=f"{folder} \\(huggingface\\): electra\\.embeddings\\.{message}"):
        ElectraDiscriminator.from_pretrained(str(folder))


def test_a_model_folder_whose_files_disagree_is_refused(tmp_path, tiny_config, run_tool, refused):
    folder = tmp_path / "classifier"
    classifier = ElectraForSequenceClassification(tiny_config, num_labels=3, head="original")  # saved as model.keras
    classifier.save_pretrained(str(folder), label_names=["no", "maybe", "yes"])
    assert ElectraForSequenceClassification.from_pretrained(str(folder)).num_labels == 3
    info = json.loads((folder / "electra_tf.json").read_text())
    keras_file = shutil.copyfile(folder / "model.keras", tmp_path / "classifier.keras")

    ElectraDiscriminator(tiny_config).save(str(folder / "model.keras"))
    wrong_class = (f"{folder}/electra_tf.json says the folder holds a ElectraForSequenceClassification, but "
                   f"{folder}/model.keras is a ElectraDiscriminator: the model file was replaced")
    with pytest.raises(ValueError, match=wrong_class):
        ElectraForSequenceClassification.from_pretrained(str(folder))
    refused(run_tool("export_model", f"--model={folder}", f"--export_dir={tmp_path / 'exports'}"), wrong_class)

    shutil.copyfile(keras_file, folder / "model.keras")
    for names, message in ((["no", "yes"], "2 label_names for the 3 labels of"),
                           (["no", "maybe", "yes", "what"], "4 label_names for the 3 labels of"),
                           (["no", "yes", "no"], r"duplicate label_names \['no'\]; each label needs its own name")):
        (folder / "electra_tf.json").write_text(json.dumps({**info, "label_names": names}))
        with pytest.raises(ValueError, match=f"{folder}/electra_tf.json: {message}"):
            ElectraForSequenceClassification.from_pretrained(str(folder))
    refused(run_tool("export_model", f"--model={folder}", f"--export_dir={tmp_path / 'exports'}"),
            f"{folder}/electra_tf.json: duplicate label_names ['no']")
    assert not (tmp_path / "exports").exists()


def test_a_hugging_face_folder_whose_electra_tf_json_contradicts_its_config_is_refused(tmp_path, tiny_config):
    """A folder transformers reads (config.json with id2label, model.safetensors) whose electra_tf.json lists 2 or 4
    label names for its 3 labels, a name twice, or other names than config.json's, is refused, not overridden."""
    folder = tmp_path / "classifier"
    ElectraForSequenceClassification(tiny_config, num_labels=3).save_pretrained(
        str(folder), label_names=["no", "maybe", "yes"])
    assert (folder / "config.json").exists() and not (folder / "model.keras").exists()
    info = json.loads((folder / "electra_tf.json").read_text())
    for names, message in ((["no", "yes"], "2 label_names for the 3 labels of"),
                           (["no", "maybe", "yes", "what"], "4 label_names for the 3 labels of"),
                           (["no", "yes", "no"], r"duplicate label_names \['no'\]"),
                           (["yes", "maybe", "no"], r"names the labels \['yes', 'maybe', 'no'\] but "
                                                    rf"{folder}/config.json names them \['no', 'maybe', 'yes'\] "
                                                    r"\(id2label\): one was edited")):
        (folder / "electra_tf.json").write_text(json.dumps({**info, "label_names": names}))
        with pytest.raises(ValueError, match=f"^{folder}/electra_tf.json:? {message}"):
            ElectraForSequenceClassification.from_pretrained(str(folder))


def test_a_metadata_field_of_another_json_type_is_refused_naming_it(tmp_path, tiny_config, run_tool, refused):
    """`"max_seq_length": "64"` (a string) in electra_tf.json is one line naming the file and the field, from
    `from_pretrained`, the pipeline and `electra-export` alike, not a TypeError; so is every typed field."""
    folder = tmp_path / "classifier"
    ElectraForSequenceClassification(tiny_config, num_labels=2, head="original").save_pretrained(
        str(folder), label_names=["no", "yes"], max_seq_length=64, text_pair=False)
    info = json.loads((folder / "electra_tf.json").read_text())
    for field, value, wanted in (("max_seq_length", "64", "an integer, got '64' (a string); write it as 64"),
                                 ("max_seq_length", 64.5, "an integer, got 64.5 (a number); correct it"),
                                 ("text_pair", "false", "a boolean, got 'false' (a string); write it as false"),
                                 ("label_names", "no,yes", "a list, got 'no,yes' (a string); correct it")):
        (folder / "electra_tf.json").write_text(json.dumps({**info, field: value}))
        message = f"{folder}/electra_tf.json: {field} must be {wanted}, or save the folder again"
        with pytest.raises(ValueError) as raised:
            ElectraForSequenceClassification.from_pretrained(str(folder))
        assert str(raised.value) == message
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        pipeline("text-classification", str(folder))
    refused(run_tool("export_model", f"--model={folder}", f"--export_dir={tmp_path / 'exports'}"), message)
    assert not (tmp_path / "exports").exists()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_weights_are_said_to_load_as_float32_and_can_go_back_as_they_were(tmp_path, caplog, dtype):
    folder = copy_fixture("discriminator", tmp_path)
    write_safetensors(str(folder / "model.safetensors"), read_safetensors(str(folder)), float_dtype=dtype)
    with caplog.at_level(logging.WARNING, logger="electra_tf"):
        convert(str(folder), str(tmp_path / "ours"), to="ours")
    assert f"{folder}: weights stored as {dtype} are loaded as float32" in caplog.text
    assert f"--dtype={dtype}" in caplog.text
    convert(str(tmp_path / "ours"), str(tmp_path / "back"), to="huggingface", dtype=dtype)
    convert(str(tmp_path / "ours"), str(tmp_path / "float32"), to="huggingface")
    assert stored_float_dtype(str(tmp_path / "back")) == dtype
    assert stored_float_dtype(str(tmp_path / "float32")) == "float32"
    assert json.loads((tmp_path / "back" / "config.json").read_text())["dtype"] == dtype
    original, back = read_safetensors(str(folder)), read_safetensors(str(tmp_path / "back"))
    for key in original:  # the same half-precision values, bit for bit
        np.testing.assert_array_equal(back[key], original[key], err_msg=key)
    size = (tmp_path / "back" / "model.safetensors").stat().st_size
    assert size < 0.6 * (tmp_path / "float32" / "model.safetensors").stat().st_size
    # Written with the mode of every other file (0644 under the usual umask), not 0600.
    modes = {path.name: path.stat().st_mode & 0o777 for path in (tmp_path / "back").iterdir()}
    assert len(set(modes.values())) == 1, modes
