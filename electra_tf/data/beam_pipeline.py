"""Corpus → pre-training TFRecord shards on Apache Beam: the local builder's output, on any Beam runner.

    read parts (one worker a part) → number documents → [de-duplicate] → keep the wanted shards'
    → tokenize (the tokenizer loaded once per worker, in `DoFn.setup`) → group by shard
    → pack in document order (`shard_packer`) → write each shard atomically → manifest.json

Document `j` (counted over the parts in order, after de-duplication) goes to
shard `shard_of(j)`, as in `pretraining_data`; each shard's documents are
sorted by `j` before packing, so the shards are byte-identical to the local
builder's for the same corpus and settings, whatever the runner or the number
of workers. Reading, numbering, packing and writing are the local builder's
own functions (`read_part`, `document_hash`, `shard_packer`, `ShardWriter`,
`plan_build`, `write_manifest`); only the plumbing is here.

A shard's counts are saved beside it (`<output_dir>/.counts/<shard>.json`,
which no shard glob matches) as soon as it is renamed into place, so a run
that fails keeps its complete shards and the same command finishes the rest;
the manifest, written once every shard is there, folds them in.

Runners: the in-process `DirectRunner` (the default; `--direct_num_workers=2
--direct_running_mode=multi_processing` for processes), or Dataflow / Flink /
Spark through `beam_options` (see docs/data_at_scale.md). A shard is packed by
one worker: choose `num_shards` so that a shard's tokens fit in its memory.

Example:
>>> build_pretraining_shards_on_beam(  # doctest: +SKIP
...     ["corpus/a.txt", "corpus/b.jsonl"], "vocab.txt", "data/", num_shards=64,
...     beam_options=["--direct_num_workers=2", "--direct_running_mode=multi_processing"])
"""

import os
import shutil

import apache_beam as beam
import numpy as np
from apache_beam.options.pipeline_options import PipelineOptions

from electra_tf.atomic import read_json, write_json
from electra_tf.data.corpus_readers import CorpusStats, document_hash, read_part
from electra_tf.data.packing import split_threshold
from electra_tf.data.pretraining_data import (
    batch_tokenizer,
    build_settings,
    plan_build,
    shard_name,
    shard_of,
    shard_packer,
    tokenized_documents,
    write_manifest,
)
from electra_tf.data.tfrecord import ShardWriter
from electra_tf.tokenization import ElectraTokenizer
from electra_tf.vocabulary import load_vocabulary

COUNTS_DIR = ".counts"


class PipelineFailed(ValueError):
    """The Beam pipeline stopped on an error; its complete shards are kept."""


def beam_pipeline_options(beam_options):
    """`PipelineOptions` from a list of flags or one string of them; the DirectRunner unless one is named, and
    the workers' logs at WARNING unless a level is given (the DirectRunner's worker processes print every step).
    """
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
    """The first line of the innermost error's message, without Beam's "[while running ...]" notes."""
    while error.__cause__ is not None or error.__context__ is not None:
        error = error.__cause__ or error.__context__
    message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return message.split(" [while running")[0]


class ReadPart(beam.DoFn):
    """A part → ((part index, document index in the part), document); counts bad UTF-8 lines."""

    def __init__(self, settings, tfds_data_dir):
        self.settings = settings
        self.tfds_data_dir = tfds_data_dir

    def process(self, indexed_part):
        index, part = indexed_part
        stats = CorpusStats()
        for number, document in enumerate(read_part(part, self.settings["blanks_separate_docs"],
                                                    self.settings["text_field"], self.tfds_data_dir, stats)):
            yield (index, number), document
        if stats.undecodable_lines:
            yield beam.pvalue.TaggedOutput("undecodable", (index, stats.undecodable_lines,
                                                           stats.first_undecodable))


def _first_copies(documents):
    """Drops exact duplicates (`document_hash`), keeping each document's first copy (the lowest position)."""
    return (documents
            | "Fingerprint" >> beam.Map(lambda item: (document_hash(item[1]), item))
            | "FirstCopy" >> beam.CombinePerKey(lambda items: min(items, key=lambda item: item[0]))
            | "Unkey" >> beam.Values())


def _renumbered(documents):
    """((part, position), document) → ((part, rank among the part's kept documents), document)."""
    def ranks(part_and_positions):
        part, positions = part_and_positions
        return [((part, position), rank) for rank, position in enumerate(sorted(positions))]

    rank_of = (documents
               | "Positions" >> beam.Map(lambda item: item[0])
               | "ByPart" >> beam.GroupByKey()
               | "Rank" >> beam.FlatMap(ranks))
    return ({"document": documents, "rank": rank_of}
            | "JoinRanks" >> beam.CoGroupByKey()
            | "Renumber" >> beam.Map(lambda item: ((item[0][0], item[1]["rank"][0]), item[1]["document"][0])))


def _global_index(item, offsets):
    (part, position), document = item
    return offsets[part] + position, document


class Tokenize(beam.DoFn):
    """Batches of (j, document) → (shard, (j, ids)); the tokenizer is built once per worker."""

    def __init__(self, vocab_file, settings):
        self.vocab_file = vocab_file
        self.settings = settings
        self.tokenize = None

    def setup(self):
        self.tokenize = batch_tokenizer(ElectraTokenizer(self.vocab_file, lowercase=self.settings["lowercase"],
                                                         strip_accents=self.settings["strip_accents"]))

    def process(self, batch):
        split_longer_than = split_threshold(self.settings["max_seq_length"], self.settings["long_lines"])
        for j, lines in tokenized_documents(batch, self.tokenize, split_longer_than):
            # Sent on as three int32 arrays (all ids, sentence lengths, sentences a line): a quarter of lists
            # of Python ints in the shuffle and in the memory of the worker that packs the shard.
            sentences = [sentence for line in lines for sentence in line]
            ids = np.fromiter((i for sentence in sentences for i in sentence), np.int32)
            yield shard_of(j, self.settings["num_shards"]), (j, ids, np.array([len(s) for s in sentences], np.int32),
                                                             np.array([len(line) for line in lines], np.int32))


def _lines(ids, lengths, line_sizes):
    """A document sent on by `Tokenize`, as `DocumentPacker` takes it: lines of sentences of ids."""
    ends = np.cumsum(lengths)
    sentences = [ids[end - length:end].tolist() for end, length in zip(ends, lengths)]
    starts = np.cumsum(line_sizes) - line_sizes
    return [sentences[start:start + size] for start, size in zip(starts, line_sizes)]


class WriteShard(beam.DoFn):
    """(shard, its tokenized documents) → the shard, packed in document order and written atomically, and
    its counts saved beside it; yields (name, counts)."""

    def __init__(self, vocab_file, settings, output_dir):
        self.vocab_file = vocab_file
        self.settings = settings
        self.output_dir = output_dir
        self.special_ids = None

    def setup(self):
        vocabulary = load_vocabulary(self.vocab_file)
        self.special_ids = vocabulary.index("[CLS]"), vocabulary.index("[SEP]")

    def process(self, shard_and_documents):
        shard, documents = shard_and_documents
        packer = shard_packer(self.settings, shard, *self.special_ids)
        name = shard_name(shard, self.settings["num_shards"])
        with ShardWriter(os.path.join(self.output_dir, name)) as writer:
            for _, *arrays in sorted((document for document in documents if document is not None),
                                     key=lambda document: document[0]):
                for example in packer.pack(_lines(*arrays)):
                    writer.write(example)
        counts = {"examples": writer.count, **packer.counts.as_dict()}
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


def build_pretraining_shards_on_beam(input_files, vocab_file, output_dir, *, max_seq_length=128, num_shards=1,
                                     seed=0, blanks_separate_docs=True, lowercase=True, strip_accents=None,
                                     long_lines="split", text_field="text", tfds_data_dir=None, dedupe=False,
                                     beam_options=None):
    """`pretraining_data.build_pretraining_shards` (same arguments, same shards and manifest) on Beam.

    Args:
        beam_options: Beam pipeline flags (a list, or one string), e.g.
            `["--direct_num_workers=2", "--direct_running_mode=multi_processing"]`; the DirectRunner unless
            `--runner` is given.

    Returns:
        The manifest's shard counts. A failed step raises `PipelineFailed` (a ValueError) naming its error;
        the shards complete by then are kept.
    """
    settings = build_settings(input_files, vocab_file, max_seq_length=max_seq_length, num_shards=num_shards,
                              seed=seed, blanks_separate_docs=blanks_separate_docs, lowercase=lowercase,
                              strip_accents=strip_accents, long_lines=long_lines, text_field=text_field,
                              dedupe=dedupe)
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


def _shard_pipeline(pipeline, settings, vocab_file, output_dir, wanted, tfds_data_dir):
    num_shards = settings["num_shards"]
    read = (pipeline
            | "Parts" >> beam.Create(list(enumerate(settings["input_files"])))
            | "SpreadParts" >> beam.Reshuffle()
            | "Read" >> beam.ParDo(ReadPart(settings, tfds_data_dir)).with_outputs("undecodable",
                                                                                   main="documents"))
    documents = read.documents
    (read.undecodable
     | "AllUndecodable" >> beam.combiners.ToList()
     | "Warning" >> beam.FlatMap(_undecodable_warning)
     | "SaveWarning" >> beam.Map(_save_value(output_dir, "warning")))
    if settings["dedupe"]:
        kept = _first_copies(documents)
        total = documents | "CountRead" >> beam.combiners.Count.Globally()
        unique = kept | "CountKept" >> beam.combiners.Count.Globally()
        (total
         | "Duplicates" >> beam.Map(lambda n, kept_n: n - kept_n, beam.pvalue.AsSingleton(unique))
         | "SaveDuplicates" >> beam.Map(_save_value(output_dir, "duplicates")))
        documents = _renumbered(kept)
    per_part = (documents
                | "PartOf" >> beam.Map(lambda item: item[0][0])
                | "CountPerPart" >> beam.combiners.Count.PerElement()
                | "AllCounts" >> beam.combiners.ToList())
    offsets = per_part | "Offsets" >> beam.Map(
        lambda counts: _offsets(dict(counts), len(settings["input_files"])))
    wanted_set = set(wanted)
    tokenized = (documents
                 | "Number" >> beam.Map(_global_index, beam.pvalue.AsSingleton(offsets))
                 | "Wanted" >> beam.Filter(lambda item: shard_of(item[0], num_shards) in wanted_set)
                 | "Spread" >> beam.Reshuffle()  # a part's documents, read by one worker, tokenized by all
                 | "Batch" >> beam.BatchElements(min_batch_size=16, max_batch_size=256)
                 | "Tokenize" >> beam.ParDo(Tokenize(vocab_file, settings)))
    # Every wanted shard is written, even one that receives no document (as the local builder does).
    every_shard = pipeline | "WantedShards" >> beam.Create([(shard, None) for shard in wanted])
    ((tokenized, every_shard)
     | "Merge" >> beam.Flatten()
     | "ByShard" >> beam.GroupByKey()
     | "Write" >> beam.ParDo(WriteShard(vocab_file, settings, output_dir)))


def _undecodable_warning(per_part):
    """The local builder's one warning line from every part's (index, undecodable lines, first)."""
    if not per_part:
        return []
    stats = CorpusStats()
    stats.undecodable_lines = sum(count for _, count, _ in per_part)
    stats.first_undecodable = min(per_part)[2]
    return [stats.warning()]


def _offsets(counts, num_parts):
    offsets, total = {}, 0
    for part in range(num_parts):
        offsets[part] = total
        total += counts.get(part, 0)
    return offsets
