"""What a pre-training variant needs besides its configs: the vocabulary's `##` pieces for whole-word masking, and
the corpus's token counts for a unigram generator (Clark et al., 2020, §3.2), as the run and the benchmarks build it.

Example:
>>> from electra_tf.config import PretrainingConfig
>>> variant_inputs(PretrainingConfig(whole_word_masking=True), ["[PAD]", "un", "##able"], shards=None)
{'word_continuation_ids': [2]}
>>> variant_inputs(PretrainingConfig(), ["[PAD]"], shards=None)
{}
"""

import os

import tensorflow as tf

from electra_tf.config import variants as variant_rules
from electra_tf.data.tfrecord_dataset import check_word_boundaries
from electra_tf.pretraining.masking import continuation_token_ids
from electra_tf.util.atomic import read_json, write_json


def variant_inputs(pretraining_config, vocabulary, shards, counts_file=None):
    """The `ElectraPretrainer` keyword arguments the variant of `pretraining_config` needs. `shards`: the training
    `Shards` (None: streamed text), whose word boundaries whole-word masking checks and whose tokens a unigram
    generator counts, keeping them in `counts_file` (read back on resume, even if the shards were rebuilt)."""
    inputs = {}
    if pretraining_config.whole_word_masking:
        inputs["word_continuation_ids"] = continuation_token_ids(vocabulary)
        if shards:  # Chinese shards need the words a segmenter found
            check_word_boundaries(shards, vocabulary)
    if variant_rules.reads_unigram_counts(pretraining_config):
        if counts_file and os.path.exists(counts_file):
            inputs["unigram_counts"] = read_json(counts_file, expect=list)
        elif not shards:
            raise ValueError("--generator_type=unigram counts the corpus's tokens from --train_files (TFRecord "
                             "shards); build them with tools/build_pretraining_data.py")
        else:
            batches = shards.dataset(pretraining_config.batch_size, training=False)
            inputs["unigram_counts"] = count_tokens(batches, len(vocabulary))
            if counts_file:
                write_json(counts_file, inputs["unigram_counts"])
    return inputs


def count_tokens(dataset, vocab_size):
    """Occurrences of each id among the real tokens of `dataset`'s batches (`input_ids`, `attention_mask`).

    >>> import numpy as np
    >>> batch = {"input_ids": np.array([[2, 7, 7, 3, 0]]), "attention_mask": np.array([[1, 1, 1, 1, 0]])}
    >>> count_tokens(tf.data.Dataset.from_tensors(batch), vocab_size=8)
    [0, 0, 1, 1, 0, 0, 0, 2]
    """
    counts = tf.zeros([vocab_size], tf.int64)
    for batch in dataset:
        ids = tf.boolean_mask(tf.cast(batch["input_ids"], tf.int32), tf.cast(batch["attention_mask"], tf.bool))
        counts += tf.math.bincount(ids, minlength=vocab_size, maxlength=vocab_size, dtype=tf.int64)
    return [int(c) for c in counts.numpy()]
