"""transformers 4.x's Auto classes for ELECTRA (and BERT, read as the same encoder): `AutoTokenizer` (WordPiece only,
another kind refused in one line), `AutoConfig`, and `TFAutoModel…` (and the same without `TF`), whose
`from_pretrained`/`from_config` give the `TFElectra…` class of their task.

Example:
>>> model = TFAutoModelForSequenceClassification.from_pretrained("tests/fixtures/hf/sequence_classification")
>>> type(model).__name__, type(AutoTokenizer.from_pretrained("tests/fixtures/hf/discriminator")).__name__
('ElectraForSequenceClassification', 'ElectraTokenizer')
>>> AutoConfig.from_pretrained("tests/fixtures/hf/bert_model").num_hidden_layers
2
"""

import inspect
import os

from electra_tf.checkpoints import hub
from electra_tf.checkpoints.hf import CONFIG_NAME
from electra_tf.checkpoints.tokenizer_files import TOKENIZER_CONFIG
from electra_tf.config import ElectraConfig
from electra_tf.transformers import names
from electra_tf.transformers.model_config import ModelConfig
from electra_tf.util.atomic import read_json

# The `model_type`s, and their `<Name>Tokenizer[Fast]` classes, whose tokenizer is BERT's WordPiece with [CLS]/[SEP].
WORDPIECE_MODEL_TYPES = {"bert": "Bert", "electra": "Electra", "distilbert": "DistilBert"}
WORDPIECE_CLASSES = {name + suffix for name in WORDPIECE_MODEL_TYPES.values() for suffix in ("Tokenizer",
                                                                                               "TokenizerFast")}
LABEL_FIELDS = ("num_labels", "id2label", "label2id")
# The hub options the config's check takes (force_download is for the model's own download, not this one).
CONFIG_HUB_OPTIONS = tuple(name for name in hub.HUB_OPTIONS if name != "force_download")


class _NotInstantiated:
    def __init__(self):
        raise TypeError(f"{type(self).__name__} is not instantiated: call {type(self).__name__}.from_pretrained("
                        "path_or_hub_id)")


def _declared_kind(folder):
    """`(file, kind, is WordPiece)` as a folder's files name its tokenizer; None when they do not."""
    for name, key, accepted in ((TOKENIZER_CONFIG, "tokenizer_class", WORDPIECE_CLASSES),
                                (CONFIG_NAME, "model_type", WORDPIECE_MODEL_TYPES)):
        path = os.path.join(folder, name)
        kind = read_json(path, expect=dict).get(key) if os.path.isfile(path) else None
        if kind:
            return path, kind, kind in accepted
    return None


class AutoTokenizer(_NotInstantiated):
    """transformers' `AutoTokenizer` for BERT and ELECTRA WordPiece tokenizers."""

    @staticmethod
    def from_pretrained(path, use_fast=True, do_lower_case=None, strip_accents=None, revision=None, cache_dir=None,
                        token=None, local_files_only=None):
        """The `ElectraTokenizer` of a folder, file or hub id; another kind of tokenizer is refused. `use_fast` is
        ignored (there is one tokenizer)."""
        del use_fast
        local = hub.resolve(path, revision=revision, cache_dir=cache_dir, token=token,
                            local_files_only=local_files_only, tokenizer_only=True)
        declared = _declared_kind(local) if os.path.isdir(local) else None
        if declared is not None and not declared[2]:
            file, kind, _ = declared
            raise ValueError(f"{path}: {os.path.basename(file)} says {kind!r}, not a BERT or ELECTRA WordPiece "
                             "tokenizer; electra_tf reads only those (AutoTokenizer gives an ElectraTokenizer)")
        return names.ElectraTokenizerFast.from_pretrained(local, lowercase=do_lower_case,
                                                          strip_accents=strip_accents)


class AutoConfig(_NotInstantiated):
    """transformers' `AutoConfig` for ELECTRA and BERT checkpoints."""

    @staticmethod
    def from_pretrained(path, **changes):
        """The `ElectraConfig` of a folder, `config.json` or hub id (`revision`, `cache_dir`, `token`,
        `local_files_only` as transformers'); `changes` replace fields (our names or transformers'), and
        `num_labels`/`id2label`/`label2id` give a config that carries them for a task model.

        >>> AutoConfig.from_pretrained("tests/fixtures/hf/discriminator", num_labels=3).num_labels
        3
        """
        labels = {name: changes.pop(name) for name in LABEL_FIELDS if name in changes}
        config = ElectraConfig.from_pretrained(path, **changes)
        if not labels:
            return config
        id2label = labels.get("id2label")
        id2label = None if id2label is None else {int(key): value for key, value in id2label.items()}
        num_labels = labels.get("num_labels", None if id2label is None else len(id2label))
        return ModelConfig(**config.to_dict(), num_labels=num_labels, id2label=id2label,
                           label2id=labels.get("label2id"))


def _labels_of(config):
    """transformers' label arguments a config carries (`AutoConfig.from_pretrained(..., num_labels=3)`)."""
    return {name: getattr(config, name) for name in LABEL_FIELDS if getattr(config, name, None) is not None}


class _AutoModel(_NotInstantiated):
    """An Auto class: `class_name` is the `electra_tf.transformers.names` class it gives."""

    class_name = None

    @classmethod
    def model_class(cls):
        return getattr(names, cls.class_name)

    @classmethod
    def from_pretrained(cls, path, *, config=None, **kwargs):
        """The task model of a checkpoint (`kwargs` as the class's `from_pretrained`); `config=` replaces its config
        and labels. A checkpoint that is neither ELECTRA nor BERT is refused before any weight is read."""
        AutoConfig.from_pretrained(path, **{name: kwargs[name] for name in CONFIG_HUB_OPTIONS if name in kwargs})
        if config is not None:
            kwargs = {"config_overrides": config.to_dict(), **_labels_of(config), **kwargs}
        return cls.model_class().from_pretrained(path, **kwargs)

    @classmethod
    def from_config(cls, config, **kwargs):
        """A new (randomly initialised) task model of `config` (an `ElectraConfig`, e.g. from `AutoConfig`)."""
        model_class = cls.model_class()
        labels = _labels_of(config)
        if "num_labels" in labels and "num_labels" in inspect.signature(model_class).parameters:
            kwargs = {"num_labels": labels["num_labels"], **kwargs}
        model = model_class(ElectraConfig(**config.to_dict()), **kwargs)
        if labels.get("id2label"):
            model.label_names = [labels["id2label"][i] for i in range(len(labels["id2label"]))]
        return model


def _auto_class(name, class_name, gives):
    return type(name, (_AutoModel,), {"__module__": __name__, "class_name": class_name,
                                      "__doc__": f"transformers' `{name}`: {gives} (`{class_name}`)."})


TFAutoModel = _auto_class("TFAutoModel", "TFElectraModel", "the encoder")
TFAutoModelForPreTraining = _auto_class("TFAutoModelForPreTraining", "TFElectraForPreTraining", "the discriminator")
TFAutoModelForMaskedLM = _auto_class("TFAutoModelForMaskedLM", "TFElectraForMaskedLM", "the generator")
TFAutoModelForSequenceClassification = _auto_class("TFAutoModelForSequenceClassification",
                                                   "TFElectraForSequenceClassification", "a text classifier")
TFAutoModelForTokenClassification = _auto_class("TFAutoModelForTokenClassification",
                                                "TFElectraForTokenClassification", "a token classifier")
TFAutoModelForQuestionAnswering = _auto_class("TFAutoModelForQuestionAnswering", "TFElectraForQuestionAnswering",
                                              "extractive question answering with transformers' head")
TFAutoModelForMultipleChoice = _auto_class("TFAutoModelForMultipleChoice", "TFElectraForMultipleChoice",
                                           "a multiple-choice classifier")

# transformers' PyTorch names: our classes answer both (`ElectraForSequenceClassification` is the TF one).
AutoModel = TFAutoModel
AutoModelForPreTraining = TFAutoModelForPreTraining
AutoModelForMaskedLM = TFAutoModelForMaskedLM
AutoModelForSequenceClassification = TFAutoModelForSequenceClassification
AutoModelForTokenClassification = TFAutoModelForTokenClassification
AutoModelForQuestionAnswering = TFAutoModelForQuestionAnswering
AutoModelForMultipleChoice = TFAutoModelForMultipleChoice
