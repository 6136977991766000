"""Hugging Face folders: `config.json` ↔ `ElectraConfig`, and the weights (safetensors, or transformers 4.x's
`tf_model.h5`) as a state dict, both ways. ELECTRA and BERT are read, ELECTRA is written.

Example:
>>> config, extras = config_from_hf({"model_type": "bert", "hidden_size": 64, "num_hidden_layers": 2,
...                                  "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 99})
>>> config.embedding_size, config.num_layers, extras["architecture"]
(64, 2, 'BertModel')
>>> config_to_hf(config, "ElectraForPreTraining")["num_hidden_layers"]
2
"""

import dataclasses
import logging
import os

import numpy as np

from electra_tf.util.atomic import read_json, write_json
from electra_tf.checkpoints import hub, mapping
from electra_tf.checkpoints.hf_tf_weights import TF_INDEX_NAME, TF_WEIGHTS_NAME, read_tf_weights
from electra_tf.checkpoints.ours import RUN_CONFIG
from electra_tf.checkpoints.safetensors_io import (
    INDEX_NAME,
    WEIGHTS_NAME,
    read_safetensors,
    stored_float_dtype,
    write_safetensors,
)
from electra_tf.checkpoints.tokenizer_files import write_tokenizer_files
from electra_tf.config import (
    HF_ACTIVATIONS,
    HF_FIELD_NAMES,
    ElectraConfig,
    load_run_config,
    set_pretrained_config_reader,
)

logger = logging.getLogger("electra_tf")
CONFIG_NAME = "config.json"
_ACTIVATIONS_OUT = {"gelu": "gelu", "gelu_approximate": "gelu_new", "relu": "relu"}
# Hugging Face's class defaults, for keys a config.json leaves out.
_DEFAULTS = {
    "electra": dict(vocab_size=30522, embedding_size=128, hidden_size=256, num_hidden_layers=12,
                    num_attention_heads=4, intermediate_size=1024),
    "bert": dict(vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                 intermediate_size=3072),
}
# Heads in which Hugging Face hard-codes GELU whatever `hidden_act` says (ours follow hidden_act).
_GELU_HEADS = ("ElectraForMaskedLM", "ElectraForSequenceClassification", "ElectraForMultipleChoice")
_BUFFERS = (".position_ids", ".token_type_ids")


@dataclasses.dataclass
class HFCheckpoint:
    """A Hugging Face folder read into memory: config, class name and state dict (keys as `ElectraFor…` name them)."""

    config: ElectraConfig
    architecture: str
    state: dict
    num_labels: int | None = None
    classifier_dropout: float | None = None
    label_names: list | None = None


def is_hf_config(values):
    return isinstance(values, dict) and "model_type" in values


def config_from_hf(values, source=CONFIG_NAME):
    """`(ElectraConfig, extras)` of a `config.json` dict (extras: `architecture`, `num_labels`, `classifier_dropout`,
    `label_names`); a ValueError for what our models cannot express."""
    model_type = values.get("model_type")
    if model_type not in _DEFAULTS:
        raise ValueError(f"{source}: model_type {model_type!r} is not supported (electra or bert)")
    get = {**_DEFAULTS[model_type], **values}.get
    unsupported = [(key, get(key)) for key, ok in (
        ("position_embedding_type", lambda v: v in (None, "absolute")), ("is_decoder", lambda v: not v),
        ("add_cross_attention", lambda v: not v)) if not ok(get(key))]
    activation = get("hidden_act", "gelu")
    if activation not in HF_ACTIVATIONS:
        unsupported.append(("hidden_act", activation))
    architectures = values.get("architectures") or [("BertModel" if model_type == "bert" else "ElectraModel")]
    architecture = architectures[0].removeprefix("TF")  # a TF class's name, as some hand-written configs say
    if architecture in _GELU_HEADS and activation != "gelu":
        unsupported.append(("hidden_act", f"{activation} with {architecture}, whose head Hugging Face runs with "
                                          "gelu (ours follows hidden_act)"))
    if architecture == "ElectraForMultipleChoice":
        for key, ok in (("summary_type", lambda v: v == "first"), ("summary_use_proj", bool),
                        ("summary_activation", lambda v: v == "gelu"), ("summary_proj_to_labels", lambda v: not v)):
            if not ok(values.get(key, {"summary_type": "first", "summary_use_proj": True,
                                       "summary_activation": "gelu"}.get(key))):
                unsupported.append((key, values.get(key)))
    if unsupported:
        raise ValueError(f"{source}: settings our models do not implement: "
                         + ", ".join(f"{k}={v!r}" for k, v in unsupported))
    hidden_dropout = get("hidden_dropout_prob", 0.1)
    try:
        config = ElectraConfig(
            vocab_size=get("vocab_size"), embedding_size=get("embedding_size", get("hidden_size")),
            hidden_size=get("hidden_size"), num_layers=get("num_hidden_layers"), num_heads=get("num_attention_heads"),
            intermediate_size=get("intermediate_size"), hidden_act=HF_ACTIVATIONS[activation],
            hidden_dropout=float(hidden_dropout), attention_dropout=float(get("attention_probs_dropout_prob", 0.1)),
            max_position_embeddings=get("max_position_embeddings", 512), type_vocab_size=get("type_vocab_size", 2),
            initializer_range=float(get("initializer_range", 0.02)), layer_norm_eps=float(get("layer_norm_eps", 1e-12)))
    except (TypeError, ValueError) as e:  # a value of the wrong type (a list, null, a string for a number)
        raise ValueError(f"{source}: {e}") from None
    labels = values.get("id2label")
    num_labels = len(labels) if labels else values.get("num_labels")
    return config, {"architecture": architecture, "num_labels": num_labels, "model_type": model_type,
                    "classifier_dropout": values.get("classifier_dropout"), "label_names": label_names_of(labels)}


def label_names_of(id2label):
    """The label names of a config's `id2label` in id order; None when it has none or only `LABEL_<i>`."""
    if not isinstance(id2label, dict) or sorted(map(str, id2label)) != sorted(map(str, range(len(id2label)))):
        return None
    names = [str(id2label[key]) for key in sorted(id2label, key=int)]
    return None if names == [f"LABEL_{i}" for i in range(len(names))] else names


def config_to_hf(config, architecture, num_labels=None, classifier_dropout=None, pad_token_id=0, label_names=None,
                 dtype="float32"):
    """A Hugging Face `config.json` dict for `config` and the class `architecture` (`LABEL_<i>` without label names)."""
    theirs = {ours: name for name, ours in HF_FIELD_NAMES.items()}
    values = {
        **{theirs.get(name, name): value for name, value in config.to_dict().items()},
        "architectures": [architecture], "model_type": "electra", "hidden_act": _ACTIVATIONS_OUT[config.hidden_act],
        "position_embedding_type": "absolute", "pad_token_id": pad_token_id, "tie_word_embeddings": True,
        "summary_type": "first", "summary_use_proj": True, "summary_activation": "gelu",
        "summary_last_dropout": config.hidden_dropout, "classifier_dropout": classifier_dropout, "dtype": dtype,
    }
    if num_labels is not None:
        names = [str(name) for name in label_names] if label_names else [f"LABEL_{i}" for i in range(num_labels)]
        values["id2label"] = {str(i): name for i, name in enumerate(names)}
        values["label2id"] = {name: i for i, name in enumerate(names)}
    return values


def normalize_state(state):
    """Keys as `ElectraFor…` classes name them (the encoder under `electra.`, LayerNorm `weight`/`bias`), old
    checkpoints' buffers (`position_ids`) dropped."""
    encoder_starts = ("embeddings.", "embeddings_project.", "encoder.")
    normalized = {}
    for key, array in state.items():
        if key.endswith(_BUFFERS) and "embeddings" in key:
            continue
        if key.startswith("bert."):
            key = key[len("bert."):]  # the encoder gets `electra.` below; BERT's pooler stays `pooler.`
        if key.startswith(encoder_starts):
            key = mapping.ENCODER_PREFIX + key
        if "LayerNorm." in key:
            key = key.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias")
        normalized[key] = array
    return normalized


def _tied_lm_head(state, source):
    """Drops `generator_lm_head.weight`, which must be the word embedding table."""
    head = state.pop("generator_lm_head.weight", None)
    table = state.get("electra.embeddings.word_embeddings.weight")
    if head is not None and (table is None or head.shape != table.shape or not np.array_equal(head, table)):
        raise ValueError(f"{source}: generator_lm_head.weight differs from the word embeddings; our generator "
                         "ties its output layer to them, so untied weights cannot be loaded")
    return state


def weights_error(folder):
    """Why `folder` has no loadable weights: a ValueError with the way out."""
    if os.path.exists(os.path.join(folder, "pytorch_model.bin")):
        architecture = "AutoModel"
        try:
            architecture = (read_json(os.path.join(folder, CONFIG_NAME), expect=dict).get("architectures")
                            or [architecture])[0]
        except (OSError, ValueError):
            pass
        return ValueError(
            f"{folder}: only pytorch_model.bin here, a pickle, which electra_tf never unpickles. Convert it once to "
            f"model.safetensors with transformers (and torch) installed:\n  python -c \"import transformers; "
            f"transformers.{architecture}.from_pretrained('{folder}').save_pretrained('{folder}')\"")
    if os.path.exists(os.path.join(folder, TF_INDEX_NAME)):
        return ValueError(f"{folder}: sharded TF weights ({TF_INDEX_NAME}), which electra_tf does not read; save "
                          "the model again with transformers 4.x in one file (save_pretrained(folder, "
                          "max_shard_size=\"100GB\")) or as model.safetensors")
    return ValueError(f"{folder}: config.json but no {WEIGHTS_NAME} (nor {INDEX_NAME}, nor {TF_WEIGHTS_NAME})")


def pretrained_config(path, **hub_options):
    """`ElectraConfig.from_pretrained`: the config of a Hugging Face folder, hub id (only config.json is fetched), run
    folder or `config.json` path."""
    path = hub.resolve(path, config_only=True, **hub_options)
    if os.path.isfile(os.path.join(path, RUN_CONFIG)):  # our run folder
        return load_run_config(os.path.join(path, RUN_CONFIG))[0]
    config_file = os.path.join(path, CONFIG_NAME) if os.path.isdir(path) else os.fspath(path)
    values = read_json(config_file, expect=dict)
    return config_from_hf(values, source=config_file)[0] if is_hf_config(values) else load_run_config(config_file)[0]


set_pretrained_config_reader(pretrained_config)


def read_folder(folder):
    """An `HFCheckpoint` from a Hugging Face model folder."""
    values = read_json(os.path.join(folder, CONFIG_NAME), expect=dict)
    config, extras = config_from_hf(values, source=os.path.join(folder, CONFIG_NAME))
    if any(os.path.exists(os.path.join(folder, name)) for name in (WEIGHTS_NAME, INDEX_NAME)):
        state, dtype = read_safetensors(folder), stored_float_dtype(folder)
    elif os.path.exists(os.path.join(folder, TF_WEIGHTS_NAME)):
        state, dtype = read_tf_weights(os.path.join(folder, TF_WEIGHTS_NAME)), None
    else:
        raise weights_error(folder)
    state = _tied_lm_head(normalize_state(state), folder)
    if dtype not in (None, "float32"):
        logger.warning("%s: weights stored as %s are loaded as float32 (our models hold float32 weights); "
                       "written back to Hugging Face they are float32 (twice the size) unless you ask for %s "
                       "(electra-convert-checkpoint --dtype=%s, save_huggingface(..., dtype=%r))",
                       folder, dtype, dtype, dtype, dtype)
    architecture = extras["architecture"] if values.get("architectures") else _architecture_of(state, values)
    return HFCheckpoint(config, architecture, state, extras["num_labels"], extras["classifier_dropout"],
                        extras["label_names"])


def _architecture_of(state, values):
    """The class of a checkpoint whose config.json does not say, from its keys."""
    if values.get("model_type") == "bert":
        return "BertForPreTraining" if any(key.startswith("cls.") for key in state) else "BertModel"
    for prefix, architecture in (("discriminator_predictions.", "ElectraForPreTraining"),
                                 ("generator_", "ElectraForMaskedLM"),
                                 ("classifier.out_proj.", "ElectraForSequenceClassification"),
                                 ("qa_outputs.", "ElectraForQuestionAnswering"),
                                 ("sequence_summary.", "ElectraForMultipleChoice"),
                                 ("classifier.", "ElectraForTokenClassification")):
        if any(key.startswith(prefix) for key in state):
            return architecture
    return "ElectraModel"


def save_huggingface(model, folder, vocabulary=None, lowercase=True, strip_accents=None, label_names=None,
                     pad_token_id=None, dtype="float32"):
    """Writes one of our models as a Hugging Face folder `transformers` loads into `model.hf_architecture`:
    `config.json`, `model.safetensors` (as `dtype`) and, given a vocabulary, the tokenizer files."""
    architecture = model.hf_architecture
    if architecture is None:
        raise ValueError(f"{type(model).__name__} with head='original' (the original ELECTRA head) has no Hugging "
                         f"Face class; the head='huggingface' one converts (fine-tune with --head=huggingface). "
                         "This model saves and exports as it is (model.keras, save_pretrained, electra-export)")
    config = mapping.backbone_of(model).config
    if architecture in _GELU_HEADS and config.hidden_act != "gelu":
        raise ValueError(f"{architecture}: Hugging Face runs this head with gelu, but this model's hidden_act is "
                         f"{config.hidden_act!r}: transformers would compute other outputs")
    state = mapping.model_state(model)
    if architecture == "ElectraModel":  # as transformers saves a base model: without the `electra.` prefix
        state = {key[len(mapping.ENCODER_PREFIX):]: array for key, array in state.items()}
    num_labels = getattr(model, "num_labels", None) if architecture in (
        "ElectraForSequenceClassification", "ElectraForTokenClassification") else None
    os.makedirs(folder, exist_ok=True)
    if vocabulary is not None:
        vocabulary = list(vocabulary)
        write_tokenizer_files(folder, vocabulary, lowercase, strip_accents, config.max_position_embeddings)
        pad_token_id = vocabulary.index("[PAD]")
    write_safetensors(os.path.join(folder, WEIGHTS_NAME), state, float_dtype=dtype)
    write_json(os.path.join(folder, CONFIG_NAME), config_to_hf(
        config, architecture, num_labels=num_labels, classifier_dropout=getattr(model, "classifier_dropout", None),
        pad_token_id=pad_token_id or 0, label_names=label_names if num_labels else None, dtype=dtype))
