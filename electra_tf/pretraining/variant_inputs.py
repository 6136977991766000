"""What a pre-training variant needs besides its configs: the vocabulary's `##` pieces for whole-word
masking, and the corpus's token counts for a unigram generator.

The run tool and the ablation benchmarks build their `ElectraPretrainer` with these, so a variant is
wired the same way everywhere.

Example:
>>> from electra_tf.config import PretrainingConfig
>>> variant_inputs(PretrainingConfig(whole_word_masking=True), ["[PAD]", "un", "##able"], shards=None)
{'word_continuation_ids': [2]}
>>> variant_inputs(PretrainingConfig(), ["[PAD]"], shards=None)
{}
"""

import os

from electra_tf.config import variants as variant_rules
from electra_tf.util.atomic import read_json, write_json
from electra_tf.data.tfrecord_dataset import check_word_boundaries
from electra_tf.pretraining.masking import continuation_token_ids
from electra_tf.pretraining.unigram import count_tokens


def variant_inputs(pretraining_config, vocabulary, shards, counts_file=None):
    """The `ElectraPretrainer` keyword arguments the variant of `pretraining_config` needs.

    `shards`: the training `Shards` (or None for streamed text), which a unigram generator's counts are taken
    from (one pass), and whose word boundaries whole-word masking checks (`check_word_boundaries`: Chinese text
    needs them). Given `counts_file`, the counts are kept there: read when it exists (a resumed run samples from
    the same distribution even if the shards were rebuilt), else counted and written.
    """
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
