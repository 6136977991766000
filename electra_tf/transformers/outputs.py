"""`ModelOutput`: what a model call returns to its user, as `transformers`' `ModelOutput` is read.

An ordered dict (so every dict use of today's outputs keeps working: `outputs["logits"]`, `dict(outputs)`,
`sorted(outputs)`) whose values are also attributes (`outputs.logits`) and positions (`outputs[0]`,
`outputs.to_tuple()`), in transformers' order: `loss` first when there is one, then the head's outputs
(`logits`; `start_logits`, `end_logits`; `last_hidden_state`), then `hidden_states` (a tuple of `L + 1`
`[batch, sequence, H]` tensors, as transformers gives them).

Only eager calls by the user get one (`electra_tf.transformers.calls`): Keras's `fit`/`predict`, graph
functions and SavedModels see the plain dict of tensors they always saw (`keras.tree` would take a dict subclass
for one leaf).

Example:
>>> outputs = ModelOutput(loss=0.5, logits=[[1.0, 2.0]])
>>> outputs.logits, outputs["loss"], outputs[1], len(outputs), list(outputs)
([[1.0, 2.0]], 0.5, [[1.0, 2.0]], 2, ['loss', 'logits'])
>>> ordered({"logits": 1, "hidden_states": 3, "loss": 0}).to_tuple()
(0, 1, 3)
"""

import collections

# The keys that come first, in transformers' order; other outputs follow in the model's order, hidden states last.
LEADING_KEYS = ("loss", "logits", "start_logits", "end_logits", "last_hidden_state")
TRAILING_KEYS = ("hidden_states",)


class ModelOutput(collections.OrderedDict):
    """An ordered dict read by key, by attribute or by position (see the module docstring)."""

    def __getitem__(self, key):
        if isinstance(key, str):
            return super().__getitem__(key)
        return self.to_tuple()[key]

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no {name!r}: it holds {list(self)}") from None

    def to_tuple(self):
        """The values in order, as `return_dict=False` gives them."""
        return tuple(self.values())


def ordered(outputs):
    """`outputs` (a dict) as a `ModelOutput` in transformers' order."""
    head = [key for key in LEADING_KEYS if key in outputs]
    tail = [key for key in TRAILING_KEYS if key in outputs]
    middle = [key for key in outputs if key not in head and key not in tail]
    return ModelOutput((key, outputs[key]) for key in head + middle + tail)
