"""What a transformers-style tokenizer call returns (`BatchEncoding`), and how it is built from token ids by the
rules of Hugging Face's `BertTokenizerFast`: `[CLS] A [SEP] (B [SEP])`, its truncation and padding strategies,
Python lists or tensors.

`ElectraTokenizer.__call__` tokenizes (in-graph) and hands the ids to
`from_ids`; nothing here depends on how the ids were made.

Example:
>>> batch = from_ids([[5, 6, 7]], [[8]], cls_id=2, sep_id=3, pad_id=0, truncation=True, max_length=5)
>>> batch.input_ids, batch["token_type_ids"]
([[2, 5, 3, 8, 3]], [[0, 0, 0, 1, 1]])
>>> sorted(batch.keys())
['attention_mask', 'input_ids', 'token_type_ids']
"""

import numpy as np
import tensorflow as tf

from electra_tf.util.library_internals import register_keras_tree_node

PADDING = {False: "do_not_pad", True: "longest", "do_not_pad": "do_not_pad", "longest": "longest",
           "max_length": "max_length"}
TRUNCATION = {None: "do_not_truncate", False: "do_not_truncate", True: "longest_first",
              "do_not_truncate": "do_not_truncate", "longest_first": "longest_first", "only_first": "only_first",
              "only_second": "only_second"}


class BatchEncoding(dict):
    """A dict of `input_ids`, `token_type_ids`, `attention_mask` (as the call asked) that also reads them as
    attributes, as transformers' `BatchEncoding` does: `batch.input_ids`, `batch["input_ids"]`, `model(**batch)`.

    >>> batch = BatchEncoding(input_ids=[[2, 5, 3]], attention_mask=[[1, 1, 1]])
    >>> batch.input_ids, list(batch.keys()), batch.to_dict() == dict(batch)
    ([[2, 5, 3]], ['input_ids', 'attention_mask'], True)
    """

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"no {name!r} in this BatchEncoding (it holds {', '.join(self)})") from None

    def to_dict(self):
        """A plain `dict` of the same values."""
        return dict(self)


# To Keras's nested-structure functions a dict subclass is one leaf, not a dict: registered, a BatchEncoding
# goes into `model(batch)`, `fit`, `predict` as a dict does (keys sorted, as a dict's are).
register_keras_tree_node(
    BatchEncoding, lambda batch: ([batch[key] for key in sorted(batch)], sorted(batch), sorted(batch)),
    lambda keys, values: BatchEncoding(zip(keys, values)))


def strategies(padding, truncation, max_length, model_max_length):
    """transformers' `(padding, truncation, max_length)`: names for `padding`/`truncation` (True, False,
    strings), truncation "longest_first" when only `max_length` is given, and `max_length` defaulting to
    `model_max_length` when padding to it or truncating."""
    if max_length is not None and padding is False and truncation is None:
        truncation = True
    if not isinstance(padding, (bool, str)) or padding not in PADDING:
        raise ValueError(f"padding={padding!r}: not one of True, False, "
                         f"{', '.join(repr(name) for name in PADDING if isinstance(name, str))}")
    if not isinstance(truncation, (bool, str, type(None))) or truncation not in TRUNCATION:
        raise ValueError(f"truncation={truncation!r}: not one of True, False, "
                         f"{', '.join(repr(name) for name in TRUNCATION if isinstance(name, str))}")
    if max_length is not None and (isinstance(max_length, bool) or not isinstance(max_length, int)
                                   or max_length < 0):
        raise ValueError(f"max_length={max_length!r}: not a count of tokens (an int >= 0)")
    padding, truncation = PADDING[padding], TRUNCATION[truncation]
    if max_length is None and (padding == "max_length" or truncation != "do_not_truncate"):
        max_length = model_max_length
    return padding, truncation, max_length


def truncate(first, second, budget, strategy):
    """`first` and `second` (a list or `None`) cut to `budget` tokens as the `tokenizers` library cuts them.

    "longest_first" leaves the shorter whole if the longer can take the cut,
    else gives each half (the longer, or `second` on a tie, the odd token);
    "only_first"/"only_second" cut that one and refuse when it is too short.
    A budget of 0 empties both.
    """
    total = len(first) + len(second or ())
    if budget == 0:
        return [], None if second is None else []
    if total <= budget:
        return first, second
    if strategy == "longest_first":
        if second is None:
            return first[:budget], None
        swap = len(first) > len(second)
        shorter, longer = sorted((len(first), len(second)))
        longer = shorter if shorter > budget else max(shorter, budget - shorter)
        if shorter + longer > budget:
            shorter = budget // 2
            longer = shorter + budget % 2
        keep_first, keep_second = (longer, shorter) if swap else (shorter, longer)
        return first[:keep_first], second[:keep_second]
    if strategy == "only_second" and second is None:
        raise ValueError("Truncation error: Second sequence not provided")
    target = first if strategy == "only_first" else second
    if len(target) <= total - budget:
        raise ValueError("Truncation error: Sequence to truncate too short to respect the provided max_length")
    kept = target[:len(target) - (total - budget)]
    return (kept, second) if strategy == "only_first" else (first, kept)


def from_ids(first, second=None, *, cls_id, sep_id, pad_id, add_special_tokens=True, padding=False,
                 truncation=None, max_length=None, model_max_length=512, return_tensors=None,
                 return_attention_mask=None, return_token_type_ids=None, single=False):
    """A `BatchEncoding` of token id lists `first` (and `second`, a pair per row) as `BertTokenizerFast(...)`
    gives it (see `ElectraTokenizer.__call__` for the arguments). `single`: the call had one text, so
    without `return_tensors` each value is one flat list."""
    padding, truncation, max_length = strategies(padding, truncation, max_length, model_max_length)
    if return_tensors not in (None, "np", "tf"):
        raise ValueError(f"return_tensors={return_tensors!r}: electra_tf gives 'tf' (int32), 'np' (int64) or "
                         "None (lists)")
    rows = {"input_ids": [], "token_type_ids": [], "attention_mask": []}
    for a, b in zip(first, second if second is not None else [None] * len(first)):
        added = (2 if b is None else 3) if add_special_tokens else 0
        if truncation != "do_not_truncate" and max_length >= added:
            a, b = truncate(a, b, max_length - added, truncation)
        cls, sep = ([cls_id], [sep_id]) if add_special_tokens else ([], [])
        ids = cls + a + sep + ([] if b is None else b + sep)
        rows["input_ids"].append(ids)
        rows["token_type_ids"].append([0] * (len(cls + a + sep)) + [1] * (len(ids) - len(cls + a + sep)))
        rows["attention_mask"].append([1] * len(ids))
    if padding != "do_not_pad":
        length = max_length if padding == "max_length" else max(map(len, rows["input_ids"]))
        for name, fill in (("input_ids", pad_id), ("token_type_ids", 0), ("attention_mask", 0)):
            rows[name] = [row + [fill] * (length - len(row)) for row in rows[name]]
    if return_token_type_ids is False:
        del rows["token_type_ids"]
    if return_attention_mask is False:
        del rows["attention_mask"]
    if return_tensors is None:
        return BatchEncoding({name: row[0] for name, row in rows.items()} if single else rows)
    if len(set(map(len, rows["input_ids"]))) > 1:
        raise ValueError(f"return_tensors={return_tensors!r}: the texts have different lengths; pass padding=True "
                         "(and truncation=True) to have batched tensors of one length")
    make = (lambda rows: tf.constant(rows, tf.int32)) if return_tensors == "tf" else (
        lambda rows: np.array(rows, np.int64))
    return BatchEncoding({name: make(row) for name, row in rows.items()})
