"""`ModelOutput`: what a model call returns, as transformers' `ModelOutput` is read: an ordered dict whose values are
also attributes and positions, in transformers' field order (ours after); a field the call did not produce reads
as `None` by attribute.

Example:
>>> outputs = ordered({"logits": [[1.0, 2.0]], "loss": 0.5}, SEQUENCE_CLASSIFIER_FIELDS)
>>> outputs.logits, outputs["loss"], outputs[1], len(outputs), list(outputs), outputs.hidden_states
([[1.0, 2.0]], 0.5, [[1.0, 2.0]], 2, ['loss', 'logits'], None)
>>> ordered({"logits": 1, "hidden_states": 3, "loss": 0}, SEQUENCE_CLASSIFIER_FIELDS).to_tuple()
(0, 1, 3)
"""

import collections

# Each transformers output class's fields, in its order (`TFSequenceClassifierOutput`, ...).
BASE_MODEL_FIELDS = ("last_hidden_state", "hidden_states", "attentions")
SEQUENCE_CLASSIFIER_FIELDS = ("loss", "logits", "hidden_states", "attentions")  # also tokens, choices, MLM, RTD
QUESTION_ANSWERING_FIELDS = ("loss", "start_logits", "end_logits", "hidden_states", "attentions")


class ModelOutput(collections.OrderedDict):
    """An ordered dict read by key, by attribute or by position in transformers' field order."""

    def __init__(self, items=(), fields=()):
        super().__init__(items)
        self.__dict__["fields"] = tuple(fields)

    def __getitem__(self, key):
        if isinstance(key, str):
            return super().__getitem__(key)
        return self.to_tuple()[key]

    def __getattr__(self, name):
        if name in self:
            return self[name]
        if name in self.__dict__.get("fields", ()):
            return None  # a field of the class that this call did not produce
        raise AttributeError(f"{type(self).__name__} has no {name!r}: it holds {list(self)}")

    def __reduce__(self):  # (copy and pickle keep the fields)
        return type(self), (list(self.items()), self.fields)

    def to_tuple(self):
        """The values in order, as `return_dict=False` gives them."""
        return tuple(self.values())


def ordered(outputs, fields):
    """`outputs` (a dict) as a `ModelOutput` of `fields`: those first, in their order, then the others."""
    keys = [key for key in fields if key in outputs] + [key for key in outputs if key not in fields]
    return ModelOutput(((key, outputs[key]) for key in keys), fields)
