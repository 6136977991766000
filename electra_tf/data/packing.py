"""Packing sentences into pre-training examples, by the rules of the original `ExampleBuilder`.

Sentences (token-id lists) accumulate until they reach a target length; the
example is then split into segment A and segment B and written as
`[CLS] A [SEP] B [SEP]` (segment ids 0 for `[CLS] A [SEP]`, 1 for `B [SEP]`):

- 10 % of examples have a single segment (A takes every sentence);
- otherwise A targets `(target - 3) // 2` tokens; a sentence that would push A
  past it still joins A with probability 0.5 while B is empty;
- A is cut to `max_length - 2` tokens, B to what is left after A and 3 special
  tokens;
- after each example, 5 % of the time the next one targets a random length in
  `[5, max_length]` (short inputs, as fine-tuning sees them);
- a document boundary always ends the example: none spans two documents.

There is no next-sentence label, as in ELECTRA.

Example:
>>> import random
>>> builder = ExampleBuilder(max_length=8, cls_id=101, sep_id=102, rng=random.Random(0))
>>> builder.add_sentence([7, 8, 9])
>>> builder.add_sentence([10, 11, 12])
>>> example = builder.end_document()
>>> example.input_ids
[101, 7, 8, 9, 102, 10, 11, 102]
>>> example.segment_ids
[0, 0, 0, 0, 0, 1, 1, 1]
"""

import dataclasses
import random as _random

SINGLE_SEGMENT_PROB = 0.1
SHORT_TARGET_PROB = 0.05
MIN_SHORT_TARGET = 5


@dataclasses.dataclass
class Example:
    """One packed example, padded to `max_length` with zeros."""

    input_ids: list
    input_mask: list
    segment_ids: list

    @property
    def num_tokens(self):
        return sum(self.input_mask)


class ExampleBuilder:
    """Accumulates the sentences of a document and emits packed `Example`s.

    Args:
        max_length: the example length, `[CLS]` and `[SEP]`s included.
        cls_id, sep_id: ids of `[CLS]` and `[SEP]`.
        rng: a `random.Random`; the builder's choices depend on nothing else.
    """

    def __init__(self, max_length, cls_id, sep_id, rng=None):
        if max_length < 5:
            raise ValueError(f"max_length must be at least 5, got {max_length}")
        self.max_length = max_length
        self.cls_id = cls_id
        self.sep_id = sep_id
        self.rng = rng or _random.Random(0)
        self._sentences = []
        self._length = 0
        self._target_length = max_length

    def add_sentence(self, token_ids):
        """Adds a sentence; returns an `Example` when the target length is reached."""
        if not token_ids:
            return None
        self._sentences.append(list(token_ids))
        self._length += len(token_ids)
        if self._length >= self._target_length:
            return self._emit()
        return None

    def end_document(self):
        """Ends the document: returns the `Example` holding what is left, if anything."""
        return self._emit() if self._sentences else None

    def _emit(self):
        if self.rng.random() < SINGLE_SEGMENT_PROB:
            first_target = float("inf")
        else:
            first_target = (self._target_length - 3) // 2
        first, second = [], []
        for sentence in self._sentences:
            joins_first = (
                not first
                or len(first) + len(sentence) < first_target
                or (not second and len(first) < first_target and self.rng.random() < 0.5)
            )
            if joins_first:
                first += sentence
            else:
                second += sentence
        first = first[:self.max_length - 2]
        second = second[:max(0, self.max_length - len(first) - 3)]

        self._sentences, self._length = [], 0
        if self.rng.random() < SHORT_TARGET_PROB:
            self._target_length = self.rng.randint(MIN_SHORT_TARGET, self.max_length)
        else:
            self._target_length = self.max_length
        return self._pack(first, second)

    def _pack(self, first, second):
        input_ids = [self.cls_id] + first + [self.sep_id]
        segment_ids = [0] * len(input_ids)
        if second:
            input_ids += second + [self.sep_id]
            segment_ids += [1] * (len(second) + 1)
        padding = [0] * (self.max_length - len(input_ids))
        return Example(input_ids + padding, [1] * len(input_ids) + padding, segment_ids + padding)
