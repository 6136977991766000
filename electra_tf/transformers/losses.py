"""The loss each head computes from `labels=` (or `start_positions=`/`end_positions=`), as `transformers` does.

Each function takes the model's outputs, its labels and its inputs (dicts of tensors) and returns a scalar
float32 loss, computed as transformers' PyTorch ELECTRA classes compute it (what the parity fixtures hold):

- `sequence_classification`: one label → MSE; integer labels → mean cross-entropy; float labels of the
  logits' shape → mean binary cross-entropy (transformers' "multi_label_classification").
- `token_classification`, `masked_lm`: mean cross-entropy over the labels that are not -100.
- `question_answering`: (CE(start) + CE(end)) / 2, positions clamped to `[0, sequence]` and `sequence` ignored.
- `multiple_choice`: mean cross-entropy over the choices.
- `replaced_token_detection` (`ElectraForPreTraining`): mean binary cross-entropy over the tokens whose
  attention mask is 1.

A mean over no label at all is 0 (PyTorch gives NaN), so a batch without labels trains nothing.

Example:
>>> import numpy as np
>>> logits = np.log(np.array([[0.5, 0.5], [0.9, 0.1]], "float32"))
>>> labels = {"labels": np.array([0, 1])}
>>> round(float(sequence_classification({"logits": logits}, labels, {})), 4)  # -(log 0.5 + log 0.1) / 2
1.4979
"""

import tensorflow as tf

IGNORE_INDEX = -100  # transformers' (PyTorch's) CrossEntropyLoss default


def _masked_mean(values, mask):
    mask = tf.cast(mask, values.dtype)
    return tf.math.divide_no_nan(tf.reduce_sum(values * mask), tf.reduce_sum(mask))


def _cross_entropy(logits, labels, ignore_index=IGNORE_INDEX):
    """Mean cross-entropy over the labels that are not `ignore_index` (PyTorch's `CrossEntropyLoss`)."""
    logits = tf.cast(logits, tf.float32)
    labels = tf.cast(labels, tf.int32)
    active = tf.not_equal(labels, ignore_index)
    losses = tf.nn.sparse_softmax_cross_entropy_with_logits(tf.where(active, labels, 0), logits)
    return _masked_mean(losses, active)


def _binary_cross_entropy(logits, labels, mask=None):
    """Mean binary cross-entropy with logits (PyTorch's `BCEWithLogitsLoss`), over `mask` when given."""
    logits = tf.cast(logits, tf.float32)
    losses = tf.nn.sigmoid_cross_entropy_with_logits(tf.cast(labels, tf.float32), logits)
    return tf.reduce_mean(losses) if mask is None else _masked_mean(losses, mask)


def sequence_classification(outputs, labels, inputs):
    logits, labels = outputs["logits"], tf.convert_to_tensor(labels["labels"])
    if logits.shape[-1] == 1:
        return tf.reduce_mean(tf.square(tf.reshape(tf.cast(logits, tf.float32), [-1]) -
                                        tf.reshape(tf.cast(labels, tf.float32), [-1])))
    if labels.dtype.is_floating:
        return _binary_cross_entropy(logits, labels)
    return _cross_entropy(logits, labels)


def token_classification(outputs, labels, inputs):
    return _cross_entropy(outputs["logits"], labels["labels"])


masked_lm = token_classification
multiple_choice = token_classification


def question_answering(outputs, labels, inputs):
    losses = []
    for name in ("start", "end"):
        logits = outputs[f"{name}_logits"]
        length = tf.shape(logits)[-1]
        positions = tf.clip_by_value(tf.cast(labels[f"{name}_positions"], tf.int32), 0, length)
        losses.append(_cross_entropy(logits, positions, ignore_index=length))
    return (losses[0] + losses[1]) / 2


def replaced_token_detection(outputs, labels, inputs):
    return _binary_cross_entropy(outputs["logits"], labels["labels"], tf.equal(inputs["attention_mask"], 1))
