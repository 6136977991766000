"""`ModelConfig`: a model's `config` as transformers' code reads it — its `ElectraConfig`, plus its labels.

transformers keeps a task's labels in the config (`model.config.id2label[prediction]`); ours keeps them on the
model (`ElectraNetwork.label_names`), since one `ElectraConfig` (frozen, shared by models) describes the
network only. `model.config` is therefore the model's `ElectraConfig` seen with the model's `num_labels`,
`id2label` and `label2id` (as they are when read): it is an `ElectraConfig` (equal to the one the model was
built with, `to_dict` without the labels), and answers transformers' names of the sizes
(`num_hidden_layers`, `num_attention_heads`, …) as `ElectraConfig` does.

Example:
>>> from electra_tf import ElectraConfig, ElectraForSequenceClassification
>>> config = ElectraConfig(vocab_size=30, embedding_size=8, hidden_size=16, num_layers=1, num_heads=2,
...                        intermediate_size=32)
>>> model = ElectraForSequenceClassification(config, num_labels=2)
>>> model.label_names = ["negative", "positive"]
>>> model.config.id2label, model.config.num_labels, model.config == config, model.config.hidden_size
({0: 'negative', 1: 'positive'}, 2, True, 16)
"""

import dataclasses

from electra_tf.config import ElectraConfig


class ModelConfig(ElectraConfig):
    """An `ElectraConfig` with a model's `num_labels`, `id2label` and `label2id` (see the module docstring)."""

    @classmethod
    def of(cls, config, model):
        view = cls(**{field.name: getattr(config, field.name) for field in dataclasses.fields(config)})
        object.__setattr__(view, "num_labels", getattr(model, "num_labels", None))
        object.__setattr__(view, "id2label", model.id2label)
        object.__setattr__(view, "label2id", model.label2id)
        return view

    def __eq__(self, other):  # equal to the `ElectraConfig` it shows: the labels belong to the model
        return isinstance(other, ElectraConfig) and dataclasses.astuple(self) == dataclasses.astuple(other)

    __hash__ = ElectraConfig.__hash__

    def replace(self, **changes):
        """A plain `ElectraConfig` with `changes` (the labels stay the model's)."""
        return ElectraConfig(**{**self.to_dict(), **changes})
