"""Publishing a model folder (or an export) on the Hugging Face hub through `huggingface_hub`'s public API:
`push_to_hub(folder, repo_id)` (docs/checkpoints.md, "Publishing on the hub").

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
    """Refuses, in one line before any work, a push that cannot happen: an invalid id, offline, or no token."""
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
    """Creates `repo_id` (kept when it exists; an existing public one refused when `private`) and its branch `revision`,
    as a push does first; the `HfApi` that did it."""
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
    """Uploads `folder` (a model folder or an export version folder) to the model repository `repo_id`, created if
    needed, with a model card written first when it has none; returns the commit's URL (the pull request's with
    `create_pr`). `private` applies to a new repository (an existing public one is refused); `revision`: a branch,
    created from main if missing."""
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
    """The hub's refusals and a hub that cannot be reached as one line naming `repo_id`."""
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
    """What a folder's `electra_tf.json` (or an export's `export_info.json`) says for its card."""
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
