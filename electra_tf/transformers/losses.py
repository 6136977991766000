"""The loss each head computes from `labels=` (or `start_positions=`/`end_positions=`), as transformers 4.x's TF
classes compute it, of their shape: per example `[batch]` (sequence classification, multiple choice, question
answering), or one value `[1]` (token classification, masked LM, replaced-token detection, which transformers'
PyTorch class has). A mean over no label is 0 (PyTorch's NaN).

Example:
>>> import numpy as np
>>> logits = np.log(np.array([[0.5, 0.5], [0.9, 0.1]], "float32"))
>>> labels = {"labels": np.array([0, 1])}
>>> np.round(sequence_classification({"logits": logits}, labels, {}).numpy(), 4)  # -log 0.5, -log 0.1
array([0.6931, 2.3026], dtype=float32)
"""

import tensorflow as tf

IGNORE_INDEX = -100  # transformers' (PyTorch's) CrossEntropyLoss default


def _masked_mean(values, mask):
    mask = tf.cast(mask, values.dtype)
    return tf.reshape(tf.math.divide_no_nan(tf.reduce_sum(values * mask), tf.reduce_sum(mask)), [1])


def _cross_entropies(logits, labels, ignore_index=IGNORE_INDEX):
    """`(cross-entropy of each label, whether it counts)`: labels equal to `ignore_index` count for nothing."""
    logits = tf.cast(logits, tf.float32)
    labels = tf.cast(labels, tf.int32)
    active = tf.not_equal(labels, ignore_index)
    losses = tf.nn.sparse_softmax_cross_entropy_with_logits(tf.where(active, labels, 0), logits)
    return losses * tf.cast(active, losses.dtype), active


def sequence_classification(outputs, labels, inputs):
    logits, labels = tf.cast(outputs["logits"], tf.float32), tf.convert_to_tensor(labels["labels"])
    if logits.shape[-1] == 1:
        return tf.square(tf.reshape(logits, [-1]) - tf.reshape(tf.cast(labels, tf.float32), [-1]))
    if labels.dtype.is_floating:
        return tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels, logits), axis=-1)
    return _cross_entropies(logits, labels)[0]


def token_classification(outputs, labels, inputs):
    return _masked_mean(*_cross_entropies(outputs["logits"], labels["labels"]))


masked_lm = token_classification


def multiple_choice(outputs, labels, inputs):
    return _cross_entropies(outputs["logits"], labels["labels"])[0]


def question_answering(outputs, labels, inputs):
    losses = []
    for name in ("start", "end"):
        logits = outputs[f"{name}_logits"]
        length = tf.shape(logits)[-1]
        positions = tf.clip_by_value(tf.cast(labels[f"{name}_positions"], tf.int32), 0, length)
        losses.append(_cross_entropies(logits, positions, ignore_index=length)[0])
    return (losses[0] + losses[1]) / 2


def replaced_token_detection(outputs, labels, inputs):
    logits = tf.cast(outputs["logits"], tf.float32)
    losses = tf.nn.sigmoid_cross_entropy_with_logits(tf.cast(labels["labels"], tf.float32), logits)
    return _masked_mean(losses, tf.equal(inputs["attention_mask"], 1))
