"""The checks a transformers-style model call makes before TensorFlow sees its inputs and labels: one sentence naming
the argument, where TensorFlow's errors name layers and ops; what transformers accepts (`int64` ids, labels
`[batch, 1]` or a scalar) is accepted.

Example:
>>> import numpy as np
>>> from electra_tf import ElectraConfig
>>> check_features({"input_ids": as_tensor("input_ids", [[2, 40, 3]])}, ElectraConfig(vocab_size=30), "ElectraModel")
Traceback (most recent call last):
ValueError: ElectraModel: input_ids holds 40, outside the vocabulary (ids 0..29)
>>> as_tensor("input_ids", ["a text"])
Traceback (most recent call last):
TypeError: input_ids: strings are not token ids; tokenize them first (tokenizer(texts, return_tensors="tf"))
"""

import numpy as np
import tensorflow as tf


def as_tensor(name, value):
    """`value` as a tensor of the integers an input holds; a TypeError naming `name` for what is none."""
    if isinstance(value, tf.Tensor):
        tensor = value
    else:
        try:
            tensor = tf.convert_to_tensor(np.asarray(value) if isinstance(value, (list, tuple)) else value)
        except (ValueError, TypeError):
            raise TypeError(f"{name}: rows of different lengths (or not numbers); pad them to one length "
                            "(tokenizer(texts, padding=True, return_tensors=\"tf\"))") from None
    if tensor.dtype == tf.string:
        raise TypeError(f"{name}: strings are not token ids; tokenize them first "
                        "(tokenizer(texts, return_tensors=\"tf\"))")
    if not (tensor.dtype.is_integer or tensor.dtype == tf.bool):
        raise TypeError(f"{name}: {tensor.dtype.name} values; {name} are integers (int32 or int64)")
    return tensor


def check_features(features, config, model_name):
    """Refuses inputs the model cannot read: ids outside the vocabulary (negative too), more tokens than
    positions, token types beyond the table, a mask or types of another shape than the ids."""
    ids = features["input_ids"]
    if ids.shape.rank is not None and ids.shape.rank < 2:
        raise ValueError(f"{model_name}: input_ids of shape {ids.shape.as_list()}; give a batch, [batch, sequence] "
                         "(a single text's ids: input_ids[None] or tokenizer(text, return_tensors=\"tf\"))")
    for name in ("attention_mask", "token_type_ids"):
        if name in features and features[name].shape != ids.shape:
            raise ValueError(f"{model_name}: {name} of shape {features[name].shape.as_list()} but input_ids of "
                             f"{ids.shape.as_list()}; give one value per token")
    _check_range(model_name, "input_ids", ids, config.vocab_size, "outside the vocabulary")
    _check_range(model_name, "token_type_ids", features.get("token_type_ids"), config.type_vocab_size,
                 "beyond the token type table")
    length = ids.shape[-1]
    if length is not None and length > config.max_position_embeddings:
        raise ValueError(f"{model_name}: {length} tokens but the model has {config.max_position_embeddings} "
                         "positions; truncate the texts (tokenizer(..., truncation=True, "
                         f"max_length={config.max_position_embeddings}))")


def _check_range(model_name, name, values, size, what):
    if values is None or not tf.executing_eagerly() or tf.size(values) == 0:
        return
    low, high = int(tf.reduce_min(values)), int(tf.reduce_max(values))
    if low < 0 or high >= size:
        raise ValueError(f"{model_name}: {name} holds {low if low < 0 else high}, {what} (ids 0..{size - 1})")


def check_labels(labels, outputs, per_token, model_name):
    """The labels as the head's loss takes them (a scalar or `[batch, 1]` of one label per example made
    `[batch]`), or a ValueError/TypeError naming the argument: another batch size, another shape per token,
    strings, float class ids."""
    checked = {}
    main = outputs["logits"] if "logits" in outputs else outputs["start_logits"]
    batch = main.shape[0]
    for name, value in labels.items():
        tensor = tf.convert_to_tensor(value)
        if tensor.dtype == tf.string:
            raise TypeError(f"{model_name}: {name} holds strings; give label ids (model.config.label2id maps names "
                            "to ids)")
        if per_token:
            if tensor.shape != main.shape[:2]:
                raise ValueError(f"{model_name}: {name} of shape {tensor.shape.as_list()} but the model scores "
                                 f"{main.shape[:2].as_list()} tokens; give one label per token (-100 where none)")
        else:
            tensor = _one_per_example(tensor, main, name, model_name)
            if tensor.shape[0] != batch:
                raise ValueError(f"{model_name}: {tensor.shape[0]} {name} for a batch of {batch}; give one per "
                                 "example")
        checked[name] = tensor
    return checked


def _one_per_example(labels, logits, name, model_name):
    classes = logits.shape[-1] if logits.shape.rank == 2 else None
    multi_hot = labels.dtype.is_floating and labels.shape.rank == 2 and labels.shape[-1] == classes and classes > 1
    if multi_hot:
        return labels
    if labels.shape.rank == 0 or (labels.shape.rank == 2 and labels.shape[-1] == 1):
        labels = tf.reshape(labels, [-1])
    if labels.shape.rank != 1:
        raise ValueError(f"{model_name}: {name} of shape {labels.shape.as_list()}; give one per example, [batch]"
                         + (f" (or multi-hot floats, [batch, {classes}])" if classes and classes > 1 else ""))
    if labels.dtype.is_floating and classes is not None and classes > 1 and name == "labels":
        raise TypeError(f"{model_name}: {name} are floats for a {classes}-class head; give class ids (integers), "
                        f"or multi-hot floats of shape [batch, {classes}]")
    return labels
