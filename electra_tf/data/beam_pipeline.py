"""Corpus → pre-training TFRecord shards on Apache Beam, byte-identical to the local builder's on any runner
(docs/data_at_scale.md): each piece of the corpus is read twice, to number its documents and then to tokenize
them; only the tokenized documents cross the one shuffle, grouped by shard. The reading, numbering, packing and
writing are the local builder's own functions; only the plumbing is here.

Example:
>>> build_pretraining_shards_on_beam(  # doctest: +SKIP
...     ["corpus/a.txt", "corpus/b.jsonl"], "vocab.txt", "data/", num_shards=64,
...     beam_options=["--direct_num_workers=2", "--direct_running_mode=multi_processing"])
"""

import collections
import os
import shutil

import apache_beam as beam
import numpy as np
from apache_beam.options.pipeline_options import PipelineOptions

from electra_tf.util.atomic import read_json, write_json
from electra_tf.data.corpus_readers import CorpusStats, document_hash, part_pieces, read_part
from electra_tf.data.packing import split_threshold
from electra_tf.data.pretraining_data import (
    batch_tokenizer,
    build_settings,
    plan_build,
    shard_counts,
    shard_name,
    shard_of,
    shard_packer,
    tokenized_batches,
    write_manifest,
)
from electra_tf.data.tfrecord import ShardWriter
from electra_tf.data.word_segmentation import WordCutter
from electra_tf.text.tokenizer import WordPieceTokenizer
from electra_tf.text.vocabulary import load_vocabulary
from electra_tf.text.vocabulary_learning import unknown_words

COUNTS_DIR = ".counts"


class PipelineFailed(ValueError):
    """The Beam pipeline stopped on an error; its complete shards are kept."""


def beam_pipeline_options(beam_options):
    """`PipelineOptions` from a list of flags or one string of them; the DirectRunner and the workers' logs at
    WARNING unless named (the DirectRunner's workers print every step)."""
    flags = beam_options.split() if isinstance(beam_options, str) else list(beam_options or [])
    defaults = {"--runner": "DirectRunner", "--default_sdk_harness_log_level": "WARNING"}
    flags += [f"{name}={value}" for name, value in defaults.items() if not any(f.startswith(name) for f in flags)]
    return PipelineOptions(flags)


def run_pipeline(build, beam_options, what):
    """Builds the pipeline with `build(pipeline)` and runs it to the end; an error in a step becomes one
    `PipelineFailed` naming the step's own error (not Beam's wrapped traceback)."""
    try:
        with beam.Pipeline(options=beam_pipeline_options(beam_options)) as pipeline:
            build(pipeline)
    except Exception as e:  # noqa: BLE001 (a step's error arrives wrapped in the runner's own exception)
        cause = _root_cause(e)
        raise PipelineFailed(f"the Beam pipeline ({what}) failed: {cause}") from e


def _root_cause(error):
    """The first line of the innermost error's message (one raised `from None`: a reader's own line naming the
    file), without Beam's "[while running ...]" notes."""
    while error.__cause__ is not None or (error.__context__ is not None and not error.__suppress_context__):
        error = error.__cause__ or error.__context__
    message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return message.split(" [while running")[0]


class ReadPiece(beam.DoFn):
    """A corpus piece (`corpus_pieces`) → its documents."""

    def __init__(self, settings, tfds_data_dir):
        self.settings = settings
        self.tfds_data_dir = tfds_data_dir

    def process(self, piece):
        _, part, part_piece = piece
        yield from _read_piece(part, part_piece, self.settings, self.tfds_data_dir, CorpusStats())


class CountPiece(ReadPiece):
    """A corpus piece → (its index, (documents, lines read, undecodable lines, the first's (path, line in the
    piece))); with de-duplication also each document's (fingerprint, (piece, position)), tagged "fingerprints".
    """

    def process(self, piece):
        index, part, part_piece = piece
        stats = CorpusStats()
        for position, document in enumerate(_read_piece(part, part_piece, self.settings, self.tfds_data_dir, stats)):
            if self.settings["dedupe"]:
                yield beam.pvalue.TaggedOutput("fingerprints", (document_hash(document), (index, position)))
        yield index, (stats.documents, stats.lines_read, stats.undecodable_lines, stats.first_undecodable)


def _read_piece(part, part_piece, settings, tfds_data_dir, stats):
    return read_part(part, settings["blanks_separate_docs"], settings["text_field"], tfds_data_dir, stats,
                     piece=part_piece)


def _later_copies(fingerprint_and_positions):
    """(piece, position) of every copy of a document but the first (the local builder keeps the first)."""
    return sorted(fingerprint_and_positions[1])[1:]


def _first_documents(counts, dropped):
    """{piece: the number (`j`) of its first kept document}, from every piece's counts and dropped positions."""
    first, total = {}, 0
    for index, (documents, *_) in sorted(counts):
        first[index] = total
        total += documents - len(dropped.get(index, ()))
    return first


class TokenizePiece(beam.DoFn):
    """A piece → (shard, (piece, its documents for the shard, `ShardDocuments.encoded()`)) for every wanted shard it
    feeds, its documents numbered from `first[piece]` (skipping the dropped copies)."""

    def __init__(self, vocab_file, settings, tfds_data_dir, wanted):
        self.vocab_file = vocab_file
        self.settings = settings
        self.tfds_data_dir = tfds_data_dir
        self.wanted = set(wanted)
        self.tokenizer = self.tokenize = self.cutter = None

    def setup(self):
        self.tokenizer = WordPieceTokenizer(self.vocab_file, lowercase=self.settings["lowercase"],
                                            strip_accents=self.settings["strip_accents"])
        self.tokenize = batch_tokenizer(self.tokenizer)
        self.cutter = WordCutter() if "word_segmenter" in self.settings else None  # (Beam runs the workers)

    def process(self, piece, first, dropped):
        index, part, part_piece = piece
        num_shards = self.settings["num_shards"]
        skipped = set(dropped.get(index, ()))

        def numbered():
            j = first[index]
            for position, document in enumerate(_read_piece(part, part_piece, self.settings, self.tfds_data_dir,
                                                            CorpusStats())):
                if position not in skipped:
                    if shard_of(j, num_shards) in self.wanted:
                        yield j, document
                    j += 1

        by_shard, unknown_lines, texts = {}, {}, {}
        unknown_id = self.tokenizer.token_to_id(self.tokenizer.oov_token)
        split_longer_than = split_threshold(self.settings["max_seq_length"], self.settings["long_lines"])
        documents = ((j, texts.setdefault(j, document)) for j, document in numbered())
        for pending, ragged, marks in tokenized_batches(documents, self.tokenize, split_longer_than, self.cutter):
            # The batch's ids stay arrays (no Python list of every id, as the local builder's packer needs).
            ids = ragged.flat_values.numpy().astype(np.int32) if ragged is not None else np.zeros(0, np.int32)
            lengths = ragged.row_lengths().numpy().astype(np.int32) if ragged is not None else ids
            token_ends = np.cumsum(lengths).tolist()
            sentence = 0
            for j, sentence_counts in pending:
                end = sentence + sum(sentence_counts)
                first_token = token_ends[sentence - 1] if sentence else 0
                last_token = token_ends[end - 1] if end else 0
                shard = by_shard.setdefault(shard_of(j, num_shards), ShardDocuments())
                shard.add(sentence_counts, lengths[sentence:end], ids[first_token:last_token],
                          None if marks is None else marks[first_token:last_token])
                lines = texts.pop(j)
                if (ids[first_token:last_token] == unknown_id).any():
                    unknown_lines.setdefault(shard_of(j, num_shards), []).extend(lines)
                sentence = end
        for shard, documents in sorted(by_shard.items()):
            unknown = unknown_words(self.tokenizer, unknown_lines.get(shard, []))
            yield shard, (index, documents.encoded(), dict(unknown))


class ShardDocuments:
    """Tokenized documents gathered for a shard as int32 arrays (lines a document, sentences a line, ids a
    sentence, the ids) and int8 word marks: as bytes, a quarter of pickled lists in the shuffle.

    >>> documents = ShardDocuments()
    >>> documents.add([2], np.array([2, 1]), np.array([5, 6, 7]))
    >>> documents.add([1, 1], np.array([1, 2]), np.array([8, 9, 10]))
    >>> decode_documents(documents.encoded())
    [([[[5, 6], [7]]], None), ([[[8]], [[9, 10]]], None)]
    """

    def __init__(self):
        self.document_sizes, self.line_sizes, self.lengths, self.ids, self.marks = [], [], [], [], []

    def add(self, sentence_counts, sentence_lengths, ids, marks=None):
        self.document_sizes.append(len(sentence_counts))
        self.line_sizes += sentence_counts
        self.lengths.append(sentence_lengths)
        self.ids.append(ids)
        if marks is not None:
            self.marks.append(marks)

    def encoded(self):
        return tuple(np.concatenate([np.zeros(0, np.int32), *arrays]).astype(np.int32).tobytes() for arrays in (
            [self.document_sizes], [self.line_sizes], self.lengths, self.ids)) + (
            np.concatenate([np.zeros(0, np.int8), *self.marks]).astype(np.int8).tobytes(),)


def decode_documents(encoded):
    """The documents of `ShardDocuments.encoded()`: (lines of sentences of ids, the same of word marks or
    None) each."""
    document_sizes, line_sizes, sentence_lengths, ids = (np.frombuffer(b, np.int32) for b in encoded[:4])
    marks = np.frombuffer(encoded[4], np.int8).tolist()
    documents = _chunks(_chunks(_chunks(ids.tolist(), sentence_lengths), line_sizes), document_sizes)
    if not marks:
        return [(document, None) for document in documents]
    marked = _chunks(_chunks(_chunks(marks, sentence_lengths), line_sizes), document_sizes)
    return list(zip(documents, marked))


def _chunks(items, sizes):
    """`items` cut into consecutive runs of `sizes` (an array)."""
    ends = np.cumsum(sizes).tolist()
    return [items[end - size:end] for end, size in zip(ends, sizes.tolist())]


class WriteShard(beam.DoFn):
    """(shard, its pieces' tokenized documents) → the shard, packed in document order (the pieces' order) and
    written atomically, and its counts saved beside it; yields (name, counts)."""

    def __init__(self, vocab_file, settings, output_dir):
        self.vocab_file = vocab_file
        self.settings = settings
        self.output_dir = output_dir
        self.special_ids = self.unknown_id = None

    def setup(self):
        vocabulary = load_vocabulary(self.vocab_file)
        self.special_ids = vocabulary.index("[CLS]"), vocabulary.index("[SEP]")
        self.unknown_id = vocabulary.index("[UNK]")

    def process(self, shard_and_pieces):
        shard, pieces = shard_and_pieces
        packer = shard_packer(self.settings, shard, *self.special_ids)
        name = shard_name(shard, self.settings["num_shards"])
        unknown = collections.Counter()
        with ShardWriter(os.path.join(self.output_dir, name), self.unknown_id) as writer:
            for _, encoded, piece_unknown in sorted((piece for piece in pieces if piece is not None),
                                                    key=lambda piece: piece[0]):
                unknown.update(piece_unknown)
                for document, marks in decode_documents(encoded):
                    for example in packer.pack(document, marks):
                        writer.write(example)
        counts = shard_counts(writer, packer, unknown)
        write_json(os.path.join(self.output_dir, COUNTS_DIR, f"{name}.json"), counts)
        yield name, counts


def _saved_counts(output_dir, num_shards):
    """The counts a previous (failed) run saved for shards that are complete."""
    folder = os.path.join(output_dir, COUNTS_DIR)
    names = {shard_name(i, num_shards) for i in range(num_shards)}
    saved = {}
    if os.path.isdir(folder):
        for entry in os.listdir(folder):
            name = entry.removesuffix(".json")
            if name in names and os.path.exists(os.path.join(output_dir, name)):
                saved[name] = read_json(os.path.join(folder, entry), expect=dict)
    return saved


def build_pretraining_shards_on_beam(input_files, vocab_file, output_dir, *, beam_options=None, **options):
    """`pretraining_data.build_pretraining_shards` (the `options` of `build_settings`, the same shards and manifest)
    on Beam, with Beam's pipeline flags `beam_options` (the DirectRunner unless `--runner` is given); returns the
    manifest's shard counts. A failed step raises `PipelineFailed` naming its error; complete shards are kept."""
    settings = build_settings(input_files, vocab_file, **options)
    num_shards, tfds_data_dir = settings["num_shards"], options.get("tfds_data_dir")
    done, wanted, duplicates = plan_build(output_dir, settings)
    counts_dir = os.path.join(output_dir, COUNTS_DIR)
    if _read_value(output_dir, "settings") != settings:  # counts of another build's shards: not ours to keep
        shutil.rmtree(counts_dir, ignore_errors=True)
    os.makedirs(counts_dir, exist_ok=True)
    write_json(os.path.join(counts_dir, "_settings.json"), settings)
    done.update(_saved_counts(output_dir, num_shards))
    wanted = [i for i in wanted if shard_name(i, num_shards) not in done]
    if wanted:
        run_pipeline(lambda pipeline: _shard_pipeline(pipeline, settings, vocab_file, output_dir, wanted,
                                                      tfds_data_dir),
                     beam_options, "pre-training shards")
        done.update(_saved_counts(output_dir, num_shards))
        if _read_value(output_dir, "warning"):
            print(_read_value(output_dir, "warning"))
    counted = _read_value(output_dir, "duplicates")
    duplicates = counted if counted is not None else duplicates
    if sum(counts["documents"] for counts in done.values()) == 0:
        for name in done:
            os.remove(os.path.join(output_dir, name))
        shutil.rmtree(counts_dir, ignore_errors=True)
        raise ValueError(f"the input files hold no text: {settings['input_files'][:5]}")
    write_manifest(output_dir, settings, done, vocab_file, duplicates)
    shutil.rmtree(counts_dir, ignore_errors=True)
    return done


def _read_value(output_dir, name):
    """A value the pipeline (or the launcher) saved in the counts folder, or None."""
    path = os.path.join(output_dir, COUNTS_DIR, f"_{name}.json")
    return read_json(path) if os.path.exists(path) else None


def _save_value(output_dir, name):
    """A function saving its argument as `name` in the counts folder (atomically)."""
    return lambda value: write_json(os.path.join(output_dir, COUNTS_DIR, f"_{name}.json"), value)


def corpus_pieces(settings):
    """The pieces the pipeline reads (`corpus_readers.part_pieces`), numbered in corpus order: (index, part,
    piece or None)."""
    pieces = [(part, piece) for part in settings["input_files"]
              for piece in part_pieces(part, settings["blanks_separate_docs"])]
    return [(index, part, piece) for index, (part, piece) in enumerate(pieces)]


def _shard_pipeline(pipeline, settings, vocab_file, output_dir, wanted, tfds_data_dir):
    pieces = corpus_pieces(settings)
    spread = (pipeline
              | "Pieces" >> beam.Create(pieces)
              | "SpreadPieces" >> beam.Reshuffle())  # (the pieces in order otherwise stay with one worker)
    counted = spread | "Count" >> beam.ParDo(CountPiece(settings, tfds_data_dir)).with_outputs(
        "fingerprints", main="counts")
    if settings["dedupe"]:
        dropped = (counted.fingerprints
                   | "Copies" >> beam.GroupByKey()
                   | "LaterCopies" >> beam.FlatMap(_later_copies)
                   | "ByPiece" >> beam.GroupByKey()
                   | "AsLists" >> beam.MapTuple(lambda index, positions: (index, sorted(positions))))
        (dropped
         | "NumberDropped" >> beam.MapTuple(lambda _, positions: len(positions))
         | "Duplicates" >> beam.CombineGlobally(sum)
         | "SaveDuplicates" >> beam.Map(_save_value(output_dir, "duplicates")))
    else:
        dropped = pipeline | "NoneDropped" >> beam.Create([])
    all_counts = counted.counts | "AllCounts" >> beam.combiners.ToList()
    (all_counts
     | "Warning" >> beam.FlatMap(_undecodable_warning, pieces)
     | "SaveWarning" >> beam.Map(_save_value(output_dir, "warning")))
    first = all_counts | "FirstDocuments" >> beam.Map(_first_documents, beam.pvalue.AsDict(dropped))
    tokenized = spread | "Tokenize" >> beam.ParDo(TokenizePiece(vocab_file, settings, tfds_data_dir, wanted),
                                                  beam.pvalue.AsSingleton(first), beam.pvalue.AsDict(dropped))
    # Every wanted shard is written, even one that receives no document (as the local builder does).
    every_shard = pipeline | "WantedShards" >> beam.Create([(shard, None) for shard in wanted])
    ((tokenized, every_shard)
     | "Merge" >> beam.Flatten()
     | "ByShard" >> beam.GroupByKey()
     | "Write" >> beam.ParDo(WriteShard(vocab_file, settings, output_dir)))


def _undecodable_warning(counts, pieces):
    """The local builder's one warning line from every piece's counts (a line numbered in its file)."""
    bad = sorted((index, first) for index, (_, _, undecodable, first) in counts if undecodable)
    if not bad:
        return []
    index, (path, line) = bad[0]
    lines_read = dict((index, lines) for index, (_, lines, _, _) in counts)
    stats = CorpusStats()
    stats.undecodable_lines = sum(undecodable for _, (_, _, undecodable, _) in counts)
    stats.first_undecodable = path, line + sum(lines_read[i] for i, part, _ in pieces[:index] if part == path)
    return [stats.warning()]
