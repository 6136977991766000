"""Pre-training TFRecords in the original ELECTRA format (int64 `input_ids`, `input_mask`, `segment_ids`; Model
Garden's v2 names read too; `continues_word` for whole-word masking where built), written atomically, parsed
strictly.

Example:
>>> import tempfile, os
>>> from electra_tf.data.packing import Example
>>> path = os.path.join(tempfile.mkdtemp(), "shard-00000-of-00001.tfrecord")
>>> write_shard(path, [Example([101, 7, 102, 0], [1, 1, 1, 0], [0, 0, 0, 0])])
1
>>> record_format(path)
(('input_ids', 'input_mask', 'segment_ids'), 4)
"""

import os

import tensorflow as tf
from google.protobuf.message import DecodeError

LEGACY_NAMES = ("input_ids", "input_mask", "segment_ids")
V2_NAMES = ("input_word_ids", "input_mask", "input_type_ids")
CONTINUES_WORD = "continues_word"


def serialize_example(example):
    """The `tf.train.Example` bytes of a packed `Example`."""
    def int64s(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))

    features = {"input_ids": int64s(example.input_ids), "input_mask": int64s(example.input_mask),
                "segment_ids": int64s(example.segment_ids)}
    if example.continues_word is not None:
        features[CONTINUES_WORD] = int64s(example.continues_word)
    # deterministic=True: map fields in a fixed order, so shards are byte-identical across runs.
    return tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString(deterministic=True)


class ShardWriter:
    """A TFRecord writer that only shows the file under its final name once closed cleanly (a crash leaves at most
    a temporary file); `count` is the examples written and, given `unknown_id`, `unknown` the `[UNK]` tokens."""

    def __init__(self, path, unknown_id=None):
        self.path = path
        self.count = 0
        self.unknown = 0
        self.unknown_id = unknown_id
        self._tmp = f"{path}.tmp-{os.getpid()}"
        self._writer = None

    def __enter__(self):
        self._writer = tf.io.TFRecordWriter(self._tmp)
        return self

    def write(self, example):
        self._writer.write(serialize_example(example))
        self.count += 1
        if self.unknown_id is not None:
            self.unknown += example.input_ids.count(self.unknown_id)

    def __exit__(self, exc_type, exc, traceback):
        try:
            self._writer.close()  # (a full disk often shows first here, as the last buffer is flushed)
            if exc_type is None:
                os.replace(self._tmp, self.path)
        finally:  # whatever failed: the temporary file goes, and so does the space it held
            if os.path.exists(self._tmp):
                os.remove(self._tmp)
        return False


def write_shard(path, examples):
    """Writes `examples` to `path` atomically (see `ShardWriter`); returns their number."""
    with ShardWriter(path) as writer:
        for example in examples:
            writer.write(example)
    return writer.count


def record_format(paths):
    """(feature names, sequence length) of the first record in `paths` (a path or a list): the three names of
    `LEGACY_NAMES` or `V2_NAMES`, and `CONTINUES_WORD` after them when the record has it."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    first = path = None
    for path in paths:
        try:
            first = next(iter(tf.data.TFRecordDataset(path).take(1)), None)
        except tf.errors.DataLossError as e:
            raise ValueError(f"{path}: corrupt TFRecord file ({e.message})") from None
        if first is not None:
            break
    if first is None:
        raise ValueError(f"{', '.join(paths[:3])}{' ...' if len(paths) > 3 else ''}: "
                         "the TFRecord file(s) hold no records")
    try:
        features = tf.train.Example.FromString(first.numpy()).features.feature
    except DecodeError:
        raise ValueError(f"{path}: the records are not tf.train.Example protos (is it a pre-training "
                         "TFRecord file?)") from None
    for names in (LEGACY_NAMES, V2_NAMES):
        if all(name in features for name in names):
            kinds = {name: features[name].WhichOneof("kind") for name in names}
            if set(kinds.values()) != {"int64_list"}:
                raise ValueError(f"{path}: features {names} must be int64 lists, found {kinds}")
            names += (CONTINUES_WORD,) if CONTINUES_WORD in features else ()
            lengths = {len(features[name].int64_list.value) for name in names}
            if len(lengths) != 1:
                raise ValueError(f"{path}: features {names} have different lengths {sorted(lengths)}")
            return names, lengths.pop()
    raise ValueError(f"{path}: records have features {sorted(features)}; expected "
                     f"{list(LEGACY_NAMES)} or {list(V2_NAMES)}")


def parser(names, seq_length):
    """A function from serialized records to the model's int32 input dict (and `continues_word` when `names`
    has it: 0s for a record without it)."""
    spec = {name: tf.io.FixedLenFeature([seq_length], tf.int64) for name in names[:3]}
    if CONTINUES_WORD in names:
        spec[CONTINUES_WORD] = tf.io.FixedLenFeature([seq_length], tf.int64, default_value=[0] * seq_length)
    ids, mask, types = names[:3]

    def parse(serialized):
        features = tf.io.parse_example(serialized, spec)
        inputs = {"input_ids": tf.cast(features[ids], tf.int32),
                  "attention_mask": tf.cast(features[mask], tf.int32),
                  "token_type_ids": tf.cast(features[types], tf.int32)}
        if CONTINUES_WORD in spec:
            inputs[CONTINUES_WORD] = tf.cast(features[CONTINUES_WORD], tf.int32)
        return inputs

    return parse


def find_corrupt_records(files):
    """`(path, records read before the damage, TensorFlow's message)` for each corrupt or truncated file."""
    damaged = []
    for path in files:
        count = 0
        try:
            for _ in tf.data.TFRecordDataset(path):
                count += 1
        except tf.errors.DataLossError as error:
            damaged.append((path, count, error.message.splitlines()[0]))
    return damaged


def describe_corrupt_records(damaged):
    """One line per damaged file, for error messages and logs."""
    return "; ".join(f"{path}: damaged after {count} good records ({message})" for path, count, message in damaged)
