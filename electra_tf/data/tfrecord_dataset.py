"""tf.data readers of pre-training TFRecords: files → shard per input pipeline → shuffle files → repeat →
interleave → shuffle examples → batch → parse → prefetch.

Example:
>>> ds = pretraining_dataset("runs/demo/data/*.tfrecord", batch_size=32,  # doctest: +SKIP
...                          seq_length=64)
>>> sorted(next(iter(ds)))  # doctest: +SKIP
['attention_mask', 'input_ids', 'token_type_ids']
"""

import dataclasses
import os
import re

import tensorflow as tf

from electra_tf.data.pretraining_data import MANIFEST, read_manifest
from electra_tf.data.tfrecord import CONTINUES_WORD, parser, record_format
from electra_tf.data.word_segmentation import has_cjk

# Whole-word masking refuses shards without word boundaries when this share of the tokens (of their first
# records) are CJK ideographs: Chinese text, whose words would be single characters.
CJK_SHARE_NEEDING_WORDS = 0.1
_RECORDS_CHECKED = 256
# A shard of a numbered set, as the shard builder (and most sharded writers) name them: <stem>-00002-of-00008.
_NUMBERED_SHARD = re.compile(r"^(?P<stem>.+)-(?P<index>\d+)-of-(?P<count>\d+)$")


def list_files(file_patterns):
    """Sorted files (on any filesystem TensorFlow reads) matching comma-separated globs or folders, never what the
    shard builder writes beside its shards (`manifest.json`, `.tmp-` files); a ValueError when nothing matches."""
    files = set()
    for pattern in (p.strip() for p in file_patterns.split(",") if p.strip()):
        for match in tf.io.gfile.glob(pattern):
            if tf.io.gfile.isdir(match):
                files.update(tf.io.gfile.join(match, name) for name in tf.io.gfile.listdir(match)
                             if not name.endswith(".json") and ".tmp-" not in name
                             and not tf.io.gfile.isdir(tf.io.gfile.join(match, name)))
            elif os.path.basename(match) != MANIFEST and ".tmp-" not in os.path.basename(match):
                files.add(match)
    if not files:
        raise ValueError(f"no input files match {file_patterns!r} (no files match the pattern(s))")
    return sorted(files)


def check_shard_set(files):
    """Refuses (a ValueError naming the folder and the missing shards) `files` from an incomplete or mixed shard set:
    every shard a folder's `manifest.json` lists, and no other; without one, whole `<stem>-00002-of-00008` sets.

    >>> check_shard_set([])  # nothing listed: nothing to check
    """
    for folder in sorted({os.path.dirname(path) for path in files}):
        selected = sorted(os.path.basename(path) for path in files if os.path.dirname(path) == folder)
        present = set(tf.io.gfile.listdir(folder or "."))
        manifest = read_manifest(folder or ".")
        if manifest is not None:
            listed = set(manifest["shards"])
            missing = sorted(listed - present)
            if missing:
                raise ValueError(f"{folder}: {len(missing)} of the {len(listed)} shards its {MANIFEST} lists are "
                                 f"missing (e.g. {missing[:3]}); copy them here, or build the shards again")
            foreign = [name for name in selected if name not in listed]
            if foreign:
                raise ValueError(f"{folder}: {len(foreign)} file(s) not among the shards its {MANIFEST} lists "
                                 f"(another build's? e.g. {foreign[:3]}); move them out, or name only this build's "
                                 "shards")
            continue
        numbered = [match for match in map(_NUMBERED_SHARD.match, present) if match]
        for stem, count in sorted({(m["stem"], m["count"]) for m in numbered if m.string in selected}):
            have = {int(m["index"]) for m in numbered if (m["stem"], m["count"]) == (stem, count)}
            missing = [f"{stem}-{i:0{len(count)}d}-of-{count}" for i in range(int(count)) if i not in have]
            if missing:
                raise ValueError(f"{folder}: an incomplete shard set: {len(missing)} of the {int(count)} shards "
                                 f"{stem}-*-of-{count} are missing (e.g. {missing[:3]}) and there is no {MANIFEST} "
                                 "(a build that did not finish?); run the same electra-build-pretraining-data "
                                 "command again to finish it")


def corpus_parts(input_files, tfds_dataset):
    """The corpus parts the data tools' `--input_files` and `--tfds_dataset` name (files, then
    `tfds:<name>[:<split>]`; see `electra_tf.data.corpus_readers`)."""
    if not input_files and not tfds_dataset:
        raise ValueError("give --input_files or --tfds_dataset (or both)")
    return (list_files(input_files) if input_files else []) + ([f"tfds:{tfds_dataset}"] if tfds_dataset else [])


def check_word_boundaries(shards, vocabulary):
    """For whole-word masking: a ValueError naming the `Shards`' patterns when they hold CJK text but no word
    boundaries (`continues_word`), where each character would silently be masked as a word of its own."""
    if CONTINUES_WORD in shards.feature_names:
        return
    ideographs = tf.constant([len(token) == 1 and has_cjk(token) for token in vocabulary])
    batch = next(iter(tf.data.TFRecordDataset(shards.files[0]).take(_RECORDS_CHECKED).batch(_RECORDS_CHECKED)
                      .map(parser(shards.feature_names, shards.seq_length))))
    ids = tf.boolean_mask(batch["input_ids"], batch["attention_mask"] > 0)
    share = float(tf.reduce_mean(tf.cast(tf.gather(ideographs, ids), tf.float32)))
    if share >= CJK_SHARE_NEEDING_WORDS:
        raise ValueError(f"--whole_word_masking: {shards.patterns} holds Chinese (CJK) text ({share:.0%} of the tokens "
                         "are ideographs) but no word boundaries, so every character would be masked as a word; "
                         "rebuild the shards with electra-build-pretraining-data --whole_word_masking, or train "
                         "without --whole_word_masking")


@dataclasses.dataclass(frozen=True)
class Shards:
    """Pre-training TFRecord shards as a run reads them: the files its globs match, listed and checked once (whole
    sets, record length), and their records' feature names.

    >>> shards = Shards.listed("runs/demo/data/*", seq_length=64)  # doctest: +SKIP
    >>> next(iter(shards.dataset(batch_size=32)))["input_ids"].shape  # doctest: +SKIP
    TensorShape([32, 64])
    """

    patterns: str
    files: tuple
    feature_names: tuple
    seq_length: int

    @classmethod
    def listed(cls, file_patterns, seq_length):
        """The shards `file_patterns` match, checked (whole sets, records `seq_length` long); a ValueError naming the
        patterns otherwise."""
        files = tuple(list_files(file_patterns))
        check_shard_set(files)
        names, found_length = record_format(files)
        if found_length != seq_length:
            raise ValueError(f"{file_patterns}: records have length {found_length}, but the sequence length is "
                             f"{seq_length} (pass --max_seq_length={found_length}, or build shards of length "
                             f"{seq_length})")
        return cls(file_patterns, files, names, seq_length)

    def dataset(self, batch_size, *, training=True, seed=None, deterministic=None, input_context=None,
                shuffle_buffer_size=10_000, skip_corrupt=False):
        """Batches of int32 `[batch, seq_length]` `input_ids`, `attention_mask`, `token_type_ids` (and
        `continues_word` where the shards carry it). `batch_size` is global (with `input_context`, each pipeline
        batches its share of its own files); `training` shuffles and repeats forever; `deterministic` defaults to
        `not training`; with `skip_corrupt` a damaged record ends its file's reading instead of the run."""
        files = list(self.files)
        if deterministic is None:
            deterministic = not training
        dataset = tf.data.Dataset.from_tensor_slices(files)
        if input_context is not None:
            if len(files) < input_context.num_input_pipelines:
                raise ValueError(f"{len(files)} file(s) cannot feed {input_context.num_input_pipelines} "
                                 "input pipelines: write at least one shard per worker")
            batch_size = input_context.get_per_replica_batch_size(batch_size)
            dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
        if training:
            dataset = dataset.shuffle(len(files), seed=seed, reshuffle_each_iteration=True).repeat()
        read = (lambda f: tf.data.TFRecordDataset(f).ignore_errors()) if skip_corrupt else tf.data.TFRecordDataset
        dataset = dataset.interleave(read, cycle_length=min(4, len(files)),
                                     num_parallel_calls=tf.data.AUTOTUNE, deterministic=deterministic)
        if training:
            dataset = dataset.shuffle(shuffle_buffer_size, seed=seed)
        dataset = dataset.batch(batch_size, drop_remainder=True)
        dataset = dataset.map(parser(self.feature_names, self.seq_length), num_parallel_calls=tf.data.AUTOTUNE,
                              deterministic=deterministic)
        return dataset.prefetch(tf.data.AUTOTUNE)


def pretraining_dataset(file_patterns, batch_size, seq_length, **options):
    """`Shards.dataset` of the shards `file_patterns` (comma-separated globs) match, records `seq_length` long
    (records of another length are a ValueError naming the patterns)."""
    return Shards.listed(file_patterns, seq_length).dataset(batch_size, **options)
