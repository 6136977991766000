"""Publishing a model folder (or an export) on the Hugging Face hub: `push_to_hub(folder, repo_id)`.

Through `huggingface_hub`'s public API: `HfApi.create_repo` (kept when it exists; `private=` for a new one),
`create_branch` for a `revision=` that is not there yet, and `upload_folder` (one commit, or a pull request with
`create_pr=True`). A folder without a `README.md` model card gets one first (`model_card.write_model_card`, from
what its `electra_tf.json` or `export_info.json` records), so the hub always shows what the model is. Hidden
files (a folder's lock, a half-written temporary) are not uploaded. Offline (`HF_HUB_OFFLINE=1`), or without a
token, the push is refused in one line before anything is read or sent; a hub that refuses the token, or cannot be
reached, is one line too, naming the repository.

Example:
>>> import os, tempfile
>>> os.environ["HF_HUB_OFFLINE"] = "1"
>>> push_to_hub(tempfile.mkdtemp(), "me/electra-sst2")  # doctest: +ELLIPSIS
Traceback (most recent call last):
ConnectionError: me/electra-sst2: cannot push to the Hugging Face hub while offline (HF_HUB_OFFLINE=1)...
>>> del os.environ["HF_HUB_OFFLINE"]
"""

import contextlib
import os

from huggingface_hub import HfApi, get_token
from huggingface_hub.utils import HfHubHTTPError

from electra_tf.checkpoints.hub import is_connection_error, is_hub_id, is_offline
from electra_tf.checkpoints.model_card import CARD_FILE, write_model_card
from electra_tf.checkpoints.ours import read_model_info
from electra_tf.util.atomic import read_json
from electra_tf.version import __version__

# What an export folder records (`export/ids_folder.py`, `export/archive.py`), read for its card.
EXPORT_INFO_FILES = ("export_info.json", os.path.join("assets.extra", "export_info.json"))
HIDDEN = [".*", "*/.*"]


def check_push_target(repo_id: str, token: str | bool | None = None) -> None:
    """Refuses, in one line before any work, a push that cannot happen: an invalid repository id, offline, or no
    token (`token` None and none saved or in `HF_TOKEN`)."""
    if not isinstance(repo_id, str) or not is_hub_id(repo_id) or "/" not in repo_id:
        raise ValueError(f"{repo_id!r}: not a Hugging Face repository id to push to (give <owner>/<name>)")
    if is_offline():
        raise ConnectionError(f"{repo_id}: cannot push to the Hugging Face hub while offline (HF_HUB_OFFLINE=1); "
                              "unset it where there is a network, or push the folder later with "
                              f"`hf upload {repo_id} <folder>`")
    if token is None and not get_token():
        raise PermissionError(f"{repo_id}: no Hugging Face token to push with: pass one with write access "
                              "(token=, --hub_token), set HF_TOKEN, or run `hf auth login`")


def create_repository(repo_id: str, token: str | bool | None = None, private: bool | None = None,
                      revision: str | None = None, folder: str = "<folder>") -> HfApi:
    """Creates the model repository `repo_id` (kept when it exists; an existing public one is refused when
    `private`) and its branch `revision` (if not main), as a push of `folder` does first (`PushToHubCallback` when it
    is built, so a refused token is known before training); the `HfApi` that did it."""
    check_push_target(repo_id, token)
    api = HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None, token=token)
    with _answered(repo_id, folder):
        api.create_repo(repo_id, private=private, exist_ok=True)
        if private and not api.repo_info(repo_id).private:  # (create_repo keeps an existing one's visibility)
            raise PermissionError(f"{repo_id} exists and is public: private=True (--hub_private_repo) cannot make it "
                                  "private; make it private in its settings on the hub, or push to a new repository")
        if revision not in (None, "main"):
            api.create_branch(repo_id, branch=revision, exist_ok=True)
    return api


def push_to_hub(folder: str, repo_id: str, token: str | None = None, private: bool | None = None,
                revision: str | None = None, commit_message: str | None = None, create_pr: bool = False) -> str:
    """Uploads `folder` to the model repository `repo_id` (created if needed); returns the commit's URL (or the
    pull request's, with `create_pr`).

    Args:
        folder: a model folder (`save_pretrained`, a fine-tuning trial's `model/`, a converted checkpoint) or an
            export version folder.
        repo_id: `<owner>/<name>` on the hub (`HF_ENDPOINT` names another hub).
        token: a write token (default: the one `hf auth login` saved, or `HF_TOKEN`).
        private: make a new repository private (an existing one keeps its visibility: a public one is refused).
        revision: the branch to push to, created from main if missing (default: main).
        commit_message: default "Upload <folder name> with electra_tf <version>".
        create_pr: open a pull request instead of committing to the branch.
    """
    check_push_target(repo_id, token)
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"{folder}: no such folder to push to {repo_id}")
    if not os.path.exists(os.path.join(folder, CARD_FILE)):
        write_model_card(folder, **_recorded_facts(folder))
    api = create_repository(repo_id, token, private, revision, folder)
    name = os.path.basename(os.path.normpath(os.path.abspath(folder)))
    with _answered(repo_id, folder):
        commit = api.upload_folder(folder_path=folder, repo_id=repo_id, revision=revision, create_pr=create_pr,
                                   commit_message=commit_message or f"Upload {name} with electra_tf {__version__}",
                                   ignore_patterns=HIDDEN)
    return commit.pr_url if create_pr and commit.pr_url else commit.commit_url


@contextlib.contextmanager
def _answered(repo_id, folder):
    """The hub's refusals (`PermissionError` for the token), and a hub that cannot be reached, as one line naming
    `repo_id`."""
    try:
        yield
    except HfHubHTTPError as error:
        status = getattr(error.response, "status_code", None)
        if status in (401, 403):
            raise PermissionError(f"{repo_id}: the Hugging Face hub refused the push (HTTP {status}): pass a token "
                                  "with write access (token=, --hub_token, HF_TOKEN or `hf auth login`)") from None
        raise ConnectionError(f"{repo_id}: the Hugging Face hub refused the push (HTTP {status}: "
                              f"{str(error).splitlines()[0]})") from None
    except PermissionError:  # (an OSError, but no connection's: ours)
        raise
    except Exception as error:  # noqa: BLE001 (kinds of errors of the HTTP client: `is_connection_error`)
        if not is_connection_error(error):
            raise
        raise ConnectionError(f"{repo_id}: the Hugging Face hub "
                              f"({os.environ.get('HF_ENDPOINT') or 'huggingface.co'}) cannot be reached "
                              f"({type(error).__name__}); check the network, or push later with "
                              f"`hf upload {repo_id} {folder}`") from None


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
