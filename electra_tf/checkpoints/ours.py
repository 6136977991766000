"""Our own format: a run folder (`run_config.json`, `discriminator.keras`, `generator.keras`, `vocab.txt`), a model
folder (`model.keras`, its tokenizer files and `electra_tf.json`) or a `.keras` file, loaded with `safe_mode=True`.

Example:
>>> import tempfile
>>> from electra_tf import ElectraConfig, ElectraDiscriminator, PretrainingConfig
>>> config = ElectraConfig(vocab_size=30, embedding_size=8, hidden_size=16, num_layers=1, num_heads=2,
...                        intermediate_size=32)
>>> folder = tempfile.mkdtemp()
>>> write_run_folder(folder, {"discriminator": ElectraDiscriminator(config)}, config, PretrainingConfig())
>>> sorted(os.listdir(folder))
['discriminator.keras', 'run_config.json']
"""

import collections
import json
import os
import zipfile

import keras

import electra_tf
from electra_tf.util.atomic import atomic_folder, read_json, write_json
from electra_tf.config import save_run_config
from electra_tf.text.vocabulary import VOCAB_FILE, save_vocabulary, vocabulary_hash
from electra_tf.version import VERSION_FIELD, __version__

# Not `config.json` (a Hugging Face or keras-hub folder's), where older run folders hold it and still load.
RUN_CONFIG = "run_config.json"
LEGACY_RUN_CONFIG = "config.json"
NETWORK_FILES = {"discriminator": "discriminator.keras", "generator": "generator.keras"}
SINGLE_MODEL_FILE = "model.keras"
MODEL_INFO = "electra_tf.json"
# The JSON type of each field an `electra_tf.json` holds (null: not recorded); `read_model_info` refuses another.
INFO_TYPES = {"class": str, "serving_task": str, "hf_architecture": str, "task": str, "word_unit": str,
              "vocabulary_sha256": str, "label_names": list, "vocabulary_size": int, "max_seq_length": int,
              "max_query_length": int, "max_answer_length": int, "text_pair": bool, "version_2": bool,
              "null_threshold": float, VERSION_FIELD: str}
_JSON_KINDS = {str: "a string", list: "a list", dict: "an object", int: "an integer", float: "a number",
               bool: "a boolean"}
# Where a run leaves its model inside the folder a user may name: `<model_dir>/final`, `trial_<i>/model`.
RUN_MODEL_FOLDERS = ("final", "model")


def run_config_file(folder):
    """`<folder>/run_config.json`, or `config.json` in a run folder written before it was so named.

    >>> run_config_file("runs/small/final")
    'runs/small/final/run_config.json'
    """
    path = os.path.join(folder, RUN_CONFIG)
    legacy = os.path.join(folder, LEGACY_RUN_CONFIG)
    return legacy if not os.path.exists(path) and os.path.exists(legacy) else path


def candidate_folders(path):
    """`path` and the model folders a run writes inside it, in the order they are tried.

    >>> candidate_folders("runs/sst2/trial_0")
    ['runs/sst2/trial_0', 'runs/sst2/trial_0/final', 'runs/sst2/trial_0/model']
    """
    return [path, *(os.path.join(path, name) for name in RUN_MODEL_FOLDERS)]


def load_keras(path):
    """One of our models from a `.keras` file; a ValueError naming the file when it is not one."""
    if os.path.isfile(path):
        with open(path, "rb"):  # an unreadable file is an OSError naming it, not a damaged archive
            pass
        if not zipfile.is_zipfile(path):
            raise ValueError(f"{path}: not a .keras file (those are zip archives): truncated or damaged?")
    electra_tf.register_keras_objects()  # the classes the file names (the package imports them lazily)
    try:
        return keras.saving.load_model(path, safe_mode=True)
    except (ValueError, OSError, TypeError) as e:
        raise ValueError(f"{path}: not a loadable Keras model of ours ({e})") from None


def write_model_info(folder, info):
    """Writes `electra_tf.json` with the electra_tf version (last: it marks the folder complete)."""
    write_json(os.path.join(folder, MODEL_INFO), {**info, VERSION_FIELD: __version__})


def read_model_info(folder):
    """The `electra_tf.json` of a model folder (`{}` when none); a field of the wrong JSON type is refused.

    >>> import json, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, MODEL_INFO), "w") as f:
    ...     json.dump({"max_seq_length": "64"}, f)
    >>> read_model_info(folder)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: .../electra_tf.json: max_seq_length must be an integer, got '64' (a string); write it as 64, \
    or save the folder again
    """
    path = os.path.join(folder, MODEL_INFO)
    info = read_json(path, expect=dict) if os.path.exists(path) else {}
    for field, kind in INFO_TYPES.items():
        value = info.get(field)
        if value is not None and not _is_json(value, kind):
            fix = f"write it as {value}" if isinstance(value, str) and _is_json(_parsed(value), kind) else \
                "correct it"
            raise ValueError(f"{path}: {field} must be {_JSON_KINDS[kind]}, got {value!r} "
                             f"({_JSON_KINDS[type(value)]}); {fix}, or save the folder again")
    return info


def _is_json(value, kind):
    """Whether `value` is of the JSON type `kind` (an int is a float's; a bool is no number)."""
    if isinstance(value, bool):
        return kind is bool
    return isinstance(value, (int, float) if kind is float else kind)


def _parsed(text):
    """`text` as a JSON value, or None."""
    try:
        return json.loads(text)
    except ValueError:
        return None


def check_model_info(info, model, path):
    """Refuses an `electra_tf.json` that does not describe the model file `path` beside it (its class, its labels)."""
    info_file = os.path.join(os.path.dirname(os.path.abspath(path)), MODEL_INFO)
    saved_class = info.get("class")
    if saved_class is not None and saved_class != type(model).__name__:
        raise ValueError(f"{info_file} says the folder holds a {saved_class}, but {path} is a "
                         f"{type(model).__name__}: the model file was replaced; save the folder again")
    _check_label_names(info, getattr(model, "num_labels", None), info_file, path)


def check_weights_info(info, architecture, num_labels, folder):
    """Refuses an `electra_tf.json` that does not describe the Hugging Face weights in `folder` (their class, labels).

    >>> check_weights_info({"class": "ElectraForSequenceClassification",
    ...                     "hf_architecture": "ElectraForSequenceClassification"}, "ElectraForPreTraining", None,
    ...                    "models/sst2")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: models/sst2/electra_tf.json says the folder holds a ElectraForSequenceClassification ...
    """
    info_file = os.path.join(folder, MODEL_INFO)
    described = info.get("hf_architecture")
    if described is not None and described != architecture:
        raise ValueError(f"{info_file} says the folder holds a {info.get('class') or described} (Hugging Face class "
                         f"{described}), but the weights in {folder} are a {architecture}'s: they were replaced (or "
                         f"{MODEL_INFO} copied from another folder); save the folder again, or remove {MODEL_INFO} to "
                         "read the weights as they are")
    _check_label_names(info, num_labels, info_file, folder)


def _check_label_names(info, num_labels, info_file, path):
    """Refuses `label_names` that are not one distinct name per label."""
    names = info.get("label_names")
    if names is None:
        return
    if not isinstance(names, list) or (num_labels is not None and len(names) != num_labels):
        count = f"{len(names)} label_names" if isinstance(names, list) else f"label_names {names!r}"
        raise ValueError(f"{info_file}: {count} for the {num_labels} labels of {path}; give one name per label, "
                         "in id order")
    duplicates = [name for name, n in collections.Counter(map(str, names)).items() if n > 1]
    if duplicates:
        raise ValueError(f"{info_file}: duplicate label_names {duplicates}; each label needs its own name")


def write_run_folder(folder, networks, model_config, pretraining, vocabulary=None, extra_files=None):
    """Writes a run folder whole: `networks` (`{"discriminator": model, "generator": model}`) as `.keras`,
    `run_config.json`, `vocab.txt` given a vocabulary, and what `extra_files(tmp_folder)` writes."""
    with atomic_folder(folder) as tmp:
        for name, network in networks.items():
            if network is not None:
                network.save(os.path.join(tmp, NETWORK_FILES[name]))
        save_run_config(os.path.join(tmp, RUN_CONFIG), model_config, pretraining,
                        None if vocabulary is None else vocabulary_hash(vocabulary))
        if vocabulary is not None:
            save_vocabulary(vocabulary, os.path.join(tmp, VOCAB_FILE))
        if extra_files is not None:
            extra_files(tmp)
