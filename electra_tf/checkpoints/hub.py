"""Hugging Face hub ids where a checkpoint path is taken: `resolve("owner/name")` gives the model's local folder.

A path that exists always wins; a hub id becomes the `huggingface_hub.snapshot_download` folder (the cache first),
fetching only the files electra_tf reads and refusing a pickle-only repository before any download
(docs/checkpoints.md, "Hugging Face hub ids").

Example:
>>> import tempfile
>>> folder = tempfile.mkdtemp()
>>> resolve(folder) == folder  # an existing folder is returned as it is
True
>>> is_hub_id("google/electra-small-discriminator"), is_hub_id("runs/sst2/trial_0"), is_hub_id("/tmp/x")
(True, False, False)
"""

import fnmatch
import hashlib
import os
import re

from huggingface_hub import HfApi, constants, snapshot_download
from huggingface_hub.utils import (
    GatedRepoError,
    HFValidationError,
    LocalEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
    validate_repo_id,
)

# Weights `checkpoints.sources` reads: safetensors (and their index), our `.keras` files, a keras-hub preset's.
WEIGHT_PATTERNS = ("*.safetensors", "*.safetensors.index.json", "*.keras", "model.weights.h5")
TOKENIZER_PATTERNS = ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                      "assets/tokenizer/vocabulary.txt")
# Hugging Face's (or keras-hub's) config, and our run folder's (`checkpoints.ours.RUN_CONFIG`).
CONFIG_PATTERNS = ("config.json", "run_config.json")
MODEL_PATTERNS = (*CONFIG_PATTERNS, *WEIGHT_PATTERNS, *TOKENIZER_PATTERNS, "electra_tf.json")
TF_WEIGHTS = "tf_model.h5"  # transformers 4.x's TF weights: fetched only when there are no safetensors
PICKLED_WEIGHTS = "pytorch_model.bin"
_TRUE = ("1", "on", "yes", "true")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")  # an LFS blob's name in the cache: its content's sha256
# `resolve`'s keyword arguments that callers taking options of their own (`pipeline`) pass on.
HUB_OPTIONS = ("revision", "cache_dir", "token", "local_files_only", "force_download")


def is_hub_id(text):
    """Whether `text` is a valid Hugging Face repository id (`owner/name` or `name`)."""
    try:
        validate_repo_id(text)
    except HFValidationError:
        return False
    return True


def _is_local(path):
    """Whether `path` is local: it exists (a Google prefix: its index), is a link, or its first folder exists."""
    return (os.path.lexists(path) or os.path.exists(path + ".index")
            or ("/" in path and os.path.isdir(path.split("/")[0])))


def cache_folder(cache_dir=None):
    """The hub cache `resolve` reads: `cache_dir`, else `HF_HUB_CACHE`, else `HF_HOME/hub`, as set now."""
    if cache_dir is not None:
        return os.fspath(cache_dir)
    for name, tail in (("HF_HUB_CACHE", ""), ("HUGGINGFACE_HUB_CACHE", ""), ("HF_HOME", "hub")):
        if os.environ.get(name):
            return os.path.join(os.path.expanduser(os.path.expandvars(os.environ[name])), tail).rstrip(os.sep)
    return constants.HF_HUB_CACHE


def is_offline(local_files_only=None):
    """`local_files_only` when given, else whether `HF_HUB_OFFLINE` (or `TRANSFORMERS_OFFLINE`) is set now."""
    if local_files_only is not None:
        return bool(local_files_only)
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if name in os.environ:
            return os.environ[name].strip().lower() in _TRUE
    return constants.HF_HUB_OFFLINE


def _matches(files, patterns):
    return [name for name in files if any(fnmatch.fnmatch(name, pattern) for pattern in patterns)]


def _pickle_only_error(repo_id):
    return ValueError(
        f"{repo_id}: the repository holds only {PICKLED_WEIGHTS}, a pickle, which electra_tf never unpickles; get "
        "safetensors: the hub's \"Convert to safetensors\" Space opens a pull request (then pass "
        "revision=\"refs/pr/<number>\"), or convert once with transformers and torch: "
        f"transformers.AutoModel.from_pretrained('{repo_id}').save_pretrained('<folder>', safe_serialization=True) "
        "and load <folder>")


def _not_cached_error(repo_id, cache, revision, why):
    at = f" at revision {revision}" if revision else ""
    return FileNotFoundError(
        f"{repo_id}: no such file or folder, and not in the Hugging Face cache {cache}{at} ({why}); get it with "
        f"`hf download {repo_id}` (or `huggingface-cli download {repo_id}`) where there is a network, or unset "
        "HF_HUB_OFFLINE (local_files_only=False) to download it")


def _gated_error(repo_id):
    return PermissionError(f"{repo_id}: a gated repository; accept its conditions on the hub and pass token= "
                           "(or log in with `hf auth login`)")


def _repository_files(repo_id, revision, token, endpoint):
    """The repository's file names, asked of the hub once (no retries); None when the hub cannot be reached."""
    try:
        info = HfApi(endpoint=endpoint, token=token).model_info(repo_id, revision=revision)
        return [sibling.rfilename for sibling in info.siblings or ()]
    except GatedRepoError:
        raise _gated_error(repo_id) from None
    except RepositoryNotFoundError:
        raise FileNotFoundError(f"{repo_id}: no such file or folder here, nor a model repository on the Hugging "
                                "Face hub (a private one needs token= or `hf auth login`)") from None
    except RevisionNotFoundError:
        raise FileNotFoundError(f"{repo_id}: the hub has no revision {revision!r} of it (a branch, tag or "
                                "commit)") from None
    except Exception as error:  # noqa: BLE001 (kinds of errors of the HTTP client: `is_connection_error`)
        if is_connection_error(error):
            return None
        raise


def is_connection_error(error):
    """Whether `error` says a server could not be reached (huggingface_hub's OSErrors, or the HTTP client's own)."""
    return isinstance(error, OSError) or type(error).__module__.split(".")[0] in ("httpx", "httpx2", "requests",
                                                                                 "urllib3")


def resolve(path_or_id, revision=None, cache_dir=None, token=None, local_files_only=None, force_download=False,
            tokenizer_only=False, config_only=False):
    """The local path of a checkpoint given as a path (returned as it is when it exists, or is no hub id) or as a
    Hugging Face hub id: its snapshot folder.

    `revision`: a branch, tag or commit; `token`: for private or gated repositories (default: `hf auth login`'s);
    `local_files_only`: the cache only (default: `HF_HUB_OFFLINE`); `tokenizer_only`/`config_only`: fetch no weights.
    Each failure is one line naming the id (FileNotFoundError, ValueError, PermissionError or ConnectionError).
    """
    path = os.fspath(path_or_id)
    if _is_local(path) or not is_hub_id(path):
        return path
    offline, cache = is_offline(local_files_only), cache_folder(cache_dir)
    endpoint = os.environ.get("HF_ENDPOINT") or None
    patterns = list(CONFIG_PATTERNS) if config_only else [*CONFIG_PATTERNS, *TOKENIZER_PATTERNS] if tokenizer_only \
        else list(MODEL_PATTERNS)
    tokenizer_only = tokenizer_only or config_only  # (no weights either way)
    files = None if offline else _repository_files(path, revision, token, endpoint)
    if files is not None and not tokenizer_only and not _matches(files, WEIGHT_PATTERNS):
        if TF_WEIGHTS in files:
            patterns.append(TF_WEIGHTS)
        elif PICKLED_WEIGHTS in files:
            raise _pickle_only_error(path)
        else:
            raise ValueError(f"{path}: the repository holds no weights electra_tf reads (model.safetensors, "
                             f"tf_model.h5, ours or a keras-hub preset's); its files: {', '.join(sorted(files)[:12])}")
    try:
        folder = snapshot_download(path, revision=revision, cache_dir=cache, token=token, endpoint=endpoint,
                                   local_files_only=offline or files is None, force_download=force_download,
                                   allow_patterns=patterns)
    except GatedRepoError:
        raise _gated_error(path) from None
    except LocalEntryNotFoundError:
        folder = _cached_snapshot(cache, path, revision)
        if folder is None and offline:
            raise _not_cached_error(path, cache, revision, "offline: HF_HUB_OFFLINE=1 or local_files_only=True") \
                from None
        if folder is None:
            raise ConnectionError(f"{path}: the Hugging Face hub ({endpoint or 'huggingface.co'}) cannot be "
                                  f"reached and the model is not in the cache {cache}; check the network (or "
                                  f"HTTPS_PROXY), or get it with `hf download {path}` elsewhere and copy the cache") \
                from None
        files = None  # huggingface_hub refuses a snapshot lacking a file it listed: what it holds may do
    if files is None:  # from the cache alone: what it holds is all there is
        _check_snapshot(path, folder, tokenizer_only, config_only)
    _check_weight_hashes(path, folder)
    return folder


def _cached_snapshot(cache, repo_id, revision):
    """The cache's snapshot folder of `repo_id` at `revision` (a ref or a commit), or None."""
    repository = os.path.join(cache, "models--" + repo_id.replace("/", "--"))
    ref = os.path.join(repository, "refs", revision or "main")
    commit = revision
    if os.path.isfile(ref):
        with open(ref, encoding="utf-8") as f:
            commit = f.read().strip()
    folder = os.path.join(repository, "snapshots", commit) if commit else None
    return folder if folder and os.path.isdir(folder) else None


def _missing_file_error(repo_id, folder, name, why):
    return FileNotFoundError(f"{repo_id}: the cached snapshot {folder} is incomplete: {why}; fetch it with "
                             f"`hf download {repo_id} {name}` where there is a network (or unset HF_HUB_OFFLINE "
                             "to download it)")


def _check_snapshot(repo_id, folder, tokenizer_only, config_only):
    """Refuses a snapshot from the cache alone that lacks a file the model (or the tokenizer) needs, naming it."""
    present = os.listdir(folder)
    for name in sorted(present):
        if not os.path.exists(os.path.join(folder, name)):
            raise _missing_file_error(repo_id, folder, name, f"{name} is a link to a blob that is not there")
    if config_only:
        if not _matches(present, CONFIG_PATTERNS):
            raise _missing_file_error(repo_id, folder, "config.json", "it holds no config.json")
        return
    if tokenizer_only:
        if not _matches(present, ("vocab.txt", "tokenizer.json", "assets")):
            raise _missing_file_error(repo_id, folder, "vocab.txt", "it holds no vocabulary (vocab.txt)")
        return
    if not _matches(present, (*WEIGHT_PATTERNS, TF_WEIGHTS)):
        if PICKLED_WEIGHTS in present:
            raise _pickle_only_error(repo_id)
        raise _missing_file_error(repo_id, folder, "model.safetensors", "it holds no weights (model.safetensors)")
    if _matches(present, ("*.safetensors", TF_WEIGHTS)) and not _matches(present, CONFIG_PATTERNS):
        raise _missing_file_error(repo_id, folder, "config.json", "it holds no config.json beside its weights")


def _check_weight_hashes(repo_id, folder):
    """Refuses a cached weights file whose bytes are not those the hub named its blob by (an LFS file's sha256)."""
    for name in _matches(os.listdir(folder), (*WEIGHT_PATTERNS, TF_WEIGHTS)):
        link = os.path.join(folder, name)
        blob = os.path.basename(os.path.realpath(link))
        if not os.path.islink(link) or not _SHA256.match(blob):
            continue
        with open(link, "rb") as f:
            digest = hashlib.file_digest(f, "sha256")
        if digest.hexdigest() != blob:
            raise ValueError(f"{repo_id}: the cached {name} is damaged (its sha256 is {digest.hexdigest()[:12]}…, "
                             f"the hub's is {blob[:12]}…); fetch it again with `hf download {repo_id} {name} "
                             "--force-download` (or force_download=True)")
