"""`KerasMetricCallback`: transformers' callback that scores a model on an evaluation set after each epoch, putting
`metric_fn((predictions, labels))`'s dict into the epoch's logs.

Example:
>>> import numpy as np, tensorflow as tf
>>> from electra_tf import ElectraConfig, ElectraForSequenceClassification
>>> model = ElectraForSequenceClassification(ElectraConfig(vocab_size=30, embedding_size=8, hidden_size=16,
...     num_layers=1, num_heads=2, intermediate_size=32), num_labels=2)
>>> data = tf.data.Dataset.from_tensor_slices(({"input_ids": np.full((4, 5), 7)}, np.array([0, 1, 1, 0]))).batch(2)
>>> accuracy = lambda pair: {"accuracy": float((pair[0].argmax(-1) == pair[1]).mean())}
>>> model.compile(optimizer="adam")
>>> history = model.fit(data, epochs=1, verbose=0, callbacks=[KerasMetricCallback(accuracy, data)])
>>> sorted(history.history)
['accuracy', 'loss']
"""

from collections.abc import Mapping

import keras
import numpy as np
import tensorflow as tf

from electra_tf.transformers.calls import LABEL_NAMES
from electra_tf.transformers.losses import IGNORE_INDEX


class KerasMetricCallback(keras.callbacks.Callback):
    """transformers' `KerasMetricCallback`: predictions and labels gathered over `eval_dataset` (batches of other
    lengths padded with -100), `output_cols`/`label_cols` choosing them as transformers does."""

    def __init__(self, metric_fn, eval_dataset, output_cols=None, label_cols=None, batch_size=None,
                 predict_with_generate=False, use_xla_generation=False, generate_kwargs=None):
        super().__init__()
        if predict_with_generate:
            raise ValueError("predict_with_generate is for text-generating (seq2seq) models; ELECTRA generates no "
                             "text")
        if not callable(metric_fn):
            raise TypeError(f"metric_fn: a function of (predictions, labels) returning a dict, got {metric_fn!r}")
        if not isinstance(eval_dataset, tf.data.Dataset):
            if batch_size is None:
                raise ValueError("eval_dataset is not a tf.data.Dataset: give batch_size to batch it")
            eval_dataset = tf.data.Dataset.from_tensor_slices(eval_dataset).batch(batch_size)
        self.metric_fn = metric_fn
        self.eval_dataset = eval_dataset
        self.output_cols = output_cols
        self.label_cols = label_cols

    def _split(self, batch):
        features, labels = batch if isinstance(batch, tuple) else (batch, None)
        if labels is None and isinstance(features, Mapping):
            names = self.label_cols or [name for name in LABEL_NAMES if name in features]
            labels = {name: features[name] for name in names}
            features = {key: value for key, value in features.items() if key not in names}
        elif isinstance(labels, Mapping) and self.label_cols:
            labels = {name: labels[name] for name in self.label_cols}
        return features, _single(labels)

    def _outputs(self, predictions):
        if not isinstance(predictions, Mapping):
            return predictions
        names = self.output_cols or [key for key in predictions if key != "loss"]
        return _single({name: predictions[name] for name in names})

    def on_epoch_end(self, epoch, logs=None):
        predictions, labels = [], []
        for batch in self.eval_dataset:
            features, batch_labels = self._split(batch)
            predictions.append(self._outputs(self.model.predict_on_batch(features)))
            labels.append(batch_labels)
        scores = self.metric_fn((_concatenate(predictions), _concatenate(labels)))
        if not isinstance(scores, Mapping):
            raise TypeError(f"metric_fn returned {type(scores).__name__}; it returns a dict of metric names and "
                            "values")
        if logs is not None:
            logs.update(scores)


def _single(values):
    """A dict of one value as that value (transformers hands a lone output or label column over bare)."""
    if isinstance(values, Mapping) and len(values) == 1:
        return next(iter(values.values()))
    return values


def _concatenate(batches):
    """Batches of arrays (or dicts of them) as one array each, padded with -100 where lengths differ."""
    if not batches or batches[0] is None:
        return None
    if isinstance(batches[0], Mapping):
        return {key: _concatenate([batch[key] for batch in batches]) for key in batches[0]}
    arrays = [np.asarray(batch) for batch in batches]
    if arrays[0].ndim < 2 or all(array.shape[1:] == arrays[0].shape[1:] for array in arrays):
        return np.concatenate(arrays)
    length = max(array.shape[1] for array in arrays)
    padded = [np.pad(array, [(0, 0), (0, length - array.shape[1])] + [(0, 0)] * (array.ndim - 2),
                     constant_values=IGNORE_INDEX) for array in arrays]
    return np.concatenate(padded)
