"""`TransformersCalls`: every model callable and trainable as `transformers`' TF ELECTRA models were.

On top of today's `model({"input_ids": ..., "attention_mask": ..., "token_type_ids": ...})`:

- `model(**tokens)`, `model(tokens)` (any `Mapping`: a dict, a `BatchEncoding`) and `model(input_ids)` (a
  tensor or array; int64 too); a missing `attention_mask` is all ones, missing `token_type_ids` zeros. Keys of
  a mapping that the model does not take are dropped with a warning (as transformers' TF models dropped
  them); an unknown keyword is a TypeError.
- `labels=` (`start_positions=`/`end_positions=` for question answering; in the mapping too) adds a scalar
  `loss`, computed as transformers computes it (`electra_tf.models.head_losses`).
- `output_hidden_states=True` (in the call, or when the model is built: `from_pretrained(...,
  output_hidden_states=True)`) gives `hidden_states` as transformers does in an eager call, a tuple of `L + 1`
  `[batch, sequence, H]` tensors (Keras's `predict`, graph functions and exports get them stacked, `[batch,
  L + 1, sequence, H]`); on a model built without them, the same layers run through a second graph that also
  outputs them (built once, on first use; never saved). `False` leaves them out.
- An eager call returns a `ModelOutput` (`outputs.logits`, `outputs["logits"]`, `outputs[0]`), or its tuple
  with `return_dict=False`. Keras's own steps, graph functions and exports get the plain dict they always got.
- `compile(optimizer=...)` without a loss trains on the model's own loss when the data yields `(features,
  labels)` (labels a tensor, or a dict with the label names) or features with a `labels` key; a compiled
  loss is used as before. `predict` leaves labels out.
- `model.config` answers `num_labels`, `id2label` and `label2id` too (`electra_tf.transformers.model_config`).

Example:
>>> import numpy as np
>>> from electra_tf import ElectraConfig, ElectraForSequenceClassification
>>> config = ElectraConfig(vocab_size=30, embedding_size=8, hidden_size=16, num_layers=1, num_heads=2,
...                        intermediate_size=32)
>>> model = ElectraForSequenceClassification(config, num_labels=3)
>>> outputs = model(input_ids=np.array([[2, 7, 9, 3]]), labels=np.array([1]), output_hidden_states=True)
>>> list(outputs), outputs.logits.shape, outputs[0].shape, len(outputs.hidden_states)
(['loss', 'logits', 'hidden_states'], TensorShape([1, 3]), TensorShape([]), 2)
"""

import contextlib
import contextvars
import logging
from collections.abc import Mapping

import keras
import tensorflow as tf

from electra_tf.transformers.model_config import ModelConfig
from electra_tf.transformers.outputs import ordered

logger = logging.getLogger("electra_tf")
LABEL_NAMES = ("labels", "start_positions", "end_positions")
# Keyword arguments Keras itself passes to a model's call.
_KERAS_CALL_ARGUMENTS = ("training", "mask")
# Set while a model runs its graph (a sub-model's outputs feed it) or Keras runs one of its steps: model outputs
# then stay plain dicts, even when eager.
_PLAIN_OUTPUTS = contextvars.ContextVar("electra_tf_plain_outputs", default=False)


@contextlib.contextmanager
def _plain_outputs():
    token = _PLAIN_OUTPUTS.set(True)
    try:
        yield
    finally:
        _PLAIN_OUTPUTS.reset(token)


class TransformersCalls:
    """Mixed into `ElectraNetwork` (see the module docstring). A head declares `loss_inputs` (the label
    arguments it takes) and `head_loss` (its function of `electra_tf.models.head_losses`)."""

    loss_inputs = ()
    head_loss = None
    no_loss_hint = None  # where a head without a loss says which one has it

    @property
    def config(self):
        """The model's `ElectraConfig`, read with its labels (`electra_tf.transformers.model_config`)."""
        config = self.__dict__.get("_electra_config")
        return None if config is None else ModelConfig.of(config, self)

    @config.setter
    def config(self, config):
        self.__dict__["_electra_config"] = config  # (not state Keras tracks: get_config writes it)

    # === The call ===
    def __call__(self, inputs=None, *args, output_hidden_states=None, return_dict=None, **kwargs):
        keras_kwargs = {key: kwargs.pop(key) for key in _KERAS_CALL_ARGUMENTS if key in kwargs}
        features, labels = self._split_call(inputs, kwargs)
        features = self.complete_inputs(features)
        wants_states = output_hidden_states and "hidden_states" not in self.output
        graph = self._hidden_state_graph() if wants_states else super()
        with _plain_outputs():
            outputs = graph.__call__(features, *args, **keras_kwargs)
        if any(isinstance(value, keras.KerasTensor) for value in tf.nest.flatten(outputs)):
            return outputs  # a symbolic call: a functional graph being built
        outputs = dict(outputs)
        if labels:
            outputs = {"loss": self.head_loss(outputs, labels, features), **outputs}
        if output_hidden_states is False:
            outputs.pop("hidden_states", None)
        plain = not tf.executing_eagerly() or _PLAIN_OUTPUTS.get()
        if "hidden_states" in outputs and not plain:  # transformers' tuple; Keras's steps and graphs: stacked
            outputs["hidden_states"] = tuple(tf.unstack(outputs["hidden_states"], axis=1))
        if return_dict is False:
            return ordered(outputs).to_tuple()
        return outputs if plain else ordered(outputs)

    def _input_names(self):
        return tuple(self.input) if isinstance(self.input, dict) else ()

    def _split_call(self, inputs, kwargs):
        """`(features, labels)` from a call's positional input and keywords."""
        names = self._input_names()
        for key in kwargs:
            if key not in names and key not in self.loss_inputs:
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
        features = {key: value for key, value in given.items() if key in names}
        labels = {key: value for key, value in given.items() if key in self.loss_inputs}
        ignored = sorted(set(given) - set(features) - set(labels))
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
        features = {key: value if value is None or isinstance(value, keras.KerasTensor) else tf.convert_to_tensor(value)
                    for key, value in features.items()}  # (Keras takes no mix of arrays and tensors)
        ids = features["input_ids"]
        if features.get("attention_mask") is None:
            features["attention_mask"] = keras.ops.ones_like(ids, dtype="int32")
        if features.get("token_type_ids") is None:
            features["token_type_ids"] = keras.ops.zeros_like(ids, dtype="int32")
        return features

    # === Hidden states on demand ===
    def _keep_encoder_call(self, encoder_inputs, encoded):
        """Keeps the backbone's call in this model's graph (symbolic tensors; not state Keras tracks or saves),
        where `_hidden_state_graph` cuts it."""
        self.__dict__["_encoder_call"] = (encoder_inputs, encoded)

    def _hidden_state_graph(self):
        """This model's graph with the backbone's hidden states as one more output, on the same layers."""
        graph = self.__dict__.get("_hidden_state_model")
        if graph is None:
            graph = self.__dict__["_hidden_state_model"] = self._build_hidden_state_graph()
        return graph

    def _build_hidden_state_graph(self):
        encoder_inputs, encoded = self.__dict__["_encoder_call"]
        head_outputs = {key: value for key, value in self.output.items() if key not in encoded}
        head = keras.Model((self.input, encoded["last_hidden_state"]), head_outputs)  # the graph past the encoder
        states = self.backbone._hidden_state_graph()(encoder_inputs)
        outputs = {key: states[key] for key in self.output if key in encoded}
        outputs.update(head((self.input, states["last_hidden_state"])))
        return keras.Model(self.input, {**outputs, "hidden_states": states["hidden_states"]})

    # === Keras training on the model's own loss ===
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
