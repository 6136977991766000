"""Reading a keras-hub ELECTRA preset (`ElectraBackbone.save_to_preset`'s folder): its transformer variables have
our names, the embedding block's are mapped (`NAMES`); its tanh GELU reads as `hidden_act="gelu_approximate"`.
Writing one is `electra_tf.export.keras_hub.save_keras_hub_preset`.

Example:
>>> [ours for hub, ours in NAMES if hub.startswith("token")]
['embeddings/word_embeddings/embeddings']
"""

import os

import keras_hub

from electra_tf.util.atomic import read_json
from electra_tf.checkpoints import mapping
from electra_tf.config import ElectraConfig

CONFIG_FILE, TOKENIZER_FILE, VOCABULARY_FILE = "config.json", "tokenizer.json", "assets/tokenizer/vocabulary.txt"
# keras-hub's embedding variables → ours (inside the encoder); the transformer layers share their names.
NAMES = (
    ("token_embedding/embeddings", "embeddings/word_embeddings/embeddings"),
    ("position_embedding/embeddings", "embeddings/position_embeddings/embeddings"),
    ("segment_embedding/embeddings", "embeddings/token_type_embeddings/embeddings"),
    ("embeddings_layer_norm/gamma", "embeddings/layer_norm/gamma"),
    ("embeddings_layer_norm/beta", "embeddings/layer_norm/beta"),
    ("embeddings_projection/kernel", "embeddings_project/kernel"),
    ("embeddings_projection/bias", "embeddings_project/bias"),
)


def hub_name(ours):
    """keras-hub's name for one of our encoder's variables."""
    return dict((o, h) for h, o in NAMES).get(ours, ours)


def is_keras_hub_preset(folder):
    """Whether `folder` holds a keras-hub ELECTRA backbone preset."""
    path = os.path.join(folder, CONFIG_FILE)
    if not os.path.isfile(path):
        return False
    values = read_json(path)
    return isinstance(values, dict) and values.get("class_name") == "ElectraBackbone" and \
        str(values.get("module", "")).startswith("keras_hub")


def config_from_preset(values):
    """Our `ElectraConfig` of a keras-hub `ElectraBackbone` config dict."""
    return ElectraConfig(
        vocab_size=values["vocab_size"], embedding_size=values["embedding_dim"], hidden_size=values["hidden_dim"],
        num_layers=values["num_layers"], num_heads=values["num_heads"], intermediate_size=values["intermediate_dim"],
        hidden_act="gelu_approximate", hidden_dropout=float(values.get("dropout", 0.1)),
        attention_dropout=float(values.get("dropout", 0.1)),
        max_position_embeddings=values.get("max_sequence_length", 512), type_vocab_size=values.get("num_segments", 2))


def read_preset(folder):
    """`(ElectraConfig, Hugging Face-keyed state dict of an ElectraModel)` of a keras-hub ELECTRA preset."""
    backbone = keras_hub.models.ElectraBackbone.from_preset(folder)
    config = config_from_preset(backbone.get_config())
    by_name = {variable.path: variable.numpy() for variable in backbone.weights}
    state = {}
    for ours, hf, _, layout in mapping.encoder_rows(config):
        state[mapping.ENCODER_PREFIX + hf] = mapping.to_hf(by_name[hub_name(ours)], layout)
    return config, state


def tokenizer_settings(folder):
    """`(vocabulary path, lowercase, strip_accents)` of a keras-hub preset's tokenizer, or None."""
    path, vocabulary = os.path.join(folder, TOKENIZER_FILE), os.path.join(folder, VOCABULARY_FILE)
    if not (os.path.isfile(path) and os.path.isfile(vocabulary)):
        return None
    values = read_json(path)
    if not (isinstance(values, dict) and "class_name" in values and isinstance(values.get("config"), dict)):
        return None  # a Hugging Face tokenizer.json
    return vocabulary, values["config"].get("lowercase"), values["config"].get("strip_accents")
