"""Hugging Face hub ids wherever a checkpoint path is taken, without a network.

`tests/fixtures/hf_cache` is a Hugging Face cache as `huggingface_hub` writes it (tools/make_hf_hub_fixtures.py):
tiny random models under real ids, and transformers' outputs on fixed texts beside it
(`tests/fixtures/hf_cache_outputs`). The tests point `HF_HOME` at a copy, offline; the download path runs against
a loopback hub (tools/local_hub.py) into an empty cache.
"""

import json
import os
import shutil
import time
from pathlib import Path

import huggingface_hub
import numpy as np
import pytest

from electra_tf import (
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
    pipeline,
)
from electra_tf.checkpoints import hub
from electra_tf.checkpoints.hub import resolve
from electra_tf.checkpoints.safetensors_io import read_safetensors
from electra_tf.tools.local_hub import LocalHub

FIXTURES = Path(__file__).parents[1] / "fixtures"
OUTPUTS = np.load(FIXTURES / "hf_cache_outputs" / "outputs.npz")
TOLERANCE = 1e-4
DISCRIMINATOR, GENERATOR = "google/electra-small-discriminator", "google/electra-small-generator"
CHINESE_DISCRIMINATOR = "hfl/chinese-electra-180g-small-discriminator"
CHINESE_GENERATOR = "hfl/chinese-electra-180g-small-generator"
PICKLE_ONLY = "legacy-user/electra-small-pytorch-only"
# repo id: (our class, constructor arguments)
MODELS = {
    DISCRIMINATOR: (ElectraForPreTraining, {}),
    GENERATOR: (ElectraForMaskedLM, {}),
    "bhadresh-savani/electra-base-emotion": (ElectraForSequenceClassification, {}),
    "dbmdz/electra-large-discriminator-finetuned-conll03-english": (ElectraForTokenClassification, {}),
    "deepset/electra-base-squad2": (ElectraForQuestionAnswering, {}),
    "LIAMF-USP/electra-small-swag": (ElectraForMultipleChoice, {"num_choices": 2}),
    CHINESE_DISCRIMINATOR: (ElectraForPreTraining, {}),
    CHINESE_GENERATOR: (ElectraForMaskedLM, {}),
}
FEATURES = ("input_ids", "attention_mask", "token_type_ids")
LABELS = ("labels", "start_positions", "end_positions")
HEAD_OUTPUTS = ("logits", "start_logits", "end_logits")


@pytest.fixture(scope="module")
def cache_copy(tmp_path_factory):
    return shutil.copytree(FIXTURES / "hf_cache", tmp_path_factory.mktemp("hf") / "home", symlinks=True)


@pytest.fixture
def hf_home(cache_copy, monkeypatch):
    """HF_HOME at a copy of the fixture cache, offline."""
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_ENDPOINT", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HOME", str(cache_copy))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return Path(cache_copy)


def snapshot(home, repo_id):
    folder = Path(home) / "hub" / f"models--{repo_id.replace('/', '--')}"
    return folder / "snapshots" / (folder / "refs" / "main").read_text()


def cases_of(repo_id):
    names = {key.split("/")[2] for key in OUTPUTS if key.startswith(repo_id + "/")}
    return {case: {key[len(f"{repo_id}/{case}/"):]: OUTPUTS[key] for key in OUTPUTS
                   if key.startswith(f"{repo_id}/{case}/")} for case in sorted(names)}


def features_of(case, cls):
    features = {name: case[name] for name in FEATURES}
    if issubclass(cls, ElectraGenerator):  # transformers scores every position
        features["mask_positions"] = np.broadcast_to(np.arange(case["input_ids"].shape[-1], dtype=np.int32),
                                                     case["input_ids"].shape).copy()
    return features


def stacked(hidden_states):
    """`[batch, layers + 1, sequence, hidden]`, as the fixture stores them, from a tuple of layers or an array."""
    return np.stack([np.asarray(h) for h in hidden_states], axis=1) if isinstance(hidden_states, (tuple, list)) \
        else np.asarray(hidden_states)


# === Resolving an id ===

def test_an_id_resolves_to_its_cached_snapshot_offline(hf_home):
    folder = resolve(DISCRIMINATOR)
    assert Path(folder) == snapshot(hf_home, DISCRIMINATOR)
    assert {"config.json", "model.safetensors", "vocab.txt"} <= set(os.listdir(folder))
    assert resolve(DISCRIMINATOR, revision=snapshot(hf_home, DISCRIMINATOR).name) == folder  # a commit


def test_the_cache_is_hf_hub_cache_else_hf_home_or_cache_dir_read_at_each_call(hf_home, tmp_path, monkeypatch):
    expected = snapshot(hf_home, DISCRIMINATOR)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "elsewhere"))
    with pytest.raises(FileNotFoundError, match=f"not in the Hugging Face cache {tmp_path / 'elsewhere' / 'hub'} "):
        resolve(DISCRIMINATOR)
    assert Path(resolve(DISCRIMINATOR, cache_dir=hf_home / "hub")) == expected
    monkeypatch.setenv("HF_HUB_CACHE", str(hf_home / "hub"))  # before HF_HOME
    assert Path(resolve(DISCRIMINATOR)) == expected


def test_an_existing_folder_named_like_an_id_wins(hf_home, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copytree(FIXTURES / "hf" / "discriminator", tmp_path / "google" / "electra-small-discriminator")
    assert resolve(DISCRIMINATOR) == DISCRIMINATOR
    model = ElectraDiscriminator.from_pretrained(DISCRIMINATOR)
    assert model.config.vocab_size == 99  # the local folder's model, not the cached one (1,418 tokens)


def test_offline_and_not_cached_is_one_line_with_the_way_out(hf_home, monkeypatch):
    with pytest.raises(FileNotFoundError) as error:
        ElectraDiscriminator.from_pretrained("google/electra-large-discriminator")
    message = str(error.value)
    assert "\n" not in message and message.startswith("google/electra-large-discriminator: no such file or folder")
    assert f"not in the Hugging Face cache {hf_home / 'hub'}" in message
    assert "`hf download google/electra-large-discriminator`" in message and "unset HF_HUB_OFFLINE" in message
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")  # local_files_only=True alone keeps to the cache too
    with pytest.raises(FileNotFoundError, match="google/electra-large-discriminator: no such file or folder"):
        ElectraTokenizer.from_pretrained("google/electra-large-discriminator", local_files_only=True)


def test_a_repository_with_only_pytorch_model_bin_is_refused_in_one_line(hf_home):
    assert "pytorch_model.bin" in os.listdir(snapshot(hf_home, PICKLE_ONLY))
    with pytest.raises(ValueError) as error:
        ElectraForPreTraining.from_pretrained(PICKLE_ONLY, from_pt=True)
    message = str(error.value)
    assert "\n" not in message and message.startswith(f"{PICKLE_ONLY}: the repository holds only pytorch_model.bin")
    assert "never unpickles" in message and "save_pretrained('<folder>', safe_serialization=True)" in message


def test_paths_that_are_no_ids_are_left_to_the_readers(hf_home):
    for path in ("/no/such/folder", "no/such/folder", "a--b"):
        assert resolve(path) == path
    with pytest.raises(FileNotFoundError, match="no/such/folder: does not exist"):
        ElectraModel.from_pretrained("no/such/folder")


# === Parity with transformers, from the cache ===

@pytest.mark.parametrize("repo_id", list(MODELS))
def test_every_class_loads_its_id_from_the_cache_with_transformers_outputs(hf_home, repo_id):
    cls, arguments = MODELS[repo_id]
    model = cls.from_pretrained(repo_id, **arguments)
    # Every layer's hidden states, whatever the class (a task head's weights are not the encoder's).
    encoder = ElectraModel.from_pretrained(repo_id, output_hidden_states=True, allow_unexpected=True)
    differences = {}
    for name, case in cases_of(repo_id).items():
        outputs = model(features_of(case, cls))
        for key in HEAD_OUTPUTS:
            if key in case:
                differences[f"{name}/{key}"] = float(np.max(np.abs(np.asarray(outputs[key]) - case[key])))
        flat = {key: case[key].reshape(-1, case[key].shape[-1]) for key in FEATURES}  # (multiple choice's too)
        hidden = stacked(encoder(flat)["hidden_states"]).reshape(case["hidden_states"].shape)
        differences[f"{name}/hidden_states"] = float(np.max(np.abs(hidden - case["hidden_states"])))
    assert {key.split("/")[1] for key in differences} & set(HEAD_OUTPUTS), differences
    assert max(differences.values()) < TOLERANCE, differences


@pytest.mark.parametrize("repo_id", list(MODELS))
def test_losses_with_labels_equal_transformers(hf_home, repo_id):
    cls, arguments = MODELS[repo_id]
    model = cls.from_pretrained(repo_id, **arguments)
    for name, case in cases_of(repo_id).items():
        labels = {key: case[key] for key in LABELS if key in case}
        outputs = model(**features_of(case, cls), **labels)
        loss = float(np.mean(outputs.loss))  # (transformers' TF shapes: per example or [1]; their mean is PyTorch's)
        assert abs(loss - float(case["loss"])) < TOLERANCE, (name, loss, case["loss"])


def test_the_label_names_come_with_the_model(hf_home):
    model = ElectraForSequenceClassification.from_pretrained("bhadresh-savani/electra-base-emotion")
    assert list(model.label_names) == ["sadness", "joy", "love", "anger", "fear", "surprise"]
    tagger = ElectraForTokenClassification.from_pretrained(
        "dbmdz/electra-large-discriminator-finetuned-conll03-english")
    assert list(tagger.label_names[:3]) == ["O", "B-MISC", "I-MISC"]


@pytest.mark.parametrize("repo_id, case", [(DISCRIMINATOR, "text"), (DISCRIMINATOR, "batch"),
                                           (CHINESE_DISCRIMINATOR, "text"), (CHINESE_DISCRIMINATOR, "batch")])
def test_the_tokenizer_of_an_id_gives_transformers_ids(hf_home, repo_id, case):
    texts = json.loads((FIXTURES / "hf_cache_outputs" / "README.json").read_text(encoding="utf-8"))["texts"]
    texts = {"text": [texts["english"]], "batch": texts["batch"]} if repo_id == DISCRIMINATOR else \
        {"text": texts["chinese"][:1], "batch": texts["chinese"]}
    tokenizer = ElectraTokenizer.from_pretrained(repo_id)
    expected = cases_of(repo_id)[case]
    for row, text in enumerate(texts[case]):
        ids = tokenizer.encode(text, add_special_tokens=False)
        real = expected["input_ids"][row][expected["attention_mask"][row] == 1]
        assert [tokenizer.vocabulary.index("[CLS]"), *ids, tokenizer.vocabulary.index("[SEP]")] == real.tolist()


def test_the_chinese_vocabulary_keeps_its_u2028_token_at_its_id(hf_home):
    lines = (snapshot(hf_home, CHINESE_DISCRIMINATOR) / "vocab.txt").read_text(encoding="utf-8").split("\n")
    tokenizer = ElectraTokenizer.from_pretrained(CHINESE_DISCRIMINATOR)
    assert tokenizer.vocabulary.index("\u2028") == lines.index("\u2028")
    assert len(tokenizer.vocabulary) == len(lines) - 1 == 618


def test_a_pipeline_takes_an_id(hf_home):
    classify = pipeline("text-classification", "bhadresh-savani/electra-base-emotion")
    result = classify(["I love this library!"])[0]
    assert result["label"] in ("sadness", "joy", "love", "anger", "fear", "surprise")


# === Downloading ===

def served(folder, target, extra=()):
    """A copy of a cached snapshot (links followed) with `extra` files, to serve as a hub repository."""
    shutil.copytree(folder, target)
    for name in extra:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_bytes(b"not read")
    return target


def test_an_id_downloads_what_we_read_into_an_empty_cache(tmp_path, monkeypatch, tiny_pretrained_dir):
    fixture = FIXTURES / "hf_cache"
    repositories = {
        "me/electra-tiny": tiny_pretrained_dir,  # our own pre-training folder, pushed as it is
        "me/gated": tiny_pretrained_dir,
        "me/tokenizer-only": served(snapshot(fixture, DISCRIMINATOR), tmp_path / "served" / "tokenizer"),
        DISCRIMINATOR: served(snapshot(fixture, DISCRIMINATOR), tmp_path / "served" / "discriminator",
                              ("tf_model.h5", "pytorch_model.bin", "README.md", "onnx/model.onnx")),
        PICKLE_ONLY: served(snapshot(fixture, PICKLE_ONLY), tmp_path / "served" / "pickle"),
        "someone/tf-only": served(snapshot(fixture, DISCRIMINATOR), tmp_path / "served" / "tf", ("tf_model.h5",)),
    }
    (repositories["someone/tf-only"] / "model.safetensors").unlink()
    (repositories["me/tokenizer-only"] / "model.safetensors").unlink()
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)  # (read at its import: tests/conftest.py)
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    with LocalHub(repositories, gated={"me/gated"}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        assert ElectraTokenizer.from_pretrained(DISCRIMINATOR).vocabulary_size() == 1418
        assert not [path for method, path, _ in hub.requests if method == "GET" and path.endswith(".safetensors")]
        folder = resolve(DISCRIMINATOR)
        assert folder.startswith(str(tmp_path / "empty" / "hub" / "models--google--electra-small-discriminator"))
        assert sorted(os.listdir(folder)) == ["config.json", "model.safetensors", "tokenizer.json",
                                              "tokenizer_config.json", "vocab.txt"]
        model = ElectraDiscriminator.from_pretrained(DISCRIMINATOR)
        case = cases_of(DISCRIMINATOR)["text"]
        np.testing.assert_allclose(np.asarray(model({name: case[name] for name in FEATURES})["logits"]),
                                   case["logits"], atol=TOLERANCE)
        assert "tf_model.h5" in os.listdir(resolve("someone/tf-only"))  # only when there are no safetensors
        ours = ElectraDiscriminator.from_pretrained("me/electra-tiny")
        for a, b in zip(ours.weights, ElectraDiscriminator.from_pretrained(tiny_pretrained_dir).weights, strict=True):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        assert ElectraTokenizer.from_pretrained("me/tokenizer-only").vocabulary_size() == 1418
        with pytest.raises(ValueError, match="^me/tokenizer-only: the repository holds no weights electra_tf reads "
                                             r"\(.*\); its files: config.json, tokenizer.json"):
            ElectraModel.from_pretrained("me/tokenizer-only")
        with pytest.raises(ValueError, match=f"^{PICKLE_ONLY}: the repository holds only pytorch_model.bin"):
            resolve(PICKLE_ONLY)
        assert not [path for _, path, _ in hub.requests if path.endswith(".bin")]  # refused before any download
        with pytest.raises(FileNotFoundError, match="^google/no-such-model: no such file or folder here, nor a "
                                                    "model repository on the Hugging Face hub"):
            ElectraModel.from_pretrained("google/no-such-model")
        with pytest.raises(FileNotFoundError, match=f"^{DISCRIMINATOR}: the hub has no revision 'v9'"):
            resolve(DISCRIMINATOR, revision="v9")
        with pytest.raises(PermissionError, match="^me/gated: a gated repository; accept its conditions"):
            resolve("me/gated")
        assert "discriminator.keras" in os.listdir(resolve("me/gated", token="hf_secret"))
        del hub.requests[:]
        assert resolve(DISCRIMINATOR, token="hf_secret", force_download=True) == folder  # fetched again, with it
        assert {authorization for method, path, authorization in hub.requests if method == "GET"
                and path.endswith("model.safetensors")} == {"Bearer hf_secret"}
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # cached now: found without the hub
    assert resolve(DISCRIMINATOR) == folder
    assert np.array_equal(read_safetensors(folder)["discriminator_predictions.dense_prediction.bias"],
                          read_safetensors(str(snapshot(fixture, DISCRIMINATOR)))[
                              "discriminator_predictions.dense_prediction.bias"])


class _UnreachableHub:
    """`HfApi` where the network is down: asking for a repository fails as the HTTP client fails."""

    def __init__(self, **kwargs):
        pass

    def model_info(self, repo_id, revision=None):
        raise ConnectionRefusedError(111, "Connection refused")


def test_an_unreachable_hub_falls_back_to_the_cache_or_says_so_in_one_line(hf_home, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(hub, "HfApi", _UnreachableHub)
    assert Path(resolve(DISCRIMINATOR)) == snapshot(hf_home, DISCRIMINATOR)  # cached: used as it is
    with pytest.raises(ConnectionError) as error:
        resolve("google/electra-large-discriminator")
    message = str(error.value)
    assert "\n" not in message and message.startswith("google/electra-large-discriminator: the Hugging Face hub")
    assert f"cannot be reached and the model is not in the cache {hf_home / 'hub'}" in message


def test_a_closed_network_is_answered_at_once_without_retries(hf_home, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # the discard port: the connection is refused
    start = time.monotonic()
    assert Path(resolve(DISCRIMINATOR)) == snapshot(hf_home, DISCRIMINATOR)  # cached: used as it is
    with pytest.raises(ConnectionError, match="^google/electra-large-discriminator: the Hugging Face hub "
                                              r"\(http://127.0.0.1:9\) cannot be reached"):
        resolve("google/electra-large-discriminator")
    assert time.monotonic() - start < 5  # was 24 s of huggingface_hub's retries


def incomplete_cache(tmp_path, monkeypatch, repo_id=DISCRIMINATOR):
    """HF_HOME at a copy of the fixture cache holding `repo_id` alone, offline; returns its snapshot folder."""
    name = f"models--{repo_id.replace('/', '--')}"
    shutil.copytree(FIXTURES / "hf_cache" / "hub" / name, tmp_path / "home" / "hub" / name, symlinks=True)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
    return snapshot(tmp_path / "home", repo_id)


@pytest.mark.parametrize("remove, message", [
    ("config.json", "it holds no config.json beside its weights; fetch it with "
                    f"`hf download {DISCRIMINATOR} config.json`"),
    ("model.safetensors", "it holds no weights (model.safetensors); fetch it with "
                          f"`hf download {DISCRIMINATOR} model.safetensors`"),
    ("blob of vocab.txt", f"vocab.txt is a link to a blob that is not there; fetch it with "
                          f"`hf download {DISCRIMINATOR} vocab.txt`"),
])
def test_an_incomplete_cached_snapshot_names_the_missing_file_and_the_command(hf_home, tmp_path, monkeypatch,
                                                                             remove, message):
    folder = incomplete_cache(tmp_path, monkeypatch)
    (folder / remove).unlink() if not remove.startswith("blob") else (folder / "vocab.txt").resolve().unlink()
    with pytest.raises(FileNotFoundError) as error:
        ElectraModel.from_pretrained(DISCRIMINATOR, allow_unexpected=True)
    assert str(error.value) == f"{DISCRIMINATOR}: the cached snapshot {folder} is incomplete: {message} where " \
                               "there is a network (or unset HF_HUB_OFFLINE to download it)"


def test_a_cached_snapshot_without_a_vocabulary_is_named_for_the_tokenizer(hf_home, tmp_path, monkeypatch):
    folder = incomplete_cache(tmp_path, monkeypatch)
    for name in ("vocab.txt", "tokenizer.json"):
        (folder / name).unlink()
    with pytest.raises(FileNotFoundError, match=f"^{DISCRIMINATOR}: the cached snapshot {folder} is incomplete: "
                                                "it holds no vocabulary \\(vocab.txt\\); fetch it with "
                                                f"`hf download {DISCRIMINATOR} vocab.txt`"):
        ElectraTokenizer.from_pretrained(DISCRIMINATOR)
    ElectraModel.from_pretrained(DISCRIMINATOR, allow_unexpected=True)  # the model needs no vocabulary: loads


def test_a_damaged_cached_weights_file_is_refused_by_its_sha256(hf_home, tmp_path, monkeypatch):
    folder = incomplete_cache(tmp_path, monkeypatch)
    blob = (folder / "model.safetensors").resolve()
    data = bytearray(blob.read_bytes())
    data[-1] ^= 0xFF  # one weight's last byte flipped: the file still parses
    blob.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=f"^{DISCRIMINATOR}: the cached model.safetensors is damaged "
                                         f"\\(its sha256 is [0-9a-f]{{12}}…, the hub's is {blob.name[:12]}…\\); "
                                         f"fetch it again with `hf download {DISCRIMINATOR} model.safetensors "
                                         "--force-download`"):
        ElectraDiscriminator.from_pretrained(DISCRIMINATOR)


def test_local_paths_are_never_sent_to_the_hub(hf_home, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(hub, "HfApi", None)  # any question to the hub would fail
    monkeypatch.chdir(tmp_path)
    (tmp_path / "owner").mkdir()
    os.symlink("loop", tmp_path / "owner" / "loop")  # a link to itself
    os.symlink(tmp_path / "gone", tmp_path / "owner" / "dangling")
    (tmp_path / "runs").mkdir()
    for path in ("owner/loop", "owner/dangling", "runs/missing"):
        assert resolve(path) == path
    with pytest.raises(FileNotFoundError, match="^runs/missing: does not exist"):
        ElectraModel.from_pretrained("runs/missing")


# === The tools' checkpoint flags ===

def test_finetune_takes_an_id_and_refuses_an_unknown_one_before_any_work(hf_home, tmp_path, run_tool, refused):
    train = tmp_path / "train.csv"
    train.write_text("text,label\n" + "".join(f"word {i},{i % 2}\n" for i in range(8)))
    flags = ["--task=text_classification", f"--train_file={train}", f"--output_dir={tmp_path}/out",
             "--batch_size=4", "--max_seq_length=16"]
    refused(run_tool("run_finetuning", *flags, "--init_checkpoint=google/electra-large-discriminator"),
            "google/electra-large-discriminator: no such file or folder, and not in the Hugging Face cache")
    assert not (tmp_path / "out").exists()
    # Accepted: the run gets as far as the trials (a foreign one is refused, after the model's config is read).
    (tmp_path / "out" / "trial_0").mkdir(parents=True)
    (tmp_path / "out" / "trial_0" / "results.json").write_text(json.dumps({"scores": {}, "run": {"config": {}}}))
    refused(run_tool("run_finetuning", *flags, f"--init_checkpoint={DISCRIMINATOR}"),
            f"{tmp_path}/out/trial_0 holds a trial of another run")


@pytest.mark.parametrize("tool, flags", [
    ("run_pretraining", ["--vocab_file={tmp}/vocab.txt", "--model_dir={tmp}/out", "--init_checkpoint={id}"]),
    ("run_pretraining", ["--vocab_file={tmp}/vocab.txt", "--model_dir={tmp}/out", "--generator_type=pretrained",
                         "--generator_checkpoint={id}"]),
    ("export_model", ["--model={id}", "--export_dir={tmp}/out"]),
    ("convert_checkpoint", ["--input={tmp}/vocab.txt", "--input_generator={id}", "--to=ours", "--output={tmp}/out"]),
])
def test_every_tool_refuses_an_unresolvable_id_before_any_work(hf_home, tmp_path, run_tool, refused, tool, flags):
    missing = "google/electra-large-generator"
    refused(run_tool(tool, *[flag.format(tmp=tmp_path, id=missing) for flag in flags]),
            f"{missing}: no such file or folder, and not in the Hugging Face cache {hf_home / 'hub'}")
    assert not (tmp_path / "out").exists()


def test_pretraining_continues_from_hfl_chinese_checkpoints_given_by_id(hf_home, tmp_path, run_tool):
    converted = tmp_path / "hfl_small"
    code, out, err = run_tool("convert_checkpoint", f"--input={CHINESE_DISCRIMINATOR}",
                              f"--input_generator={CHINESE_GENERATOR}", "--to=ours", f"--output={converted}")
    assert code == 0, err[-3000:]
    assert {"discriminator.keras", "generator.keras", "vocab.txt"} <= set(os.listdir(converted))
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join("江泽民主席在北京会见了克林顿。今天天气很好！\n我们去公园吧。\n\n" for _ in range(30)),
                      encoding="utf-8")
    code, out, err = run_tool(
        "run_pretraining", f"--config={converted / 'run_config.json'}", f"--vocab_file={converted / 'vocab.txt'}",
        f"--train_text_files={corpus}", f"--model_dir={tmp_path / 'run'}", f"--init_checkpoint={converted}",
        "--max_seq_length=16", "--batch_size=4", "--train_steps=2", "--warmup_steps=1", "--save_every=2",
        "--log_every=1", "--eval_every=2")
    assert code == 0, err[-3000:]
    assert f"initialised from {converted}" in out and "done: step 2 of 2" in out
    discriminator = ElectraDiscriminator.from_pretrained(str(tmp_path / "run"))
    start = read_safetensors(str(snapshot(hf_home, CHINESE_DISCRIMINATOR)))
    table = np.asarray(discriminator.backbone.embedding.word_embeddings.embeddings)
    assert table.shape == start["electra.embeddings.word_embeddings.weight"].shape
    assert 0 < np.max(np.abs(table - start["electra.embeddings.word_embeddings.weight"])) < 0.1  # trained on
