"""Publishing a model folder (or an export) on the Hugging Face hub: `push_to_hub(folder, repo_id)`.

Through `huggingface_hub`'s public API: `HfApi.create_repo` (kept when it exists; `private=` for a new one),
`create_branch` for a `revision=` that is not there yet, and `upload_folder` (one commit, or a pull request with
`create_pr=True`). A folder without a `README.md` model card gets one first (`model_card.write_model_card`, from
what its `electra_tf.json` or `export_info.json` records), so the hub always shows what the model is. Hidden
files (a folder's lock, a half-written temporary) are not uploaded. Offline (`HF_HUB_OFFLINE=1`) the push is
refused in one line before anything is read or sent; a hub that refuses the token, or cannot be reached, is one
line too, naming the repository.

Example:
>>> import os, tempfile
>>> os.environ["HF_HUB_OFFLINE"] = "1"
>>> push_to_hub(tempfile.mkdtemp(), "me/electra-sst2")  # doctest: +ELLIPSIS
Traceback (most recent call last):
ConnectionError: me/electra-sst2: cannot push to the Hugging Face hub while offline (HF_HUB_OFFLINE=1)...
>>> del os.environ["HF_HUB_OFFLINE"]
"""

import os

from huggingface_hub import HfApi
from huggingface_hub.utils import HfHubHTTPError

from electra_tf.checkpoints.hub import is_hub_id, is_offline
from electra_tf.checkpoints.model_card import CARD_FILE, write_model_card
from electra_tf.checkpoints.ours import read_model_info
from electra_tf.util.atomic import read_json
from electra_tf.version import __version__

# What an export folder records (`export/ids_folder.py`, `export/archive.py`), read for its card.
EXPORT_INFO_FILES = ("export_info.json", os.path.join("assets.extra", "export_info.json"))
HIDDEN = [".*", "*/.*"]


def check_push_target(repo_id: str) -> None:
    """Refuses, in one line before any work, a push that cannot happen: an invalid repository id, or offline."""
    if not is_hub_id(repo_id) or "/" not in repo_id:
        raise ValueError(f"{repo_id!r}: not a Hugging Face repository id to push to (give <owner>/<name>)")
    if is_offline():
        raise ConnectionError(f"{repo_id}: cannot push to the Hugging Face hub while offline (HF_HUB_OFFLINE=1); "
                              "unset it where there is a network, or push the folder later with "
                              f"`hf upload {repo_id} <folder>`")


def push_to_hub(folder: str, repo_id: str, token: str | None = None, private: bool | None = None,
                revision: str | None = None, commit_message: str | None = None, create_pr: bool = False) -> str:
    """Uploads `folder` to the model repository `repo_id` (created if needed); returns the commit's URL (or the
    pull request's, with `create_pr`).

    Args:
        folder: a model folder (`save_pretrained`, a fine-tuning trial's `model/`, a converted checkpoint) or an
            export version folder.
        repo_id: `<owner>/<name>` on the hub (`HF_ENDPOINT` names another hub).
        token: a write token (default: the one `hf auth login` saved, or `HF_TOKEN`).
        private: make a new repository private (an existing one keeps its visibility).
        revision: the branch to push to, created from main if missing (default: main).
        commit_message: default "Upload <folder name> with electra_tf <version>".
        create_pr: open a pull request instead of committing to the branch.
    """
    check_push_target(repo_id)
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"{folder}: no such folder to push to {repo_id}")
    if not os.path.exists(os.path.join(folder, CARD_FILE)):
        write_model_card(folder, **_recorded_facts(folder))
    api = HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None, token=token)
    name = os.path.basename(os.path.normpath(os.path.abspath(folder)))
    try:
        api.create_repo(repo_id, private=private, exist_ok=True)
        if revision not in (None, "main"):
            api.create_branch(repo_id, branch=revision, exist_ok=True)
        commit = api.upload_folder(folder_path=folder, repo_id=repo_id, revision=revision, create_pr=create_pr,
                                   commit_message=commit_message or f"Upload {name} with electra_tf {__version__}",
                                   ignore_patterns=HIDDEN)
    except HfHubHTTPError as error:
        status = getattr(error.response, "status_code", None)
        if status in (401, 403):
            raise PermissionError(f"{repo_id}: the Hugging Face hub refused the push (HTTP {status}): pass a token "
                                  "with write access (token=, --hub_token, HF_TOKEN or `hf auth login`)") from None
        raise ConnectionError(f"{repo_id}: the Hugging Face hub refused the push (HTTP {status}: "
                              f"{str(error).splitlines()[0]})") from None
    except OSError as error:  # the HTTP client's connection errors
        raise ConnectionError(f"{repo_id}: the Hugging Face hub "
                              f"({os.environ.get('HF_ENDPOINT') or 'huggingface.co'}) cannot be reached "
                              f"({type(error).__name__}); check the network, or push later with "
                              f"`hf upload {repo_id} {folder}`") from None
    return commit.pr_url if create_pr and commit.pr_url else commit.commit_url


def _recorded_facts(folder):
    """What a folder's metadata says for its card: a model folder's `electra_tf.json`, an export's
    `export_info.json`; nothing for another folder."""
    info = read_model_info(folder)
    if info:
        return {"serving_task": info.get("serving_task"), "label_names": info.get("label_names"),
                "base_model": info.get("base_model"), "model_format": "keras"}
    for name in EXPORT_INFO_FILES:
        path = os.path.join(folder, name)
        if os.path.exists(path):
            export = read_json(path, expect=dict)
            return {"serving_task": export.get("task"), "label_names": export.get("label_names"),
                    "model_format": export.get("format", "saved_model")}
    return {}
