"""Finding and loading pre-trained models: the `from_pretrained` sources.

A pre-trained model is a folder as `tools/run_pretraining.py` writes it
(`<model_dir>/final/`, or the run folder itself): `config.json`,
`discriminator.keras` and `vocab.txt`.

Example:
>>> pretrained_dir("no/such/folder")
Traceback (most recent call last):
...
ValueError: no/such/folder: no pre-trained ELECTRA here (expected config.json and discriminator.keras, as tools/run_pretraining.py writes them in <model_dir>/final)
"""

import os

import keras

from electra_tf.config import load_run_config


def pretrained_dir(path):
    """The folder holding `config.json` and `discriminator.keras` of a pre-training run."""
    for candidate in (path, os.path.join(path, "final")):
        if os.path.exists(os.path.join(candidate, "config.json")) and os.path.exists(
                os.path.join(candidate, "discriminator.keras")):
            return candidate
    raise ValueError(f"{path}: no pre-trained ELECTRA here (expected config.json and discriminator.keras, "
                     "as tools/run_pretraining.py writes them in <model_dir>/final)")


def load_pretrained_encoder(path):
    """The discriminator's `ElectraModel` (weights included) from a pre-training run."""
    folder = pretrained_dir(path)
    discriminator = keras.saving.load_model(os.path.join(folder, "discriminator.keras"), safe_mode=True)
    model_config, _ = load_run_config(os.path.join(folder, "config.json"))
    if discriminator.config != model_config:
        raise ValueError(f"{folder}: discriminator.keras does not match config.json")
    return discriminator.backbone


def vocabulary_file(path):
    """The `vocab.txt` of a pre-trained model folder (or a path to the file itself)."""
    if os.path.isfile(path):
        return path
    for candidate in (path, os.path.join(path, "final")):
        if os.path.exists(os.path.join(candidate, "vocab.txt")):
            return os.path.join(candidate, "vocab.txt")
    raise ValueError(f"{path}: no vocab.txt here (tools/run_pretraining.py writes one in <model_dir>/final)")
