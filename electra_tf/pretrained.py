"""Finding and loading pre-trained models: the `from_pretrained` sources.

`from_pretrained(path)` (on every model class, and `ElectraTokenizer`) takes
any of three formats, recognised by their files:

- **ours**: a folder as `tools/run_pretraining.py` writes it (`<model_dir>/final/`,
  or the run folder itself): `config.json` (`{"model": …, "pretraining": …}`),
  `discriminator.keras` (and `generator.keras`), `vocab.txt`; or a `.keras` file
  of any of our models;
- **Hugging Face**: a folder with `config.json` (`model_type` electra, or bert
  for the encoder) and `model.safetensors`;
- **Google** (the original TF1 code): a checkpoint prefix such as
  `electra_small/model.ckpt-1000000`, or its folder.

A model of another class than the checkpoint's keeps the encoder and starts a
new head (see `electra_tf.checkpoints.transfer`). Loading is strict: missing,
unexpected or mis-shaped weights are an error listing them
(`allow_missing=True` / `allow_unexpected=True` relax it), and a failed load
assigns nothing. The tokenizer comes from `vocab.txt` or `tokenizer.json`
beside the weights.

Example:
>>> read_source("no/such/folder")
Traceback (most recent call last):
...
ValueError: no/such/folder: no pre-trained ELECTRA here. Expected our own saved model (config.json and discriminator.keras, as tools/run_pretraining.py writes them in <model_dir>/final, or a .keras file), a Hugging Face folder (config.json and model.safetensors) or a Google checkpoint (a prefix such as model.ckpt-1000000, or its folder)
"""

import dataclasses
import json
import os
import zipfile

from electra_tf.checkpoints import google, hf, mapping, transfer
from electra_tf.checkpoints.loading import apply
from electra_tf.config import ElectraConfig, PretrainingConfig, generator_config, load_run_config

OURS, HUGGINGFACE, GOOGLE = "electra_tf", "huggingface", "google"
_NETWORK_FILES = ("discriminator.keras", "generator.keras")
# One model of ours (a task model, an encoder) in a folder, as tools/convert_checkpoint.py writes it.
SINGLE_MODEL_FILE = "model.keras"


@dataclasses.dataclass
class Network:
    """One network of a checkpoint: its config, the Hugging Face class of its weights, and the
    weights as a Hugging Face-keyed state dict."""

    config: ElectraConfig
    architecture: str | None
    state: dict


@dataclasses.dataclass
class Source:
    """A checkpoint in any format, read: `networks["model"]` (the discriminator, or the only model)
    and, for a pre-training checkpoint, `networks["generator"]`."""

    format: str
    path: str
    folder: str
    networks: dict
    pretraining: PretrainingConfig | None = None
    num_labels: int | None = None
    classifier_dropout: float | None = None
    model: object = None  # one of our Keras models, as saved (a `.keras` file)

    @property
    def config(self):
        return self.networks["model"].config

    def network_for(self, cls):
        from electra_tf.models.generator import ElectraGenerator

        wants_generator = isinstance(cls, type) and issubclass(cls, ElectraGenerator)
        return self.networks.get("generator") if wants_generator and "generator" in self.networks \
            else self.networks["model"]


def _no_model_error(path):
    return ValueError(
        f"{path}: no pre-trained ELECTRA here. Expected our own saved model (config.json and discriminator.keras, "
        "as tools/run_pretraining.py writes them in <model_dir>/final, or a .keras file), a Hugging Face folder "
        "(config.json and model.safetensors) or a Google checkpoint (a prefix such as model.ckpt-1000000, or its "
        "folder)")


def _own_network(model):
    """A `Network` of one of our Keras models (original heads, which have no Hugging Face names, left out)."""
    return Network(mapping.encoder_of(model).config, mapping.hf_architecture(model),
                   mapping.model_state(model, strict=False))


def _load_keras(path):
    import keras

    import electra_tf  # noqa: F401  (registers our classes for deserialisation)
    if os.path.isfile(path) and not zipfile.is_zipfile(path):
        raise ValueError(f"{path}: not a .keras file (those are zip archives): truncated or damaged?")
    try:
        return keras.saving.load_model(path, safe_mode=True)
    except (ValueError, OSError, TypeError) as e:
        raise ValueError(f"{path}: not a loadable Keras model of ours ({e})") from None


def _own_file(path):
    from electra_tf.models.pretrainer import ElectraPretrainer

    model = _load_keras(path)
    folder = os.path.dirname(os.path.abspath(path))
    if isinstance(model, ElectraPretrainer):
        networks = {"model": _own_network(model.discriminator if model.is_electra else model.generator)}
        if model.is_electra:
            networks["generator"] = _own_network(model.generator)
        return Source(OURS, path, folder, networks, pretraining=model.pretraining_config)
    try:
        network = _own_network(model)
    except TypeError:
        raise ValueError(f"{path}: a Keras model, but not one of electra_tf's") from None
    return Source(OURS, path, folder, {"model": network}, model=model)


def _own_folder(folder):
    model_config, pretraining = load_run_config(os.path.join(folder, "config.json"))
    networks = {}
    for name in ("discriminator", "generator"):
        file = os.path.join(folder, f"{name}.keras")
        if not os.path.exists(file):
            continue
        network = _own_network(_load_keras(file))
        expected = model_config if name == "discriminator" or pretraining.objective == "mlm" \
            else generator_config(model_config, pretraining)
        if network.config != expected:
            raise ValueError(f"{folder}: {name}.keras does not match config.json")
        networks["generator" if name == "generator" and networks else "model"] = network
    return Source(OURS, folder, folder, networks, pretraining=pretraining)


def _hf_folder(folder):
    checkpoint = hf.read_folder(folder)
    return Source(HUGGINGFACE, folder, folder,
                  {"model": Network(checkpoint.config, checkpoint.architecture, checkpoint.state)},
                  num_labels=checkpoint.num_labels, classifier_dropout=checkpoint.classifier_dropout)


def _google(prefix, path, run_config=None):
    import numpy as np

    checkpoint = google.read_checkpoint(prefix, *(run_config or (None, None)))
    # Variables of neither network (an Electric or fine-tuned checkpoint's) count as the discriminator's
    # unexpected weights, so the strict loader lists them and `allow_unexpected=True` ignores them.
    unknown = {name: np.broadcast_to(np.float32(0), shape) for name, shape in checkpoint.unrecognized.items()}
    networks = {"model": Network(checkpoint.config, checkpoint.architecture, {**checkpoint.discriminator, **unknown})}
    if checkpoint.generator is not None:
        networks["generator"] = Network(checkpoint.generator_config, "ElectraForMaskedLM", checkpoint.generator)
    return Source(GOOGLE, path, os.path.dirname(os.path.abspath(prefix)), networks,
                  pretraining=checkpoint.pretraining)


def detect_format(path):
    """`(format, location)`: which format `path` holds and where (a folder, file or prefix); a ValueError
    when none."""
    path = os.fspath(path)
    if os.path.isfile(path) and path.endswith(".keras"):
        return OURS, path
    if os.path.isdir(path):
        if os.path.isfile(os.path.join(path, SINGLE_MODEL_FILE)):
            return OURS, os.path.join(path, SINGLE_MODEL_FILE)
        for folder in (path, os.path.join(path, "final")):
            config_file = os.path.join(folder, "config.json")
            if not os.path.exists(config_file):
                continue
            try:
                with open(config_file, encoding="utf-8") as f:
                    values = json.load(f)
            except json.JSONDecodeError as e:
                raise ValueError(f"{config_file}: not valid JSON ({e})") from None
            if hf.is_hf_config(values):
                return HUGGINGFACE, folder
            if any(os.path.exists(os.path.join(folder, name)) for name in _NETWORK_FILES):
                return OURS, folder
    prefix = google.checkpoint_prefix(path)
    if prefix is not None and google.is_google_checkpoint(prefix):
        return GOOGLE, prefix
    raise _no_model_error(path)


def read_source(path, run_config=None):
    """The checkpoint at `path`, in whichever format, read into a `Source`. `run_config`
    (`(ElectraConfig, PretrainingConfig)`) replaces a Google checkpoint's inferred config."""
    kind, location = detect_format(path)
    if kind == HUGGINGFACE:
        return _hf_folder(location)
    if kind == GOOGLE:
        return _google(location, os.fspath(path), run_config)
    return _own_file(location) if location.endswith(".keras") else _own_folder(location)


def read_config(path):
    """The (discriminator's) `ElectraConfig` of a checkpoint in any format."""
    return read_source(path).config


def _default_arguments(cls, source, network, arguments):
    """Task arguments the checkpoint implies, where the caller left them out."""
    import inspect

    arguments = dict(arguments)
    parameters = inspect.signature(cls.__init__).parameters
    same_class = network.architecture == cls.__name__
    if same_class and source.format != OURS and "head" in parameters:
        arguments.setdefault("head", "huggingface")
    if same_class and "num_labels" in parameters and source.num_labels is not None:
        arguments.setdefault("num_labels", source.num_labels)
    if same_class and "classifier_dropout" in parameters and source.classifier_dropout is not None:
        arguments.setdefault("classifier_dropout", source.classifier_dropout)
    return arguments


def _as_saved(model, cls, arguments):
    """Whether `model` (loaded as saved) is what `cls(…, **arguments)` asks for."""
    if type(model) is not cls:
        return False
    saved = {**getattr(model, "_arguments", {}),
             "output_hidden_states": getattr(model, "output_hidden_states", None)}
    return all(saved.get(key) == value for key, value in arguments.items())


def load_pretrained(cls, path, allow_missing=False, allow_unexpected=False, **arguments):
    """`cls(config, **arguments)` with the weights of the checkpoint at `path` (see the module docstring)."""
    return model_from_source(cls, read_source(path), allow_missing, allow_unexpected, **arguments)


def model_from_source(cls, source, allow_missing=False, allow_unexpected=False, **arguments):
    """`load_pretrained` on a `Source` already read."""
    if source.model is not None and _as_saved(source.model, cls, arguments):
        return source.model
    network = source.network_for(cls)
    model = cls(network.config, **_default_arguments(cls, source, network, arguments))
    transfer.load_state(model, network.state, network.architecture, allow_missing=allow_missing,
                        allow_unexpected=allow_unexpected, source=f"{source.path} ({source.format})")
    return model


def _same_model(a, b):
    """The fields of two configs that change the weights or the outputs (dropout rates aside)."""
    ignored = ("hidden_dropout", "attention_dropout")
    return {k: (v, b.to_dict()[k]) for k, v in a.to_dict().items() if k not in ignored and b.to_dict()[k] != v}


def load_pretrainer_weights(pretrainer, path, allow_missing=False, allow_unexpected=False):
    """Loads the discriminator and the generator of `pretrainer` (an `ElectraPretrainer`) from a checkpoint
    in any format that holds both (ours, or Google's); all-or-nothing. Returns `{network: LoadReport}`."""
    source = read_source(path)
    name = f"{os.fspath(path)} ({source.format})"
    parts = ([("discriminator", "model"), ("generator", "generator")] if pretrainer.is_electra
             else [("generator", "model")])
    planned = []
    for attribute, key in parts:
        network = getattr(pretrainer, attribute)
        if key not in source.networks:
            raise ValueError(f"{name}: has no generator to initialise this pre-training's generator from "
                             "(continued pre-training needs both networks; convert a discriminator and a generator "
                             "together with tools/convert_checkpoint.py)")
        differing = _same_model(source.networks[key].config, network.config)
        if differing:
            raise ValueError(f"{name}: its {attribute} has another model config (field: (checkpoint, this run)): "
                             f"{differing}")
        planned.append((attribute, network, source.networks[key]))
    if pretrainer.is_electra and not pretrainer.pretraining_config.untied_generator_embeddings:
        embeddings = [key for key in planned[0][2].state if key.startswith("electra.embeddings.")]
        differing = [key for key in embeddings if key in planned[1][2].state
                     and (planned[0][2].state[key].shape != planned[1][2].state[key].shape
                          or (planned[0][2].state[key] != planned[1][2].state[key]).any())]
        if differing:
            raise ValueError(f"{name}: the generator's embeddings differ from the discriminator's ({differing[:3]}), "
                             "but this pre-training ties them (set untied_generator_embeddings to keep both)")
    reports, assignments = {}, []
    for attribute, network, checkpoint in planned:
        report, pending = transfer.plan_state(network, checkpoint.state, checkpoint.architecture, allow_missing,
                                              allow_unexpected, f"{name} {attribute}")
        reports[attribute] = report
        assignments += pending
    apply(assignments)
    for attribute, network, _ in planned:
        transfer.log_report(network, reports[attribute], name)
    return reports


def save_pretrained(folder, discriminator=None, generator=None, model_config=None, pretraining=None,
                    vocabulary=None):
    """Writes our own format: `config.json`, `discriminator.keras`/`generator.keras` (and `.weights.h5`),
    `vocab.txt`, as `tools/run_pretraining.py` writes `<model_dir>/final`."""
    from electra_tf.config import save_run_config
    from electra_tf.tokenization import save_vocabulary

    os.makedirs(folder, exist_ok=True)
    for name, network in (("discriminator", discriminator), ("generator", generator)):
        if network is not None:
            network.save(os.path.join(folder, f"{name}.keras"))
            network.save_weights(os.path.join(folder, f"{name}.weights.h5"))
    model_config = model_config or mapping.encoder_of(discriminator or generator).config
    save_run_config(os.path.join(folder, "config.json"), model_config, pretraining or PretrainingConfig())
    if vocabulary is not None:
        save_vocabulary(list(vocabulary), os.path.join(folder, "vocab.txt"))


# === Tokenizer files ===

def tokenizer_arguments(path):
    """`(vocabulary, lowercase, strip_accents)` for the checkpoint at `path` (any format), or for a
    `vocab.txt`/`tokenizer.json` path; `lowercase`/`strip_accents` are None where the files do not say."""
    path = os.fspath(path)
    if os.path.isfile(path):
        if path.endswith(".json"):
            return hf.tokenizer_json_settings(path)
        if not path.endswith(".keras"):
            return path, None, None
    if os.path.isdir(path):
        folders = [path, os.path.join(path, "final")]
    else:
        prefix = google.checkpoint_prefix(path)
        folders = [os.path.dirname(os.path.abspath(prefix or path))]
    for folder in folders:
        if os.path.isdir(folder):
            settings = hf.tokenizer_settings(folder)
            if settings is not None:
                return settings
    raise ValueError(f"{path}: no vocab.txt (nor tokenizer.json) here; tools/run_pretraining.py writes one in "
                     "<model_dir>/final, Hugging Face and Google checkpoints ship one beside the weights")


def vocabulary_file(path):
    """The `vocab.txt` of a pre-trained model folder (or a path to the file itself)."""
    vocabulary, _, _ = tokenizer_arguments(path)
    if not isinstance(vocabulary, str):
        raise ValueError(f"{path}: its vocabulary is in tokenizer.json, not in a vocab.txt")
    return vocabulary


# === Kept for callers of the first version (our own format) ===

def pretrained_dir(path):
    """The folder holding `config.json` and `discriminator.keras` of a pre-training run."""
    kind, location = detect_format(path)
    if kind != OURS or location.endswith(".keras"):
        raise ValueError(f"{path}: a {kind} checkpoint, not a folder tools/run_pretraining.py wrote "
                         "(use electra_tf.pretrained.read_config for its config)")
    return location


def load_pretrained_encoder(path):
    """The discriminator's `ElectraModel` (weights included), from a checkpoint in any format."""
    from electra_tf.models.encoder import ElectraModel

    return load_pretrained(ElectraModel, path)
