"""`TransformersCalls`: a model called, trained and loaded as transformers' TF ELECTRA models were, mixed into the
room's subclasses of the core models: `model(**tokens)`, `labels=` → `loss`, `output_hidden_states`/
`output_attentions`, `ModelOutput`s (eager calls and `predict`; Keras's steps and exports get the core dict),
`compile()` on the model's own loss, `model.config` with labels, transformers' `from_pretrained` arguments.

Example:
>>> import numpy as np
>>> from electra_tf import ElectraConfig, ElectraForSequenceClassification
>>> config = ElectraConfig(vocab_size=30, embedding_size=8, hidden_size=16, num_layers=1, num_heads=2,
...                        intermediate_size=32)
>>> model = ElectraForSequenceClassification(config, num_labels=3)
>>> outputs = model(input_ids=np.array([[2, 7, 9, 3]]), labels=np.array([1]), output_hidden_states=True)
>>> list(outputs), outputs.logits.shape, outputs[0].shape, len(outputs.hidden_states), outputs.attentions
(['loss', 'logits', 'hidden_states'], TensorShape([1, 3]), TensorShape([1]), 2, None)
"""

import contextlib
import contextvars
import dataclasses
import logging
from collections.abc import Mapping

import keras
import tensorflow as tf

from electra_tf.config import HF_FIELD_NAMES, ElectraConfig
from electra_tf.transformers import checks
from electra_tf.transformers.model_config import ModelConfig
from electra_tf.transformers.outputs import SEQUENCE_CLASSIFIER_FIELDS, ordered

logger = logging.getLogger("electra_tf")
LABEL_NAMES = ("labels", "start_positions", "end_positions")
# Keyword arguments Keras itself passes to a model's call.
_KERAS_CALL_ARGUMENTS = ("training", "mask")
# What the two optional outputs are called, and how many the encoder gives of each.
_OPTIONAL_OUTPUTS = ("hidden_states", "attentions")
# Set while a model runs its graph (a sub-model's outputs feed it) or Keras runs one of its steps: model outputs
# then stay plain dicts, even when eager.
_PLAIN_OUTPUTS = contextvars.ContextVar("electra_tf_plain_outputs", default=False)
_CONFIG_FIELDS = {field.name for field in dataclasses.fields(ElectraConfig)}
# `from_pretrained` keywords of transformers that read no weights: accepted and left alone.
_IGNORED_LOADING_OPTIONS = ("from_pt", "trust_remote_code", "use_safetensors", "resume_download", "proxies",
                            "mirror", "_from_auto", "subfolder")


@contextlib.contextmanager
def _plain_outputs():
    token = _PLAIN_OUTPUTS.set(True)
    try:
        yield
    finally:
        _PLAIN_OUTPUTS.reset(token)


class TransformersCalls:
    """Mixed into a core model; a head declares `loss_inputs` (its label arguments), `head_loss` (its function of
    `electra_tf.transformers.losses`) and `output_fields` (its transformers output class's fields)."""

    loss_inputs = ()
    head_loss = None
    no_loss_hint = None  # where a head without a loss says which one has it
    per_token_labels = False  # a label per token (tagging, masked LM, replaced token detection), else per example
    output_fields = SEQUENCE_CLASSIFIER_FIELDS

    @property
    def config(self):
        """The model's `ElectraConfig`, read with its labels (`electra_tf.transformers.model_config`)."""
        config = self.__dict__.get("_electra_config")
        return None if config is None else ModelConfig.of(config, self)

    @config.setter
    def config(self, config):
        self.__dict__["_electra_config"] = config  # (not state Keras tracks: get_config writes it)

    def __call__(self, inputs=None, *args, output_hidden_states=None, output_attentions=None, return_dict=None,
                 **kwargs):
        keras_kwargs = {key: kwargs.pop(key) for key in _KERAS_CALL_ARGUMENTS if key in kwargs}
        features, labels = self._split_call(inputs, kwargs)
        features = self.complete_inputs(features)
        if not any(isinstance(value, keras.KerasTensor) for value in features.values()):
            checks.check_features(features, self.__dict__["_electra_config"], type(self).__name__)
        wanted = {"hidden_states": output_hidden_states, "attentions": output_attentions}
        graph = self.with_outputs(*(name for name, wants in wanted.items() if wants))
        graph = super() if graph is self else graph
        with _plain_outputs():
            outputs = graph.__call__(features, *args, **keras_kwargs)
        if any(isinstance(value, keras.KerasTensor) for value in tf.nest.flatten(outputs)):
            return outputs  # a symbolic call: a functional graph being built
        outputs = dict(outputs)
        if labels:
            labels = checks.check_labels(labels, outputs, self.per_token_labels, type(self).__name__)
            outputs = {"loss": self.head_loss(outputs, labels, features), **outputs}
        for name, wants in wanted.items():
            if wants is False:
                outputs.pop(name, None)
        plain = not tf.executing_eagerly() or _PLAIN_OUTPUTS.get()
        for name in _OPTIONAL_OUTPUTS:  # transformers' tuples; Keras's steps and graphs: stacked
            if name in outputs and not plain:
                outputs[name] = tuple(tf.unstack(outputs[name], axis=1))
        if return_dict is False:
            return ordered(outputs, self.output_fields).to_tuple()
        return outputs if plain else ordered(outputs, self.output_fields)

    def _split_call(self, inputs, kwargs):
        """`(features, labels)` from a call's positional input and keywords (a `None` value is left out)."""
        names = tuple(self.input) if isinstance(self.input, dict) else ()
        for key in kwargs:
            if key not in names and key not in self.loss_inputs:
                if key in LABEL_NAMES and kwargs[key] is None:
                    continue  # transformers' default, `labels=batch.get("labels")`
                hint = f" ({self.no_loss_hint})" if key in LABEL_NAMES and self.no_loss_hint else ""
                raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument {key!r}{hint}")
        if isinstance(inputs, Mapping):
            given = dict(inputs)
        else:
            given = {} if inputs is None else {"input_ids": inputs}
        for key, value in kwargs.items():
            if key in given:
                raise TypeError(f"{type(self).__name__}() got {key!r} twice: in the inputs and as a keyword")
            given[key] = value
        given = {key: value for key, value in given.items() if value is not None}
        features = {key: value for key, value in given.items() if key in names}
        labels = {key: value for key, value in given.items() if key in self.loss_inputs}
        ignored = sorted(set(given) - set(features) - set(labels) - set(LABEL_NAMES))
        if ignored:
            logger.warning("%s takes no %s: ignored", type(self).__name__, ", ".join(ignored))
        if "input_ids" not in features:
            raise TypeError(f"{type(self).__name__}() needs input_ids (a tensor, or a mapping with an 'input_ids')")
        missing = [key for key in self.loss_inputs if labels and key not in labels]
        if missing:
            raise TypeError(f"{type(self).__name__}() computes its loss from {', '.join(self.loss_inputs)}: "
                            f"{', '.join(missing)} missing")
        return features, labels

    def complete_inputs(self, features):
        """`features` with transformers' defaults for the inputs left out: a mask of ones, types of zeros."""
        features = {key: value if isinstance(value, keras.KerasTensor) else checks.as_tensor(key, value)
                    for key, value in features.items()}  # (Keras takes no mix of arrays and tensors)
        ids = features["input_ids"]
        if features.get("attention_mask") is None:
            features["attention_mask"] = keras.ops.ones_like(ids, dtype="int32")
        if features.get("token_type_ids") is None:
            features["token_type_ids"] = keras.ops.zeros_like(ids, dtype="int32")
        return features

    def train_step(self, data):
        with _plain_outputs():
            return super().train_step(data)

    def test_step(self, data):
        with _plain_outputs():
            return super().test_step(data)

    def predict_step(self, data):
        x, _, _ = keras.utils.unpack_x_y_sample_weight(data)
        if isinstance(x, Mapping):
            x = {key: value for key, value in x.items() if key not in self.loss_inputs}
        with _plain_outputs():
            return self(x, training=False)

    def predict(self, x, *args, **kwargs):
        """Keras's `predict`, its dict of arrays read as a `ModelOutput` (`predictions.logits`)."""
        predictions = super().predict(x, *args, **kwargs)
        return ordered(predictions, self.output_fields) if isinstance(predictions, dict) else predictions

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """Keras's loss when `compile` was given one; else the model's own (from the labels in `x` or `y`)."""
        if self.loss is not None or not self.loss_inputs:
            return super().compute_loss(x, y, y_pred, sample_weight, training=training)
        if sample_weight is not None:
            raise ValueError("sample weights need a loss given to compile(): the model's own loss takes none")
        loss = y_pred.get("loss") if isinstance(y_pred, Mapping) else None
        if loss is None:
            features = self.complete_inputs(x if isinstance(x, Mapping) else {"input_ids": x})
            loss = self.head_loss(y_pred, self._labels_of(y), features)
        loss = tf.reduce_mean(loss)  # (per example, or one value: transformers' shapes)
        for extra in self.losses:  # add_loss and regularizers, as Keras adds them
            loss += tf.cast(tf.reduce_sum(extra), loss.dtype)
        # Per replica, as Keras's own losses are (its loss tracker multiplies back).
        return loss / tf.distribute.get_strategy().num_replicas_in_sync

    def _labels_of(self, y):
        """The label arguments in `y`: a tensor (one label argument), or a mapping of them."""
        if isinstance(y, Mapping) and all(name in y for name in self.loss_inputs):
            return {name: y[name] for name in self.loss_inputs}
        if y is not None and not isinstance(y, Mapping) and len(self.loss_inputs) == 1:
            return {self.loss_inputs[0]: y}
        raise ValueError(f"{type(self).__name__} compiled without a loss trains on its own, from "
                         f"{' and '.join(self.loss_inputs)}: give them in the features or as y "
                         f"(a dict with those keys{'' if len(self.loss_inputs) > 1 else ', or a tensor'}), "
                         "or give compile() a loss")

    @classmethod
    def from_pretrained(cls, path, *args, num_labels=None, id2label=None, label2id=None, **kwargs):
        """transformers' `from_pretrained`: the core model's, also taking `num_labels`, `id2label`/`label2id` and
        config fields under either name; `from_pt` and PyTorch loading options are accepted and change nothing."""
        for option in _IGNORED_LOADING_OPTIONS:
            kwargs.pop(option, None)
        label_names = _label_names(id2label, label2id, num_labels)
        if label_names is not None and "num_labels" in _constructor_arguments(cls):
            num_labels = len(label_names)
        if num_labels is not None and "num_labels" in _constructor_arguments(cls):
            kwargs["num_labels"] = num_labels
        overrides = {HF_FIELD_NAMES.get(name, name): kwargs.pop(name) for name in list(kwargs)
                     if HF_FIELD_NAMES.get(name, name) in _CONFIG_FIELDS and name not in _constructor_arguments(cls)}
        if overrides:
            kwargs["config_overrides"] = overrides
        return super().from_pretrained(path, *args, label_names=label_names, **kwargs)


def _constructor_arguments(cls):
    return cls.__init__.__code__.co_varnames[:cls.__init__.__code__.co_argcount]


def _label_names(id2label, label2id, num_labels):
    """The label names in id order from transformers' `id2label` (or `label2id`), or None; one line when they
    disagree with each other or with `num_labels`."""
    if id2label is None and label2id is None:
        return None
    id2label = {int(i): str(name) for i, name in (id2label or {v: k for k, v in label2id.items()}).items()}
    if sorted(id2label) != list(range(len(id2label))):
        raise ValueError(f"id2label: ids {sorted(id2label)} are not 0..{len(id2label) - 1}")
    if label2id is not None and {name: i for i, name in id2label.items()} != {str(k): int(v) for k, v in
                                                                               label2id.items()}:
        raise ValueError(f"id2label {id2label} and label2id {label2id} disagree")
    if num_labels is not None and num_labels != len(id2label):
        raise ValueError(f"num_labels={num_labels} but id2label names {len(id2label)} labels")
    return [id2label[i] for i in range(len(id2label))]


