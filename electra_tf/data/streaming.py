"""Pre-training batches packed on the fly from text files or a TFDS text dataset, with no TFRecord dump: the shard
builder's tokenization and packing, run by a Python generator inside the input pipeline.

Example:
>>> dataset = streaming_dataset(text_documents(["corpus.txt"]), "vocab.txt",  # doctest: +SKIP
...                             batch_size=32, seq_length=128)
"""

import random

import tensorflow as tf

from electra_tf.data.corpus_readers import TFDS_PREFIX, read_part
from electra_tf.data.packing import DocumentPacker
from electra_tf.data.pretraining_data import batch_tokenizer, read_documents, tokenized_documents
from electra_tf.text.tokenizer import WordPieceTokenizer


def text_documents(input_files, blanks_separate_docs=True):
    """A re-iterable source of documents from text files."""
    return lambda: read_documents(input_files, blanks_separate_docs)


def tfds_documents(name, split="train", text_key="text", data_dir=None):
    """A re-iterable source of documents from a TFDS dataset: one record, one document, a line a sentence."""
    return lambda: read_part(f"{TFDS_PREFIX}{name}:{split}", text_field=text_key, tfds_data_dir=data_dir)


def packed_examples(documents, tokenizer, seq_length, seed=0, pipeline_id=0, num_pipelines=1, long_lines="split"):
    """Yields packed examples as dicts of int32 lists, forever, one pass over `documents()` per epoch."""
    epoch = 0
    tokenize = batch_tokenizer(tokenizer)
    while True:
        packer = DocumentPacker(seq_length, tokenizer.cls_token_id, tokenizer.sep_token_id,
                                random.Random(seed * 1_000_003 + epoch * 7_919 + pipeline_id), long_lines)
        mine = ((j, doc) for j, doc in enumerate(documents()) if j % num_pipelines == pipeline_id)
        produced = 0
        for _, document in tokenized_documents(mine, tokenize, packer.split_longer_than):
            for example in packer.pack(document):
                produced += 1
                yield {"input_ids": example.input_ids, "attention_mask": example.input_mask,
                       "token_type_ids": example.segment_ids}
        if produced == 0:
            raise ValueError("the document source yielded no text for this input pipeline")
        epoch += 1


def streaming_dataset(documents, vocabulary, batch_size, seq_length, *, lowercase=True, strip_accents=None,
                      seed=0, shuffle_buffer_size=1000, input_context=None, long_lines="split"):
    """Batches of `{"input_ids", "attention_mask", "token_type_ids"}`, int32 `[batch, seq_length]`, forever;
    `long_lines` as `DocumentPacker`'s. `vocabulary`: a `vocab.txt` path or its tokens, tokenized with
    `lowercase` and `strip_accents`, or an `WordPieceTokenizer` (its own casing; a run's, not built again)."""
    tokenizer = (vocabulary if isinstance(vocabulary, WordPieceTokenizer)
                 else WordPieceTokenizer(vocabulary, lowercase=lowercase, strip_accents=strip_accents))
    pipeline_id, num_pipelines = 0, 1
    if input_context is not None:
        pipeline_id, num_pipelines = input_context.input_pipeline_id, input_context.num_input_pipelines
        batch_size = input_context.get_per_replica_batch_size(batch_size)
    spec = {name: tf.TensorSpec([seq_length], tf.int32)
            for name in ("input_ids", "attention_mask", "token_type_ids")}
    dataset = tf.data.Dataset.from_generator(
        lambda: packed_examples(documents, tokenizer, seq_length, seed, pipeline_id, num_pipelines, long_lines),
        output_signature=spec)
    if shuffle_buffer_size:
        dataset = dataset.shuffle(shuffle_buffer_size, seed=seed)
    return dataset.batch(batch_size, drop_remainder=True).prefetch(tf.data.AUTOTUNE)
