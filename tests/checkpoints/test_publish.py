"""Model cards and pushing to the hub: `push_to_hub`, `PushToHubCallback`, without a network.

Pushes land on the loopback hub (tools/local_hub.py), which serves them back through the routes
`huggingface_hub` downloads from: what is pushed is read back as a user would, by id.
"""

import os
import re

import huggingface_hub
import keras
import numpy as np
import pytest

from electra_tf import ElectraDiscriminator, ElectraForSequenceClassification, ElectraTokenizer
from electra_tf.checkpoints.hub import resolve
from electra_tf.checkpoints.model_card import write_model_card
from electra_tf.checkpoints.publish import push_to_hub
from electra_tf.tools.local_hub import LocalHub
from electra_tf.training.hub_callback import PushToHubCallback
from electra_tf.version import __version__


@pytest.fixture
def online(tmp_path, monkeypatch):
    """An empty cache, online, with the xet transfer off (the loopback hub speaks the hub's git routes)."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)  # (read at its import)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_DISABLE_XET", True)
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_TOKEN", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    with LocalHub({}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        yield hub


def served_card(repo_id, token=None, revision=None):
    """The model card the hub serves for `repo_id` (its README.md, downloaded from `HF_ENDPOINT`)."""
    return huggingface_hub.ModelCard.load(huggingface_hub.hf_hub_download(
        repo_id, "README.md", revision=revision, token=token, endpoint=os.environ["HF_ENDPOINT"]))


def test_a_pushed_model_folder_loads_back_by_id_with_its_card(online, tiny_pretrained_dir, tmp_path):
    folder = tmp_path / "model"
    ElectraDiscriminator.from_pretrained(str(tiny_pretrained_dir)).save_pretrained(
        str(folder), tokenizer=ElectraTokenizer.from_pretrained(str(tiny_pretrained_dir)))
    write_model_card(str(folder), serving_task="discriminator", base_model="google/electra-small-discriminator",
                     command="electra-pretrain --model_dir=runs/tiny", language="en")
    url = push_to_hub(str(folder), "me/electra-tiny", token="hf_write", commit_message="first")
    assert url.startswith(f"{online.endpoint}/me/electra-tiny/commit/")
    assert online.commits == [("me/electra-tiny", "main", "first")]
    assert not [path for method, path, authorization in online.requests
                if method == "POST" and authorization != "Bearer hf_write"]  # every write carries the token
    card = served_card("me/electra-tiny")
    assert card.data.library_name == "electra_tf" and card.data.license == "apache-2.0"
    assert card.data.base_model == "google/electra-small-discriminator" and card.data.language == "en"
    assert "electra-pretrain --model_dir=runs/tiny" in card.text and f"electra_tf {__version__}" in card.text
    loaded = ElectraDiscriminator.from_pretrained("me/electra-tiny")  # downloaded from what was pushed
    for a, b in zip(loaded.weights, ElectraDiscriminator.from_pretrained(str(folder)).weights, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_a_folder_without_a_card_gets_one_from_its_metadata_and_branches_and_prs_are_made(online, tmp_path,
                                                                                          tiny_pretrained_dir):
    folder = tmp_path / "classifier"
    model = ElectraForSequenceClassification.from_pretrained(str(tiny_pretrained_dir), num_labels=2)
    model.save_pretrained(str(folder), tokenizer=ElectraTokenizer.from_pretrained(str(tiny_pretrained_dir)),
                          label_names=["neg", "pos"])
    (folder / "README.md").unlink(missing_ok=True)  # a folder written before cards were
    (folder / ".lock").write_text("1")
    push_to_hub(str(folder), "me/classifier", token="hf_write", private=True, revision="v1")
    assert online.private == {"me/classifier"} and online.commits[-1][:2] == ("me/classifier", "v1")
    files = online.branches["me/classifier"]["v1"][1]
    assert {"README.md", "electra_tf.json", "vocab.txt"} <= set(files) and ".lock" not in files
    card = served_card("me/classifier", token="hf_write", revision="v1")  # (private: only with a token)
    assert card.data.pipeline_tag == "text-classification" and "`neg`, `pos`" in card.text
    with pytest.raises(huggingface_hub.utils.RepositoryNotFoundError):
        huggingface_hub.HfApi(endpoint=online.endpoint, token=False).list_repo_files("me/classifier")  # private
    url = push_to_hub(str(folder), "me/classifier", token="hf_write", create_pr=True)
    assert url == f"{online.endpoint}/me/classifier/discussions/1" and "pr-1" in online.branches["me/classifier"]


def test_pushing_without_a_token_or_offline_or_to_no_id_is_one_line(online, tmp_path, monkeypatch):
    folder = tmp_path / "empty"
    folder.mkdir()
    with pytest.raises(PermissionError, match=r"^me/x: the Hugging Face hub refused the push \(HTTP 401\): pass a "
                                              r"token with write access \(token=, --hub_token"):
        push_to_hub(str(folder), "me/x", token=False)  # (huggingface_hub's "send none")
    with pytest.raises(ValueError, match=r"^'no_owner': not a Hugging Face repository id to push to"):
        push_to_hub(str(folder), "no_owner", token="hf_write")
    with pytest.raises(FileNotFoundError, match=f"^{tmp_path}/missing: no such folder to push to me/x$"):
        push_to_hub(str(tmp_path / "missing"), "me/x", token="hf_write")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    del online.requests[:]
    with pytest.raises(ConnectionError, match=r"^me/x: cannot push to the Hugging Face hub while offline "
                                              r"\(HF_HUB_OFFLINE=1\); .*`hf upload me/x <folder>`$"):
        push_to_hub(str(folder), "me/x", token="hf_write")
    assert online.requests == []  # nothing sent


def test_the_callback_pushes_every_epoch_or_every_n_steps_and_at_the_end(online, tmp_path, tiny_pretrained_dir):
    tokenizer = ElectraTokenizer.from_pretrained(str(tiny_pretrained_dir))
    model = ElectraForSequenceClassification.from_pretrained(str(tiny_pretrained_dir), num_labels=2)
    features = {name: np.asarray(value) for name, value in
                tokenizer.encode(["a b", "c d", "e f", "g h"], sequence_length=8).items()}
    labels = np.array([0, 1, 0, 1])
    model.compile(optimizer="adam", loss={"logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True)})
    by_steps = PushToHubCallback(str(tmp_path / "steps"), "me/steps", save_strategy="steps", save_steps=3,
                                 tokenizer=tokenizer, token="hf_write")
    model.fit(features, labels, batch_size=2, epochs=2, callbacks=[by_steps], verbose=0)  # 4 steps: 3, end
    assert [summary for repo, _, summary in online.commits if repo == "me/steps"] == \
        ["Training in progress: step 3", "Training in progress: end of training"]
    by_epoch = PushToHubCallback(str(tmp_path / "epoch"), "me/epoch", tokenizer=tokenizer, token="hf_write")
    model.fit(features, labels, batch_size=2, epochs=2, callbacks=[by_epoch], verbose=0)
    assert [summary for repo, _, summary in online.commits if repo == "me/epoch"] == \
        ["Training in progress: epoch 1", "Training in progress: epoch 2"]  # the end is epoch 2's push
    assert ElectraForSequenceClassification.from_pretrained("me/epoch").num_labels == 2
    assert os.path.exists(resolve("me/epoch")) and "README.md" in online.branches["me/epoch"]["main"][1]
    with pytest.raises(ValueError, match="^save_steps=None: save_strategy='steps' needs a positive save_steps$"):
        PushToHubCallback(str(tmp_path), "me/x", save_strategy="steps")


def test_the_export_tool_pushes_its_version_folder_with_a_card(online, tmp_path, tiny_pretrained_dir, run_tool):
    code, out, err = run_tool("export_model", f"--model={tiny_pretrained_dir}", f"--export_dir={tmp_path}/exports",
                              "--push_to_hub=me/electra-export", "--hub_token=hf_write", "--hub_revision=serving")
    assert code == 0, err[-3000:]
    assert f"pushed {tmp_path}/exports/electra/1 to me/electra-export: {online.endpoint}/me/electra-export/commit/" \
        in out
    files = online.branches["me/electra-export"]["serving"][1]
    assert {"saved_model.pb", "assets.extra/export_info.json", "README.md"} <= set(files)
    card = served_card("me/electra-export", token="hf_write", revision="serving")
    assert card.data.library_name == "electra_tf" and "saved_model" in card.data.tags
    assert "tf.saved_model.load" in card.text


@pytest.mark.parametrize("tool, flags", [
    ("export_model", ["--model={tiny}", "--export_dir={tmp}/out"]),
    ("run_finetuning", ["--task=text_classification", "--train_file={tmp}/train.csv", "--init_checkpoint={tiny}",
                        "--output_dir={tmp}/out"]),
])
def test_the_tools_refuse_a_push_that_cannot_happen_before_any_work(tmp_path, tiny_pretrained_dir, run_tool,
                                                                    refused, monkeypatch, tool, flags):
    (tmp_path / "train.csv").write_text("text,label\na,0\nb,1\n")
    flags = [flag.format(tmp=tmp_path, tiny=tiny_pretrained_dir) for flag in flags]
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    refused(run_tool(tool, *flags, "--push_to_hub=me/x"), "me/x: cannot push to the Hugging Face hub while offline")
    refused(run_tool(tool, *flags, "--hub_revision=v1"), "--hub_revision is an option of --push_to_hub, which was "
                                                         "not given")
    assert not (tmp_path / "out").exists()


def test_no_token_or_an_unreachable_hub_is_one_line_before_any_work(online, tmp_path, tiny_pretrained_dir, run_tool,
                                                                    refused, monkeypatch):
    """Without a token (none given, saved or in HF_TOKEN) the push, the callback and the tools are refused before
    anything is sent or trained (before: the tools fine-tuned or exported, then met the hub's 401); a hub that
    cannot be reached is one line (before: httpx's ConnectError traceback); the callback and the tools make the
    repository first, as transformers' do; `private=True` for an existing public repository is refused."""
    folder = tmp_path / "model"
    folder.mkdir()
    message = "me/x: no Hugging Face token to push with: pass one with write access (token=, --hub_token), set " \
              "HF_TOKEN, or run `hf auth login`"
    for attempt in (lambda: push_to_hub(str(folder), "me/x"), lambda: PushToHubCallback(str(folder), "me/x")):
        with pytest.raises(PermissionError, match=f"^{re.escape(message)}$"):
            attempt()
    (tmp_path / "train.csv").write_text("text,label\na,0\nb,1\n")
    refused(run_tool("run_finetuning", "--task=text_classification", f"--train_file={tmp_path}/train.csv",
                     f"--init_checkpoint={tiny_pretrained_dir}", f"--output_dir={tmp_path}/out", "--push_to_hub=me/x"),
            message)
    assert online.requests == [] and not (tmp_path / "out").exists()
    PushToHubCallback(str(folder), "me/made", token="hf_write")
    assert "me/made" in online.branches  # made when built
    with pytest.raises(PermissionError, match=r"^me/made exists and is public: private=True \(--hub_private_repo\) "
                                              r"cannot make it private; make it private in its settings on the hub"):
        push_to_hub(str(folder), "me/made", token="hf_write", private=True)  # (before: pushed to it, public)
    assert [repo for repo, _, _ in online.commits] == [] and online.private == set()
    with pytest.raises(ValueError, match=r"^None: not a Hugging Face repository id to push to"):
        push_to_hub(str(folder), None, token="hf_write")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # (nothing listens there)
    with pytest.raises(ConnectionError, match=r"^me/x: the Hugging Face hub \(http://127.0.0.1:9\) cannot be reached "
                                              r"\(ConnectError\); check the network, or push later with `hf upload "
                                              f"me/x {re.escape(str(folder))}`$"):
        push_to_hub(str(folder), "me/x", token="hf_write")


def test_a_push_that_fails_during_training_is_a_warning_and_training_goes_on(online, tmp_path, tiny_pretrained_dir,
                                                                           monkeypatch, caplog):
    """Before: the callback's exception ended `fit` at the first failed push (the network gone after it was built);
    now each failed push is a warning, the model stays in output_dir, and the push at the end raises."""
    tokenizer = ElectraTokenizer.from_pretrained(str(tiny_pretrained_dir))
    model = ElectraForSequenceClassification.from_pretrained(str(tiny_pretrained_dir), num_labels=2)
    features = {name: np.asarray(value) for name, value in tokenizer.encode(["a b", "c d"], sequence_length=8).items()}
    model.compile(optimizer="adam", loss={"logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True)})
    callback = PushToHubCallback(str(tmp_path / "out"), "me/flaky", tokenizer=tokenizer, token="hf_write")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # the hub gone after the callback was built
    with pytest.raises(ConnectionError, match=r"^me/flaky: the Hugging Face hub \(http://127.0.0.1:9\) cannot be "
                                              r"reached"):
        model.fit(features, np.array([0, 1]), batch_size=2, epochs=2, callbacks=[callback], verbose=0)
    assert len(model.history.epoch) == 2 and callback.pushed == []  # every epoch trained
    assert [record.getMessage().split(":")[0] for record in caplog.records if "push of" in record.getMessage()] == \
        ["push of epoch 1 failed", "push of epoch 2 failed"]
    assert (tmp_path / "out" / "electra_tf.json").exists()
