"""Fine-tuning models on the ELECTRA encoder, named as Hugging Face names them.

Each is a functional Keras model over an `ElectraModel`, taking the usual
`input_ids`, `attention_mask`, `token_type_ids` and returning a dict with
`logits`. Heads follow the original ELECTRA code by default, with Hugging
Face's heads as options (so converted Hugging Face classifiers can load):

- `ElectraForSequenceClassification`: dropout → dense on [CLS] (original);
  `head="huggingface"`: dense(H) → gelu → dropout → dense. `num_labels=1` is
  regression.
- `ElectraForTokenClassification`: dense over every token (Hugging Face puts a
  dropout first: `head="huggingface"`). Scoring the first sub-token of each
  word, as the original does, is a matter of which positions carry labels.
- `ElectraForQuestionAnswering`: the original joint start/end head with an
  answerable classifier (`electra_tf.models.qa_head`); `head="huggingface"`:
  one dense(2) giving `start_logits` and `end_logits` (`qa_outputs`).
- `ElectraForMultipleChoice`: inputs `[batch, choices, sequence]`; [CLS] →
  dense(H) → gelu → dropout → dense(1) per choice (Hugging Face's
  `SequenceSummary` head), logits `[batch, choices]`.

`from_pretrained(path)` takes our own saved model (a folder written by
`tools/run_pretraining.py`, or a `.keras` file), a Hugging Face folder or a
Google checkpoint (see `electra_tf.pretrained`): a checkpoint of the same
class loads with its head (a Hugging Face one picks `head="huggingface"` and
its `num_labels`), any other gives the encoder and a new head.

Example:
>>> import numpy as np
>>> from electra_tf import ElectraConfig
>>> config = ElectraConfig(vocab_size=100, embedding_size=16, hidden_size=32,
...                        num_layers=1, num_heads=2, intermediate_size=64)
>>> model = ElectraForSequenceClassification(config, num_labels=3)
>>> batch = {"input_ids": np.array([[2, 7, 9, 3]]), "attention_mask": np.ones((1, 4), "int32"),
...          "token_type_ids": np.zeros((1, 4), "int32")}
>>> model(batch)["logits"].shape
TensorShape([1, 3])
"""

import keras

from electra_tf.models.activations import activation
from electra_tf.models.encoder import INPUT_NAMES, ElectraModel, as_config, model_inputs, truncated_normal
from electra_tf.models.qa_head import MASKED, JointEndLogits, StartWeightedSummary, answer_mask

HEADS = ("original", "huggingface")


def _check_head(head):
    if head not in HEADS:
        raise ValueError(f"head must be one of {HEADS}, got {head!r}")


@keras.saving.register_keras_serializable(package="electra_tf")
class ChoiceReshape(keras.layers.Layer):
    """Folds `[batch, choices, sequence]` into `[batch * choices, sequence]`, or, with
    `num_choices`, unfolds `[batch * choices, 1]` into `[batch, choices]`. (Keras's
    `Reshape` keeps the batch axis; here it changes.)"""

    def __init__(self, num_choices=None, **kwargs):
        super().__init__(**kwargs)
        self.num_choices = num_choices

    def call(self, inputs):
        if self.num_choices is None:
            return keras.ops.reshape(inputs, (-1, keras.ops.shape(inputs)[-1]))
        return keras.ops.reshape(inputs, (-1, self.num_choices))

    def compute_output_shape(self, input_shape):
        return (None, input_shape[-1] if self.num_choices is None else self.num_choices)

    def get_config(self):
        return {**super().get_config(), "num_choices": self.num_choices}


class _TaskModel(keras.Model):
    """Shared by the task models: config, (de)serialisation and `from_pretrained`."""

    def _keep(self, config, **arguments):
        self.config = config
        self._arguments = arguments

    def get_config(self):
        return {"name": self.name, "trainable": self.trainable, "config": self.config.to_dict(),
                **self._arguments}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    @classmethod
    def from_pretrained(cls, path, allow_missing=False, allow_unexpected=False, **arguments):
        """This task model from a checkpoint in any format (see the module docstring); `arguments` go to
        the constructor. Strict: a ValueError lists missing, unexpected or mis-shaped weights
        (`allow_missing`/`allow_unexpected` relax it)."""
        from electra_tf.pretrained import load_pretrained

        return load_pretrained(cls, path, allow_missing=allow_missing, allow_unexpected=allow_unexpected,
                               **arguments)


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraForSequenceClassification(_TaskModel):
    """Sentence(-pair) classification, or regression with `num_labels=1`; see the module docstring."""

    def __init__(self, config, num_labels=2, head="original", classifier_dropout=None, **kwargs):
        config, dropout = as_config(config), classifier_dropout
        _check_head(head)
        dropout = config.hidden_dropout if dropout is None else dropout
        encoder = ElectraModel(config, name="electra")
        inputs = model_inputs()
        x = encoder(inputs)["last_hidden_state"][:, 0]
        if head == "huggingface":
            x = keras.layers.Dropout(dropout)(x)
            x = keras.layers.Dense(config.hidden_size, activation=activation(config.hidden_act),
                                   kernel_initializer=truncated_normal(config), name="dense")(x)
        x = keras.layers.Dropout(dropout)(x)
        logits = keras.layers.Dense(num_labels, kernel_initializer=truncated_normal(config), name="out_proj")(x)
        super().__init__(inputs=inputs, outputs={"logits": logits}, **kwargs)
        self.encoder = encoder
        self._keep(config, num_labels=num_labels, head=head, classifier_dropout=classifier_dropout)


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraForTokenClassification(_TaskModel):
    """Per-token labels (NER, chunking); logits `[batch, sequence, num_labels]`."""

    def __init__(self, config, num_labels=2, head="original", **kwargs):
        config = as_config(config)
        _check_head(head)
        encoder = ElectraModel(config, name="electra")
        inputs = model_inputs()
        x = encoder(inputs)["last_hidden_state"]
        if head == "huggingface":
            x = keras.layers.Dropout(config.hidden_dropout)(x)
        logits = keras.layers.Dense(num_labels, kernel_initializer=truncated_normal(config), name="classifier")(x)
        super().__init__(inputs=inputs, outputs={"logits": logits}, **kwargs)
        self.encoder = encoder
        self._keep(config, num_labels=num_labels, head=head)


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraForQuestionAnswering(_TaskModel):
    """Extractive QA. `head="original"`: ELECTRA's joint head (`electra_tf.models.qa_head`) with
    `start_logits` `[B, L]`, `end_logits` `[B, K, L]` given `start_candidates` `[B, K]` and, with
    `answerable_classifier`, `answerable_logits` `[B]` (SQuAD 2.0). It takes an optional fourth input
    `start_positions` `[B]` (the gold start, during training). `head="huggingface"`: one dense(2),
    `start_logits` and `end_logits` `[B, L]`.
    """

    def __init__(self, config, head="original", beam_size=20, answerable_classifier=True, hidden_size=512,
                 **kwargs):
        config = as_config(config)
        _check_head(head)
        encoder = ElectraModel(config, name="electra")
        inputs = model_inputs()
        sequence = encoder(inputs)["last_hidden_state"]
        if head == "huggingface":
            logits = keras.layers.Dense(2, kernel_initializer=truncated_normal(config), name="qa_outputs")(sequence)
            start, end = keras.ops.unstack(logits, 2, axis=-1)
            outputs = {"start_logits": start, "end_logits": end}
        else:
            inputs["start_positions"] = keras.Input(shape=(), dtype="int32", name="start_positions", optional=True)
            mask = answer_mask(inputs["attention_mask"], inputs["token_type_ids"])
            start = keras.ops.squeeze(keras.layers.Dense(1, name="start_logits")(sequence), -1)
            start = start - MASKED * (1.0 - mask)
            end, candidates = JointEndLogits(beam_size, hidden_size, name="joint_end")(
                sequence, start, mask, inputs["start_positions"])
            outputs = {"start_logits": start, "end_logits": end, "start_candidates": candidates}
            if answerable_classifier:
                summary = StartWeightedSummary(name="start_weighted_summary")(sequence, start)
                hidden = keras.layers.Dense(hidden_size, activation="gelu", name="answerable_hidden")(summary)
                outputs["answerable_logits"] = keras.ops.squeeze(
                    keras.layers.Dense(1, name="answerable_output")(hidden), -1)
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.encoder = encoder
        self._keep(config, head=head, beam_size=beam_size, answerable_classifier=answerable_classifier,
                   hidden_size=hidden_size)

    def __call__(self, inputs, *args, **kwargs):
        # `start_positions` is optional: Keras wants the key, so a missing one is passed as None.
        if getattr(self, "_arguments", {}).get("head") == "original" and isinstance(inputs, dict) and "start_positions" not in inputs:
            inputs = {**inputs, "start_positions": None}
        return super().__call__(inputs, *args, **kwargs)


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraForMultipleChoice(_TaskModel):
    """Multiple choice: inputs `[batch, choices, sequence]`, logits `[batch, choices]`."""

    def __init__(self, config, num_choices=4, **kwargs):
        config = as_config(config)
        encoder = ElectraModel(config, name="electra")
        inputs = {name: keras.Input(shape=(num_choices, None), dtype="int32", name=name) for name in INPUT_NAMES}
        flat = {name: ChoiceReshape(name=f"fold_{name}")(tensor) for name, tensor in inputs.items()}
        x = encoder(flat)["last_hidden_state"][:, 0]
        x = keras.layers.Dense(config.hidden_size, activation=activation(config.hidden_act),
                               kernel_initializer=truncated_normal(config), name="summary")(x)
        x = keras.layers.Dropout(config.hidden_dropout)(x)
        scores = keras.layers.Dense(1, kernel_initializer=truncated_normal(config), name="classifier")(x)
        logits = ChoiceReshape(num_choices, name="choice_logits")(scores)
        super().__init__(inputs=inputs, outputs={"logits": logits}, **kwargs)
        self.encoder = encoder
        self._keep(config, num_choices=num_choices)
