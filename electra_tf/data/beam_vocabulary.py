"""A WordPiece vocabulary learned on Apache Beam (docs/data_at_scale.md): words counted in the pipeline as the
tokenizer splits them, then the local tool's learner on one worker, so the `vocab.txt` is the local tool's.

Example:
>>> learn_vocabulary_on_beam(["corpus/a.txt"], "vocab.txt", vocab_size=30522)  # doctest: +SKIP
"""

import collections

import apache_beam as beam
import tensorflow as tf

from electra_tf.data.beam_pipeline import ReadPiece, corpus_pieces, run_pipeline
from electra_tf.data.corpus_readers import check_parts
from electra_tf.text.normalization import bert_pretokenize
from electra_tf.text.vocabulary import load_vocabulary, save_vocabulary
from electra_tf.text.vocabulary_learning import MIN_CHAR_COUNT, learn_vocabulary


class CountWords(beam.DoFn):
    """A batch of documents → (word, count) pairs of the batch."""

    def __init__(self, lowercase, strip_accents):
        self.lowercase = lowercase
        self.strip_accents = strip_accents

    def process(self, documents):
        texts = tf.constant(["\n".join(document) for document in documents])
        words = bert_pretokenize(texts, self.lowercase, self.strip_accents).flat_values.numpy()
        yield from collections.Counter(word.decode("utf-8") for word in words).items()


def _learn_and_save(word_counts, vocab_size, min_char_count, output):
    save_vocabulary(learn_vocabulary(dict(word_counts), vocab_size, min_char_count), output)


def learn_vocabulary_on_beam(input_files, output, vocab_size=30522, *, lowercase=True, strip_accents=None,
                             min_char_count=MIN_CHAR_COUNT, text_field="text", tfds_data_dir=None, beam_options=None):
    """Learns the vocabulary of the corpus parts and writes it to `output`; returns it. A failed step (an empty
    corpus too) raises `PipelineFailed` naming its error, and leaves `output` as it was."""
    parts = check_parts(input_files, text_field)
    strip_accents = lowercase if strip_accents is None else strip_accents
    reading = {"blanks_separate_docs": True, "text_field": text_field, "input_files": parts}

    def build(pipeline):
        (pipeline
         | "Pieces" >> beam.Create(corpus_pieces(reading))
         | "SpreadPieces" >> beam.Reshuffle()
         | "Read" >> beam.ParDo(ReadPiece(reading, tfds_data_dir))
         | "Batch" >> beam.BatchElements(min_batch_size=16, max_batch_size=256)
         | "Words" >> beam.ParDo(CountWords(lowercase, strip_accents))
         | "Sum" >> beam.CombinePerKey(sum)
         | "AllCounts" >> beam.combiners.ToList()
         | "Learn" >> beam.Map(_learn_and_save, vocab_size, min_char_count, output))

    run_pipeline(build, beam_options, "vocabulary")
    return load_vocabulary(output)
