"""Packing sentences into pre-training examples `[CLS] A [SEP] B [SEP]`: the original `ExampleBuilder`'s rules
(10 % single-segment, 5 % short targets, no example across documents, no next-sentence label), and
`DocumentPacker`, which by default drops no text (docs/pretraining.md).

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

import collections
import dataclasses
import random as _random

SINGLE_SEGMENT_PROB = 0.1
SHORT_TARGET_PROB = 0.05
MIN_SHORT_TARGET = 5
LONG_LINES = ("split", "sentences", "truncate")
# Why tokens were dropped (only with long_lines="truncate"): the `dropped` keys of `PackingCounts`.
DROPPED_LONG_LINE = "line_longer_than_an_example"
DROPPED_OVERFLOW = "sentence_overflowing_an_example"


@dataclasses.dataclass
class Example:
    """One packed example, padded to `max_length` with zeros; `continues_word`, when the text was segmented into
    words (`electra_tf.data.word_segmentation`), is 1 where a token continues the previous token's word."""

    input_ids: list
    input_mask: list
    segment_ids: list
    continues_word: list = None

    @property
    def num_tokens(self):
        return sum(self.input_mask)

    @property
    def num_text_tokens(self):
        """Tokens other than `[CLS]` and the `[SEP]`s (one more `[SEP]` when there is a segment B)."""
        return self.num_tokens - (3 if 1 in self.segment_ids else 2)


class ExampleBuilder:
    """Accumulates the sentences of a document and emits packed `Example`s by the original rules; `dropped`
    counts the tokens they cut, by reason. With `keep_overflow`, an example is due once it holds `capacity`
    tokens and the caller adds no more than `room` at a time, so nothing is cut.
    """

    def __init__(self, max_length, cls_id, sep_id, rng=None, keep_overflow=False):
        if max_length < 5:
            raise ValueError(f"max_length must be at least 5, got {max_length}")
        self.max_length = max_length
        self.cls_id = cls_id
        self.sep_id = sep_id
        self.rng = rng or _random.Random(0)
        self.keep_overflow = keep_overflow
        self.dropped = collections.Counter()
        self._sentences = []
        self._marks = []
        self._length = 0
        self._target_length = max_length

    @property
    def capacity(self):
        return self.max_length - 3

    @property
    def room(self):
        """How many tokens the next sentence may bring without being cut."""
        return self.capacity - self._length if self.keep_overflow else float("inf")

    def add_sentence(self, token_ids, marks=None):
        """Adds a sentence (and its word marks); returns an `Example` when the target length is reached."""
        if not token_ids:
            return None
        self._sentences.append(list(token_ids))
        self._marks.append(None if marks is None else list(marks))
        self._length += len(token_ids)
        due = min(self._target_length, self.capacity) if self.keep_overflow else self._target_length
        if self._length >= due:
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
        first, second, first_marks, second_marks = [], [], [], []
        for sentence, marks in zip(self._sentences, self._marks):
            joins_first = (
                not first
                or len(first) + len(sentence) < first_target
                or (not second and len(first) < first_target and self.rng.random() < 0.5)
            )
            marks = [0] + marks[1:] if marks else [0] * len(sentence)  # a segment's sentences start words
            if joins_first:
                first += sentence
                first_marks += marks
            else:
                second += sentence
                second_marks += marks
        kept_first = first[:self.max_length - 2]
        kept_second = second[:max(0, self.max_length - len(kept_first) - 3)]
        lost = len(first) + len(second) - len(kept_first) - len(kept_second)
        if lost:
            reason = (DROPPED_LONG_LINE if max(map(len, self._sentences)) > self.capacity else DROPPED_OVERFLOW)
            self.dropped[reason] += lost
        first, second = kept_first, kept_second
        marks = (first_marks[:len(first)], second_marks[:len(second)]) if any(self._marks) else None

        self._sentences, self._marks, self._length = [], [], 0
        if self.rng.random() < SHORT_TARGET_PROB:
            self._target_length = self.rng.randint(MIN_SHORT_TARGET, self.max_length)
        else:
            self._target_length = self.max_length
        return self._pack(first, second, marks)

    def _pack(self, first, second, marks=None):
        input_ids = [self.cls_id] + first + [self.sep_id]
        segment_ids = [0] * len(input_ids)
        if second:
            input_ids += second + [self.sep_id]
            segment_ids += [1] * (len(second) + 1)
        padding = [0] * (self.max_length - len(input_ids))
        example = Example(input_ids + padding, [1] * len(input_ids) + padding, segment_ids + padding)
        if marks is not None:
            first_marks, second_marks = marks
            example.continues_word = [0] + first_marks + [0] + (second_marks + [0] if second else []) + padding
        return example


@dataclasses.dataclass
class PackingCounts:
    """What a packer read, wrote (special tokens not counted) and dropped, and the examples that end inside a
    sentence; `as_dict()` is what a shard manifest records."""

    documents: int = 0
    read: int = 0
    written: int = 0
    dropped: dict = dataclasses.field(default_factory=dict)
    cut_mid_sentence: int = 0
    words: collections.Counter = dataclasses.field(default_factory=collections.Counter)

    def as_dict(self):
        counts = {"documents": self.documents, "tokens": self.read, "tokens_written": self.written,
                  "tokens_dropped": dict(self.dropped), "examples_ending_mid_sentence": self.cut_mid_sentence}
        return {**counts, "whole_words": dict(self.words)} if self.words else counts


def word_counts(example, special_ids):
    """`{"words", "words_of_several_tokens", "tokens_in_words_of_several_tokens"}` of an `Example` with word marks
    (`continues_word`): what whole-word masking masks as one unit (special tokens not counted).

    >>> example = Example([2, 7, 8, 9, 3, 0], [1, 1, 1, 1, 1, 0], [0] * 6, [0, 0, 1, 0, 0, 0])
    >>> word_counts(example, {2, 3})
    {'words': 2, 'words_of_several_tokens': 1, 'tokens_in_words_of_several_tokens': 2}
    """
    marks = [mark for token, mark, mask in zip(example.input_ids, example.continues_word, example.input_mask)
             if mask and token not in special_ids]
    starts = sum(1 for first, second in zip(marks, marks[1:] + [0]) if not first and second)
    return {"words": marks.count(0), "words_of_several_tokens": starts,
            "tokens_in_words_of_several_tokens": sum(marks) + starts}


class DocumentPacker:
    """Packs whole documents (lists of lines, a line a list of sentences of token ids) into `Example`s; pure (no
    I/O, no TensorFlow), so every producer of examples shares it. `long_lines`: "split" drops nothing (a line
    longer than an example is packed as its sentences, cut into pieces of half an example, and a sentence
    overflowing an example goes on in the next); "sentences" also starts the next example with a sentence that
    does not fit; "truncate" is the original rules.

    Example:
    >>> import random
    >>> packer = DocumentPacker(max_length=8, cls_id=101, sep_id=102, rng=random.Random(0))
    >>> [e.input_ids for e in packer.pack([[[7, 8, 9], [10, 11, 12, 13]]])]
    [[101, 7, 8, 102, 9, 10, 11, 102], [101, 12, 13, 102, 0, 0, 0, 0]]
    >>> packer.counts.as_dict()  # the first example ends inside the sentence [10, 11, 12, 13]
    {'documents': 1, 'tokens': 7, 'tokens_written': 7, 'tokens_dropped': {}, 'examples_ending_mid_sentence': 1}
    >>> packer = DocumentPacker(8, 101, 102, random.Random(0), long_lines="truncate")
    >>> [e.input_ids for e in packer.pack([[[7, 8, 9], [10, 11, 12, 13]]])]
    [[101, 7, 8, 9, 10, 11, 12, 102]]
    >>> packer.counts.as_dict()
    {'documents': 1, 'tokens': 7, 'tokens_written': 6, 'tokens_dropped': {'line_longer_than_an_example': 1}, \
'examples_ending_mid_sentence': 1}
    """

    def __init__(self, max_length, cls_id, sep_id, rng=None, long_lines="split"):
        if long_lines not in LONG_LINES:
            raise ValueError(f"long_lines must be one of {list(LONG_LINES)}, got {long_lines!r}")
        self.long_lines = long_lines
        self.builder = ExampleBuilder(max_length, cls_id, sep_id, rng, keep_overflow=long_lines != "truncate")
        self.counts = PackingCounts()
        self._at_sentence_end = True  # whether the last piece added ended a sentence
        self._dropped = 0  # the builder's dropped tokens when an example was last emitted
        self._piece_length = max(1, self.builder.capacity // (1 if long_lines == "sentences" else 2))

    @property
    def split_longer_than(self):
        """Lines of more characters than this may need splitting into sentences (None: "truncate")."""
        return split_threshold(self.builder.max_length, self.long_lines)

    def pack(self, document, marks=None):
        """The examples of one document; `marks`, shaped as `document`, are its tokens' word marks (1: continues
        the previous token's word), carried to `Example.continues_word`."""
        examples = []
        for line, line_marks in zip(document, marks if marks is not None else [None] * len(document)):
            line_marks = line_marks if line_marks is not None else [None] * len(line)
            line_length = sum(map(len, line))
            self.counts.read += line_length
            if line_length <= self.builder.capacity or self.long_lines == "truncate":
                pieces = [(*_joined(line, line_marks), True)]
            else:
                pieces = [(sentence[start:start + self._piece_length],
                           sentence_marks and sentence_marks[start:start + self._piece_length],
                           start + self._piece_length >= len(sentence))
                          for sentence, sentence_marks in zip(line, line_marks)
                          for start in range(0, len(sentence), self._piece_length)]
            for piece, piece_marks, ends_sentence in pieces:
                examples += self._add(piece, piece_marks, ends_sentence)
        examples.append(self._ended(self.builder.end_document(), True))
        examples = [example for example in examples if example is not None]
        self.counts.documents += 1
        self.counts.written += sum(example.num_text_tokens for example in examples)
        for example in examples:
            if example.continues_word is not None:
                self.counts.words.update(word_counts(example, {self.builder.cls_id, self.builder.sep_id}))
        self.counts.dropped = dict(sorted(self.builder.dropped.items()))
        return examples

    def _add(self, piece, marks, ends_sentence):
        """Adds a piece no more than `room` tokens at a time (with "sentences", one that does not fit starts the
        next example whole)."""
        examples = []
        if self.long_lines == "sentences" and len(piece) > self.builder.room:
            examples.append(self._ended(self.builder.end_document(), self._at_sentence_end))
        while True:
            room = self.builder.room
            if len(piece) <= room:
                examples.append(self._ended(self.builder.add_sentence(piece, marks), ends_sentence))
                self._at_sentence_end = ends_sentence
                return examples
            examples.append(self._ended(self.builder.add_sentence(piece[:room], marks and marks[:room]), False))
            piece, marks = piece[room:], marks and marks[room:]

    def _ended(self, example, at_sentence_end):
        """`example` (or None), counted in `cut_mid_sentence` when it ends inside a sentence or text was cut."""
        dropped = sum(self.builder.dropped.values())
        if example is not None and (not at_sentence_end or dropped > self._dropped):
            self.counts.cut_mid_sentence += 1
        self._dropped = dropped
        return example


def _joined(line, line_marks):
    """A line's sentences as one piece: (ids, marks or None)."""
    ids = [token for sentence in line for token in sentence]
    if not any(marks is not None for marks in line_marks):
        return ids, None
    return ids, [mark for sentence, marks in zip(line, line_marks) for mark in (marks or [0] * len(sentence))]


def split_threshold(max_length, long_lines):
    """`DocumentPacker(max_length, ..., long_lines=long_lines).split_longer_than`, without a packer.

    >>> split_threshold(128, "split"), split_threshold(128, "sentences"), split_threshold(128, "truncate")
    (125, 125, None)
    """
    return None if long_lines == "truncate" else max_length - 3
