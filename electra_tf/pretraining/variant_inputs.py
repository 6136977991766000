"""What a pre-training variant needs besides its configs: the vocabulary's `##` pieces for whole-word
masking, and the corpus's token counts for a unigram generator.

The run tool and the ablation benchmarks build their `ElectraPretrainer` with these, so a variant is
wired the same way everywhere.

Example:
>>> from electra_tf.config import PretrainingConfig
>>> variant_inputs(PretrainingConfig(whole_word_masking=True), ["[PAD]", "un", "##able"], train_files=None)
{'word_continuation_ids': [2]}
>>> variant_inputs(PretrainingConfig(), ["[PAD]"], train_files=None)
{}
"""

import os

from electra_tf.config import variants as variant_rules
from electra_tf.util.atomic import read_json, write_json
from electra_tf.data.tfrecord_dataset import check_word_boundaries, pretraining_dataset
from electra_tf.pretraining.masking import continuation_token_ids
from electra_tf.pretraining.unigram import count_tokens


def variant_inputs(pretraining_config, vocabulary, train_files, counts_file=None):
    """The `ElectraPretrainer` keyword arguments the variant of `pretraining_config` needs.

    `train_files`: the TFRecord shards a unigram generator's counts are taken from (one pass), and whose word
    boundaries whole-word masking checks (`pipeline.check_word_boundaries`: Chinese text needs them). Given
    `counts_file`, the counts are kept there: read when it exists (a resumed run samples from the same
    distribution even if the shards were rebuilt), else counted and written.
    """
    inputs = {}
    if pretraining_config.whole_word_masking:
        inputs["word_continuation_ids"] = continuation_token_ids(vocabulary)
        if train_files:  # Chinese shards need the words a segmenter found
            check_word_boundaries(train_files, vocabulary)
    if variant_rules.names_any(pretraining_config, variant_rules.READS_UNIGRAM_COUNTS):
        if counts_file and os.path.exists(counts_file):
            inputs["unigram_counts"] = read_json(counts_file, expect=list)
        elif not train_files:
            raise ValueError("--generator_type=unigram counts the corpus's tokens from --train_files (TFRecord "
                             "shards); build them with tools/build_pretraining_data.py")
        else:
            batches = pretraining_dataset(train_files, pretraining_config.batch_size,
                                          pretraining_config.max_seq_length, training=False)
            inputs["unigram_counts"] = count_tokens(batches, len(vocabulary))
            if counts_file:
                write_json(counts_file, inputs["unigram_counts"])
    return inputs
