"""A checkpoint in any format (ours, Hugging Face, Google, keras-hub, or a hub id), recognised by its files and read
into one shape, a `Source`: each network's config, Hugging Face class and Hugging Face-keyed state dict.

Example:
>>> import tempfile
>>> read_source(tempfile.mkdtemp())  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: ...: no pre-trained ELECTRA here. Expected our own saved model (run_config.json and
discriminator.keras, as tools/run_pretraining.py writes them in <model_dir>/final, or a .keras file), a
Hugging Face folder (config.json and model.safetensors) or a Google checkpoint (a prefix such as
model.ckpt-1000000, or its folder)
>>> read_source("no/such/folder")
Traceback (most recent call last):
...
FileNotFoundError: no/such/folder: does not exist (no file, folder or checkpoint prefix of that name)
"""

import dataclasses
import errno
import os

import numpy as np

from electra_tf.util.atomic import read_json
from electra_tf.checkpoints import google, hf, hub, keras_hub_preset, mapping, ours
from electra_tf.config import ElectraConfig, PretrainingConfig, generator_config, load_run_config

OURS, HUGGINGFACE, GOOGLE, KERAS_HUB = "electra_tf", "huggingface", "google", "keras_hub"


@dataclasses.dataclass
class Network:
    """One network of a checkpoint: its config, the Hugging Face class of its weights, and their state dict."""

    config: ElectraConfig
    architecture: str | None
    state: dict


@dataclasses.dataclass
class Source:
    """A checkpoint read: `networks["model"]` (the discriminator, or the only model) and, for a pre-training
    checkpoint, `networks["generator"]`."""

    format: str
    path: str
    folder: str
    networks: dict
    pretraining: PretrainingConfig | None = None
    num_labels: int | None = None
    classifier_dropout: float | None = None
    model: object = None  # one of our Keras models, as saved (a `.keras` file)
    info: dict = dataclasses.field(default_factory=dict)  # what the folder says of the model (label names, ...)

    @property
    def config(self):
        return self.networks["model"].config

    def network_for(self, hf_class):
        """The network a model of `hf_class` loads: the generator for a masked LM if there is one, else the main one."""
        if hf_class == "ElectraForMaskedLM" and "generator" in self.networks:
            return self.networks["generator"]
        return self.networks["model"]


def _no_model_error(path):
    return ValueError(
        f"{path}: no pre-trained ELECTRA here. Expected our own saved model (run_config.json and discriminator.keras, "
        "as tools/run_pretraining.py writes them in <model_dir>/final, or a .keras file), a Hugging Face folder "
        "(config.json and model.safetensors) or a Google checkpoint (a prefix such as model.ckpt-1000000, or its "
        "folder)")


def _path_error(path):
    """Why `path` cannot be reached (missing, a dangling or looping link, unreadable), or None when it can be."""
    try:
        os.stat(path)
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:
            return ValueError(f"{path}: its symbolic links loop (each points, in the end, at itself); point the "
                              "link at the model folder")
        if error.errno == errno.ENOENT and os.path.islink(path):
            return FileNotFoundError(f"{path}: a symbolic link to {os.readlink(path)}, which does not exist")
        if error.errno == errno.ENOENT:
            return FileNotFoundError(f"{path}: does not exist (no file, folder or checkpoint prefix of that name)")
        return error


def network_of(model):
    """The `Network` of one of our Keras models (original heads, which have no Hugging Face names, left out)."""
    return Network(mapping.backbone_of(model).config, model.hf_architecture, mapping.model_state(model, strict=False))


def _own_file(path):
    model = ours.load_keras(path)
    folder = os.path.dirname(os.path.abspath(path))
    if hasattr(model, "checkpoint_networks"):  # a pre-trainer, which declares the networks it holds
        return Source(OURS, path, folder, {key: network_of(network) for key, network in
                                           model.checkpoint_networks().items()}, pretraining=model.pretraining_config)
    if not hasattr(model, "hf_architecture"):  # what every one of our models declares
        raise ValueError(f"{path}: a Keras model, but not one of electra_tf's")
    info = ours.read_model_info(folder)
    ours.check_model_info(info, model, path)
    return Source(OURS, path, folder, {"model": network_of(model)}, model=model, info=info)


def _own_folder(folder):
    config_file = ours.run_config_file(folder)
    model_config, pretraining = load_run_config(config_file)
    networks = {}
    for name, file in ours.NETWORK_FILES.items():
        file = os.path.join(folder, file)
        if not os.path.exists(file):
            continue
        network = network_of(ours.load_keras(file))
        # (an MLM run's generator config is the model's: `generator_config` says so)
        expected = model_config if name == "discriminator" else generator_config(model_config, pretraining)
        if network.config != expected:
            raise ValueError(f"{folder}: {name}.keras does not match {os.path.basename(config_file)}")
        networks["generator" if name == "generator" and networks else "model"] = network
    return Source(OURS, folder, folder, networks, pretraining=pretraining)


def _hf_folder(folder):
    checkpoint = hf.read_folder(folder)
    # A folder our `save_pretrained` wrote has an `electra_tf.json`, which must not contradict config.json.
    info = ours.read_model_info(folder)
    ours.check_weights_info(info, checkpoint.architecture, checkpoint.num_labels, folder)
    if checkpoint.label_names:
        described = info.get("label_names")
        if described is not None and [str(name) for name in described] != list(checkpoint.label_names):
            raise ValueError(f"{os.path.join(folder, ours.MODEL_INFO)} names the labels {described} but "
                             f"{os.path.join(folder, 'config.json')} names them {list(checkpoint.label_names)} "
                             "(id2label): one was edited; make them agree, or save the folder again")
        info["label_names"] = checkpoint.label_names
    return Source(HUGGINGFACE, folder, folder,
                  {"model": Network(checkpoint.config, checkpoint.architecture, checkpoint.state)},
                  num_labels=checkpoint.num_labels, classifier_dropout=checkpoint.classifier_dropout, info=info)


def _google(prefix, path, run_config=None):
    checkpoint = google.read_checkpoint(prefix, *(run_config or (None, None)))
    # Variables of neither network (an Electric or fine-tuned checkpoint's): the discriminator's unexpected weights.
    unknown = {name: np.broadcast_to(np.float32(0), shape) for name, shape in checkpoint.unrecognized.items()}
    networks = {"model": Network(checkpoint.config, checkpoint.architecture, {**checkpoint.discriminator, **unknown})}
    if checkpoint.generator is not None:
        networks["generator"] = Network(checkpoint.generator_config, "ElectraForMaskedLM", checkpoint.generator)
    return Source(GOOGLE, path, os.path.dirname(os.path.abspath(prefix)), networks,
                  pretraining=checkpoint.pretraining)


def _keras_hub(folder):
    config, state = keras_hub_preset.read_preset(folder)
    return Source(KERAS_HUB, folder, folder, {"model": Network(config, "ElectraModel", state)})


def _holds_networks(folder):
    return any(os.path.exists(os.path.join(folder, name)) for name in ours.NETWORK_FILES.values())


def detect_format(path):
    """`(format, location)` of what `path` holds (a folder, file or prefix); a ValueError when none."""
    path = os.fspath(path)
    if os.path.isfile(path) and path.endswith(".keras"):
        return OURS, path
    if os.path.isdir(path):
        for folder in ours.candidate_folders(path):
            if os.path.isfile(os.path.join(folder, ours.SINGLE_MODEL_FILE)):
                return OURS, os.path.join(folder, ours.SINGLE_MODEL_FILE)
        for folder in ours.candidate_folders(path):
            if os.path.exists(os.path.join(folder, ours.RUN_CONFIG)) and _holds_networks(folder):
                return OURS, folder
            config_file = os.path.join(folder, hf.CONFIG_NAME)  # Hugging Face's, keras-hub's, or our older runs'
            if not os.path.exists(config_file):
                continue
            if keras_hub_preset.is_keras_hub_preset(folder):
                return KERAS_HUB, folder
            if hf.is_hf_config(read_json(config_file)):
                return HUGGINGFACE, folder
            if _holds_networks(folder):
                return OURS, folder
    prefix = google.checkpoint_prefix(path)
    if prefix is not None and google.is_google_checkpoint(prefix):
        return GOOGLE, prefix
    raise _path_error(path) or _no_model_error(path)


def read_source(path, run_config=None, **hub_options):
    """The checkpoint at `path` (or hub id, `hub_options` going to `hub.resolve`) read into a `Source`; `run_config`
    (`(ElectraConfig, PretrainingConfig)`) replaces a Google checkpoint's inferred config."""
    path = hub.resolve(path, **hub_options)
    kind, location = detect_format(path)
    if kind == HUGGINGFACE:
        return _hf_folder(location)
    if kind == GOOGLE:
        return _google(location, os.fspath(path), run_config)
    if kind == KERAS_HUB:
        return _keras_hub(location)
    return _own_file(location) if location.endswith(".keras") else _own_folder(location)


def read_config(path):
    """The (discriminator's) `ElectraConfig` of a checkpoint, from its config file if it has one (no weights read)."""
    path = hub.resolve(path)
    kind, location = detect_format(path)
    if kind == HUGGINGFACE:
        return hf.pretrained_config(location)
    if kind == OURS and not location.endswith(".keras"):
        return load_run_config(ours.run_config_file(location))[0]
    return read_source(path).config
