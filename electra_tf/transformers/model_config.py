"""`ModelConfig`: a model's `config` as transformers' code reads it: its `ElectraConfig` (frozen, shared), seen with
the model's `num_labels`, `id2label` and `label2id`, since ours keeps the labels on the model.

Example:
>>> from electra_tf import ElectraConfig, ElectraForSequenceClassification
>>> config = ElectraConfig(vocab_size=30, embedding_size=8, hidden_size=16, num_layers=1, num_heads=2,
...                        intermediate_size=32)
>>> model = ElectraForSequenceClassification(config, num_labels=2)
>>> model.label_names = ["negative", "positive"]
>>> model.config.id2label, model.config.num_labels, model.config == config, model.config.hidden_size
({0: 'negative', 1: 'positive'}, 2, True, 16)
"""

from __future__ import annotations

import dataclasses

from electra_tf.config import ElectraConfig, _field


@dataclasses.dataclass(frozen=True, eq=False)
class ModelConfig(ElectraConfig):
    """An `ElectraConfig` with a model's `num_labels`, `id2label` and `label2id`."""

    num_labels: int | None = _field(None, "Labels of the model's head (transformers' config.num_labels).")
    id2label: dict | None = _field(None, "Label name of each class id (transformers' config.id2label).")
    label2id: dict | None = _field(None, "Class id of each label name (transformers' config.label2id).")

    @classmethod
    def of(cls, config, model):
        return cls(**cls.to_dict(config), num_labels=getattr(model, "num_labels", None),
                   id2label=model.id2label, label2id=model.label2id)

    def to_dict(self):
        """The `ElectraConfig`'s fields: the labels belong to the model, not to the network's config."""
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(ElectraConfig)}

    def __eq__(self, other):  # equal to the `ElectraConfig` it shows
        return isinstance(other, ElectraConfig) and self.to_dict() == other.to_dict()

    __hash__ = ElectraConfig.__hash__

    def replace(self, **changes):
        """A plain `ElectraConfig` with `changes` (the labels stay the model's)."""
        return ElectraConfig(**{**self.to_dict(), **changes})
