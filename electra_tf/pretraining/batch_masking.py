"""The pre-trainer's masking step: the config's masking settings and the vocabulary's ids, checked once, applied
in-graph to each batch (`masking.mask_tokens`) on the counter-based masking stream.

Example:
>>> import numpy as np
>>> from electra_tf.config import PretrainingConfig
>>> masker = BatchMasker(PretrainingConfig(max_seq_length=8), vocab_size=50, mask_token_id=4,
...                      special_token_ids=[0, 2, 3])
>>> masker.special_token_ids
(0, 2, 3, 4)
>>> ids = np.array([[2, 10, 11, 12, 13, 14, 15, 3]], "int32")
>>> masker({"input_ids": ids, "attention_mask": np.ones_like(ids)}, counter=0).positions.shape
TensorShape([1, 1])
"""

import tensorflow as tf

from electra_tf.util import rng
from electra_tf.data.tfrecord import CONTINUES_WORD
from electra_tf.pretraining.masking import mask_tokens


class BatchMasker:
    """Masks batches as `pretraining_config` says, never at `special_token_ids` (nor [MASK]); with
    `whole_word_masking`, `word_continuation_ids` are the `##` pieces'."""

    def __init__(self, pretraining_config, vocab_size, mask_token_id, special_token_ids, word_continuation_ids=None):
        self.pretraining_config = pretraining_config
        self.vocab_size = vocab_size
        self.mask_token_id = int(mask_token_id)
        self.special_token_ids = tuple(sorted({int(i) for i in special_token_ids} | {self.mask_token_id}))
        for token_id in self.special_token_ids:
            if not 0 <= token_id < vocab_size:
                raise ValueError(f"special token id {token_id} is outside the vocabulary (vocab_size={vocab_size})")
        self.word_continuation_ids = self._continuation_ids(word_continuation_ids)

    def _continuation_ids(self, ids):
        if ids is None:
            if self.pretraining_config.whole_word_masking:
                raise ValueError("ElectraPretrainer: whole_word_masking needs word_continuation_ids (the "
                                 "tokenizer's `##` pieces: masking.continuation_token_ids(vocabulary))")
            return None
        ids = tuple(sorted({int(i) for i in ids}))
        if ids and not 0 <= ids[0] <= ids[-1] < self.vocab_size:
            raise ValueError(f"ElectraPretrainer: word_continuation_ids holds ids outside the vocabulary "
                             f"(vocab_size={self.vocab_size})")
        return ids

    def _word_continuation_table(self):
        if self.word_continuation_ids is None:
            return None
        return tf.scatter_nd(tf.constant(self.word_continuation_ids, tf.int32)[:, None],
                             tf.ones([len(self.word_continuation_ids)], tf.bool), [self.vocab_size])

    def __call__(self, inputs, counter, micro_batch=0):
        """The batch masked in-graph (a `MaskedBatch`), with the draws of step `counter`."""
        pc = self.pretraining_config
        input_ids = tf.cast(inputs["input_ids"], tf.int32)
        row_ids = rng.global_row_ids(tf.shape(input_ids)[0], micro_batch)
        return mask_tokens(
            input_ids, inputs["attention_mask"], rng.row_keys(pc.seed, counter, row_ids, rng.MASKING),
            mask_prob=pc.mask_prob, max_predictions=pc.predictions_per_seq,
            mask_token_id=self.mask_token_id, special_token_ids=self.special_token_ids,
            vocab_size=self.vocab_size, mask_token_rate=pc.mask_token_rate,
            random_token_rate=pc.random_token_rate, with_replacement=pc.mask_with_replacement,
            word_continuation=self._word_continuation_table(),
            continues_word=inputs.get(CONTINUES_WORD) if pc.whole_word_masking else None)
