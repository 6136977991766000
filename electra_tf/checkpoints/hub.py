"""Hugging Face hub ids where a checkpoint path is taken: `resolve("owner/name")` gives the model's local folder.

Every `from_pretrained`, `pipeline` and tool checkpoint flag runs its argument
through `resolve` first. A path that exists (a folder, a file, a Google
checkpoint prefix) always wins and is returned as it is. Otherwise a valid hub
id (`owner/name` or `name`, by `huggingface_hub`'s own rules) becomes the
folder `huggingface_hub.snapshot_download` gives: from the local cache
(`HF_HUB_CACHE`, `HF_HOME`, or `cache_dir=`) when it is there, else downloaded
with `huggingface_hub`'s progress bars. `HF_HUB_OFFLINE=1` and
`local_files_only=True` keep it to the cache; `revision=` (a branch, tag or
commit) and `token=` (private or gated repositories) are passed on; the
environment is read at each call, so setting it after the import works.

Only the files electra_tf reads are fetched: `config.json` (or our run folder's
`run_config.json`), the safetensors
weights (with their index), our `.keras` files or a keras-hub preset's
weights, the tokenizer files and `electra_tf.json`; `tf_model.h5` only when
the repository has no safetensors. A repository with only
`pytorch_model.bin` (a pickle, never opened here) is refused before anything
is downloaded, saying how to get safetensors. Each failure is one line: the
id, the cache folder, and the way out.

Example:
>>> import tempfile
>>> folder = tempfile.mkdtemp()
>>> resolve(folder) == folder  # an existing folder is returned as it is
True
>>> is_hub_id("google/electra-small-discriminator"), is_hub_id("runs/sst2/trial_0"), is_hub_id("/tmp/x")
(True, False, False)
"""

import fnmatch
import os

from huggingface_hub import HfApi, constants, snapshot_download
from huggingface_hub.utils import (
    GatedRepoError,
    HFValidationError,
    LocalEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
    validate_repo_id,
)

# Weights in the formats `checkpoints.sources` reads: Hugging Face's safetensors (and their index), our `.keras`
# files (a model folder or a pre-training pair), a keras-hub preset's `model.weights.h5`.
WEIGHT_PATTERNS = ("*.safetensors", "*.safetensors.index.json", "*.keras", "model.weights.h5")
TOKENIZER_PATTERNS = ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                      "assets/tokenizer/vocabulary.txt")
# Hugging Face's (or keras-hub's) config, and our run folder's (`checkpoints.ours.RUN_CONFIG`).
CONFIG_PATTERNS = ("config.json", "run_config.json")
MODEL_PATTERNS = (*CONFIG_PATTERNS, *WEIGHT_PATTERNS, *TOKENIZER_PATTERNS, "electra_tf.json")
TF_WEIGHTS = "tf_model.h5"  # transformers 4.x's TF weights: fetched only when there are no safetensors
PICKLED_WEIGHTS = "pytorch_model.bin"
_TRUE = ("1", "on", "yes", "true")
# `resolve`'s keyword arguments that callers taking options of their own (`pipeline`) pass on.
HUB_OPTIONS = ("revision", "cache_dir", "token", "local_files_only", "force_download")


def is_hub_id(text):
    """Whether `text` is a valid Hugging Face repository id (`owner/name` or `name`)."""
    try:
        validate_repo_id(text)
    except HFValidationError:
        return False
    return True


def _exists_here(path):
    return os.path.exists(path) or os.path.exists(path + ".index")  # a Google checkpoint prefix: its index


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


def _repository_files(repo_id, revision, token, endpoint):
    """The repository's file names, asked of the hub; raises a one-line error for an id or revision it does not
    have. None when the hub cannot be reached (the cache then answers alone)."""
    try:
        return HfApi(endpoint=endpoint, token=token).list_repo_files(repo_id, revision=revision)
    except GatedRepoError:
        raise PermissionError(f"{repo_id}: a gated repository; accept its conditions on the hub and pass token= "
                              "(or log in with `hf auth login`)") from None
    except RepositoryNotFoundError:
        raise FileNotFoundError(f"{repo_id}: no such file or folder here, nor a model repository on the Hugging "
                                "Face hub (a private one needs token= or `hf auth login`)") from None
    except RevisionNotFoundError:
        raise FileNotFoundError(f"{repo_id}: the hub has no revision {revision!r} of it (a branch, tag or "
                                "commit)") from None
    except OSError:  # huggingface_hub's HTTP errors (a hub that is down, a proxy's refusal) are OSErrors
        return None
    except Exception as error:  # noqa: BLE001 (the HTTP client's own connection errors: httpx's or requests')
        if type(error).__module__.split(".")[0] in ("httpx", "httpx2", "requests", "urllib3"):
            return None
        raise


def resolve(path_or_id, revision=None, cache_dir=None, token=None, local_files_only=None, force_download=False,
            tokenizer_only=False):
    """The local path of a checkpoint given as a path or as a Hugging Face hub id.

    Args:
        path_or_id: a path (returned as it is when it exists, or when it is no valid hub id) or a hub id.
        revision: a branch, tag or commit of the repository (default: its main branch).
        cache_dir: the hub cache to use instead of `HF_HUB_CACHE` / `HF_HOME`.
        token: for private or gated repositories (default: the one `hf auth login` saved).
        local_files_only: only the cache, never the network (default: `HF_HUB_OFFLINE`).
        force_download: download again even when cached.
        tokenizer_only: fetch the tokenizer files only (and `config.json`), not the weights.

    Returns the folder of the repository's snapshot. Raises FileNotFoundError (offline and not cached, or no
    such repository), ValueError (only `pytorch_model.bin`), ConnectionError (the hub cannot be reached and
    the files are not cached), each in one line naming the id.
    """
    path = os.fspath(path_or_id)
    if _exists_here(path) or not is_hub_id(path):
        return path
    offline, cache = is_offline(local_files_only), cache_folder(cache_dir)
    endpoint = os.environ.get("HF_ENDPOINT") or None
    patterns = [*CONFIG_PATTERNS, *TOKENIZER_PATTERNS] if tokenizer_only else list(MODEL_PATTERNS)
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
    except LocalEntryNotFoundError:
        if offline:
            raise _not_cached_error(path, cache, revision, "offline: HF_HUB_OFFLINE=1 or local_files_only=True") \
                from None
        raise ConnectionError(f"{path}: the Hugging Face hub ({endpoint or 'huggingface.co'}) cannot be reached "
                              f"and the model is not in the cache {cache}; check the network (or HTTPS_PROXY), or "
                              f"get it with `hf download {path}` elsewhere and copy the cache") from None
    if files is None and not tokenizer_only:  # from the cache alone: what it holds is all there is
        present = os.listdir(folder)
        if not _matches(present, (*WEIGHT_PATTERNS, TF_WEIGHTS)):
            if PICKLED_WEIGHTS in present:
                raise _pickle_only_error(path)
            raise _not_cached_error(path, cache, revision, f"its cached snapshot {folder} holds no weights")
    return folder
