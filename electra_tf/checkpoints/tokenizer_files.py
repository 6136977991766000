"""The tokenizer files beside a checkpoint (`vocab.txt` with `tokenizer_config.json`, a Hugging Face
`tokenizer.json`, a keras-hub preset's) read into `(vocabulary, lowercase, strip_accents)`, and written back;
`None` where the files do not say (the caller's default applies).

Example:
>>> import tempfile
>>> folder = tempfile.mkdtemp()
>>> write_tokenizer_files(folder, ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "The"], lowercase=False)
>>> vocabulary, lowercase, strip_accents = tokenizer_arguments(folder)
>>> os.path.basename(vocabulary), lowercase, strip_accents
('vocab.txt', False, None)
>>> load_tokenizer(folder).tokenize("The").numpy().tolist()
[5]
"""

import logging
import os

from electra_tf.util.atomic import read_json, write_json
from electra_tf.checkpoints import google, hub, keras_hub_preset, ours
from electra_tf.text.tokenizer import WordPieceTokenizer
from electra_tf.text.vocabulary import VOCAB_FILE, load_vocabulary, save_vocabulary, vocabulary_hash

logger = logging.getLogger("electra_tf")

TOKENIZER_CONFIG = "tokenizer_config.json"
TOKENIZER_JSON = "tokenizer.json"


def tokenizer_settings(folder):
    """`(vocabulary path or list, lowercase, strip_accents)` of a folder's tokenizer files, or None when it has none."""
    from_keras_hub = keras_hub_preset.tokenizer_settings(folder)
    if from_keras_hub is not None:
        return from_keras_hub
    lowercase = strip_accents = None
    config_file = os.path.join(folder, TOKENIZER_CONFIG)
    if os.path.exists(config_file):
        values = read_json(config_file, expect=dict)
        lowercase, strip_accents = values.get("do_lower_case"), values.get("strip_accents")
    if os.path.exists(os.path.join(folder, VOCAB_FILE)):
        return os.path.join(folder, VOCAB_FILE), lowercase, strip_accents
    tokenizer_file = os.path.join(folder, TOKENIZER_JSON)
    if not os.path.exists(tokenizer_file):
        return None
    vocabulary, json_lowercase, json_strip_accents = tokenizer_json_settings(tokenizer_file)
    return (vocabulary, json_lowercase if json_lowercase is not None else lowercase,
            json_strip_accents if json_strip_accents is not None else strip_accents)


def tokenizer_json_settings(path):
    """`(vocabulary list, lowercase, strip_accents)` of a Hugging Face `tokenizer.json` (BERT WordPiece)."""
    values = read_json(path)
    model = (values.get("model") if isinstance(values, dict) else None) or {}
    if model.get("type") != "WordPiece" or model.get("continuing_subword_prefix", "##") != "##":
        raise ValueError(f"{path}: not a BERT WordPiece tokenizer (model type {model.get('type')!r})")
    vocab = model.get("vocab")
    if not isinstance(vocab, dict) or not vocab:
        raise ValueError(f"{path}: its WordPiece model has no vocab (a token → id object)")
    vocabulary = [None] * len(vocab)
    for token, index in vocab.items():
        if not 0 <= index < len(vocab) or vocabulary[index] is not None:
            raise ValueError(f"{path}: the WordPiece ids are not 0..{len(vocab) - 1}")
        vocabulary[index] = token
    lowercase = strip_accents = None
    normalizers = [values.get("normalizer") or {}]
    if normalizers[0].get("type") == "Sequence":
        normalizers = normalizers[0].get("normalizers", [])
    for normalizer in normalizers:
        if normalizer.get("type") == "BertNormalizer":
            lowercase = normalizer.get("lowercase")
            strip_accents = normalizer.get("strip_accents")
    return vocabulary, lowercase, strip_accents


def is_uncased(vocabulary):
    """Whether no token but the bracketed special ones has a capital letter.

    >>> is_uncased(["[PAD]", "[UNK]", "the", "##s"]), is_uncased(["[PAD]", "The"])
    (True, False)
    """
    return not any(character.isupper() for token in vocabulary
                   if not (token.startswith("[") and token.endswith("]")) for character in token)


def _warn_if_cased_on_uncased(settings, path):
    """Warns when the files say "do not lower-case" beside an uncased vocabulary (capitalised words would be [UNK])."""
    vocabulary, lowercase, _ = settings
    if lowercase is False and is_uncased(load_vocabulary(vocabulary) if isinstance(vocabulary, str) else vocabulary):
        logger.warning("%s: the tokenizer files say lowercase/do_lower_case false, but the vocabulary has no capital "
                       "letters (an uncased one): capitalised words will be [UNK]; pass lowercase=True "
                       "(--lowercase) unless that is meant", path)
    return settings


class NoTokenizerFiles(ValueError):
    """A checkpoint without tokenizer files (a model can be loaded without them)."""


def tokenizer_arguments(path, **hub_options):
    """`(vocabulary, lowercase, strip_accents)` of the checkpoint at `path` (any format or hub id), or of a
    `vocab.txt`/`tokenizer.json` path."""
    path = hub.resolve(path, tokenizer_only=True, **hub_options)
    if os.path.isfile(path):
        if path.endswith(".json"):
            return _warn_if_cased_on_uncased(tokenizer_json_settings(path), path)
        if not path.endswith(".keras"):
            return path, None, None
    if os.path.isdir(path):
        folders = ours.candidate_folders(path)
    else:
        prefix = google.checkpoint_prefix(path)
        folders = [os.path.dirname(os.path.abspath(prefix or path))]
    for folder in folders:
        if os.path.isdir(folder):
            settings = tokenizer_settings(folder)
            if settings is not None:
                _check_recorded_vocabulary(folder, settings[0])
                return _warn_if_cased_on_uncased(settings, folder)
    raise NoTokenizerFiles(f"{path}: no vocab.txt (nor tokenizer.json) here; tools/run_pretraining.py writes one in "
                           "<model_dir>/final, Hugging Face and Google checkpoints ship one beside the weights")


def _check_recorded_vocabulary(folder, vocabulary):
    """Refuses a vocabulary other than the one the folder's `electra_tf.json` records (ids would mean other tokens)."""
    recorded = ours.read_model_info(folder).get("vocabulary_sha256")
    if not recorded:
        return
    found = vocabulary_hash(load_vocabulary(vocabulary) if isinstance(vocabulary, str) else vocabulary)
    if found != recorded:
        raise ValueError(f"{folder}: its vocabulary (sha256 {found[:12]}…) is not the one {ours.MODEL_INFO} records "
                         f"(sha256 {recorded[:12]}…), which the model was trained with; put the model's own "
                         "vocab.txt back, or save the folder again")


def tokenizer_options(path, lowercase=None, strip_accents=None, **hub_options):
    """`(vocabulary, {"lowercase", "strip_accents"})` of the checkpoint at `path`: the files' casing unless given."""
    vocabulary, saved_lowercase, saved_strip_accents = tokenizer_arguments(path, **hub_options)
    if lowercase is None:
        lowercase = True if saved_lowercase is None else saved_lowercase
    return vocabulary, {"lowercase": lowercase,
                        "strip_accents": saved_strip_accents if strip_accents is None else strip_accents}


def load_tokenizer(path, lowercase=None, strip_accents=None, **hub_options):
    """The `WordPieceTokenizer` of the checkpoint at `path`, with its files' casing unless given."""
    vocabulary, casing = tokenizer_options(path, lowercase, strip_accents, **hub_options)
    return WordPieceTokenizer(vocabulary, **casing)


def saved_model_max_length(vocabulary):
    """`model_max_length` of the `tokenizer_config.json` beside a `vocab.txt` path when bounded, else `None`."""
    config = os.path.join(os.path.dirname(vocabulary), TOKENIZER_CONFIG) if isinstance(vocabulary, str) else ""
    value = read_json(config, expect=dict).get("model_max_length") if os.path.isfile(config) else None
    bounded = isinstance(value, int) and not isinstance(value, bool) and 0 < value < 10**9
    return value if bounded else None


def write_tokenizer_files(folder, vocabulary, lowercase=True, strip_accents=None, model_max_length=None):
    """Writes `vocab.txt` and a `tokenizer_config.json` that both we and `transformers` read."""
    os.makedirs(folder, exist_ok=True)
    save_vocabulary(vocabulary, os.path.join(folder, VOCAB_FILE))
    settings = {"tokenizer_class": "ElectraTokenizer", "do_lower_case": lowercase, "strip_accents": strip_accents}
    if model_max_length is not None:
        settings["model_max_length"] = model_max_length
    write_json(os.path.join(folder, TOKENIZER_CONFIG), settings)
