import numpy as np
import tensorflow as tf

from electra_tf.pretraining.variant_inputs import count_tokens


def test_counts_cover_real_tokens_of_every_batch(tiny_vocab):
    batch = tiny_vocab.batch(batch_size=12, seq_length=16, seed=1)
    dataset = tf.data.Dataset.from_tensor_slices(batch).batch(5)  # a short last batch too
    counts = count_tokens(dataset, tiny_vocab.size)
    expected = np.bincount(batch["input_ids"][batch["attention_mask"] == 1], minlength=tiny_vocab.size)
    np.testing.assert_array_equal(counts, expected)
    assert counts[tiny_vocab.pad] == 0
