"""Text corpus → pre-training TFRecord shards.

Documents are read from text files (one sentence or one paragraph a line;
with `blanks_separate_docs` a blank line ends a document, otherwise a file is
one document), tokenized in-graph in large batches, and dealt round-robin to
the shards: document `j` goes to shard `j % num_shards`. Each shard packs its
documents with its own `random.Random(seed, shard)` (`DocumentPacker`: by
default no text is dropped, a line longer than an example is split at its
sentence ends; `long_lines="truncate"` is the original's cut), so its content
depends only on the corpus, the seed and the number of shards.

Shards appear atomically (`write_shard`) and a `manifest.json` records the
settings, the vocabulary hash and every shard's counts (documents, examples,
tokens read, written and dropped by reason). Running the same build
again skips complete shards and finishes the others; an output folder holding
shards of other settings is an error.

Example:
>>> stats = build_pretraining_shards(  # doctest: +SKIP
...     ["corpus.txt"], "vocab.txt", "data/", max_seq_length=128, num_shards=4)
"""

import contextlib
import json
import multiprocessing
import os
import random
import time

import tensorflow as tf

from electra_tf.atomic import read_json, write_text
from electra_tf.data.packing import DocumentPacker
from electra_tf.data.sentences import split_sentences
from electra_tf.data.tfrecord import ShardWriter
from electra_tf.tokenization import ElectraTokenizer
from electra_tf.vocabulary import load_vocabulary, vocabulary_hash

MANIFEST = "manifest.json"
_TOKENIZE_BATCH_LINES = 2048


class CorpusStats:
    """Counts kept while reading a corpus (documents, lines, undecodable lines)."""

    def __init__(self):
        self.documents = 0
        self.lines = 0
        self.undecodable_lines = 0
        self.first_undecodable = None


def read_documents(input_files, blanks_separate_docs=True, stats=None):
    """Yields documents (lists of non-empty lines) from text files.

    Bytes that are not UTF-8 are replaced by U+FFFD; `stats` counts the lines
    concerned and remembers the first (file, line number).
    """
    stats = stats or CorpusStats()
    for path in input_files:
        document = []
        with open(path, "rb") as f:
            for number, raw in enumerate(f, 1):
                try:
                    line = raw.decode("utf-8").strip()
                except UnicodeDecodeError:
                    line = raw.decode("utf-8", errors="replace").strip()
                    stats.undecodable_lines += 1
                    stats.first_undecodable = stats.first_undecodable or (path, number)
                if line:
                    document.append(line)
                    stats.lines += 1
                elif blanks_separate_docs and document:
                    stats.documents += 1
                    yield document
                    document = []
        if document:
            stats.documents += 1
            yield document


def shard_name(index, num_shards):
    return f"pretrain_data.tfrecord-{index:05d}-of-{num_shards:05d}"


def _check_manifest(output_dir, settings):
    """Reads an existing manifest; an error if it was written with other settings."""
    path = os.path.join(output_dir, MANIFEST)
    if not os.path.exists(path):
        # No manifest: a build killed before writing it (its shards have this build's names and are all
        # rewritten), or shards from elsewhere, which a glob over the folder would mix with these.
        names = {shard_name(i, settings["num_shards"]) for i in range(settings["num_shards"])}
        foreign = sorted(name for name in os.listdir(output_dir)
                         if name.startswith("pretrain_data.tfrecord-") and ".tmp-" not in name and name not in names)
        if foreign:
            raise ValueError(f"{output_dir} holds shards of another build and no {MANIFEST} (e.g. {foreign[:3]}); "
                             "use an empty output folder")
        return {}
    try:
        manifest = read_manifest(output_dir)
    except ValueError as e:
        raise ValueError(f"{e}; use an empty output folder") from None
    if manifest.get("settings") != settings:
        changed = sorted(k for k in set(settings) | set(manifest.get("settings", {}))
                         if settings.get(k) != manifest.get("settings", {}).get(k))
        raise ValueError(f"{output_dir} holds shards built with other settings (differing: {changed}); "
                         "use an empty output folder, or the same settings to resume")
    return manifest.get("shards", {})


def read_manifest(folder):
    """The `manifest.json` a shard build wrote in `folder` (settings, the vocabulary's size and hash,
    counts), or None when there is none; a ValueError naming it when it is damaged."""
    path = os.path.join(folder, MANIFEST)
    if not os.path.exists(path):
        return None
    manifest = read_json(path)
    if not (isinstance(manifest, dict) and isinstance(manifest.get("shards", {}), dict)
            and isinstance(manifest.get("settings", {}), dict)):
        raise ValueError(f"{path}: not a manifest this tool wrote")
    return manifest


def packing_totals(shards):
    """The manifest's `totals` of `{shard: counts}`: documents, examples, tokens (read), tokens written and
    tokens dropped by reason (shards of older builds, which did not count them, are left out of those two)."""
    totals = {key: sum(s[key] for s in shards.values()) for key in ("examples", "tokens", "documents")}
    totals["tokens_written"] = sum(s.get("tokens_written", 0) for s in shards.values())
    dropped = {}
    for counts in shards.values():
        for reason, n in counts.get("tokens_dropped", {}).items():
            dropped[reason] = dropped.get(reason, 0) + n
    totals["tokens_dropped"] = dict(sorted(dropped.items()))
    return totals


def _write_manifest(output_dir, settings, shards, vocab_file):
    path = os.path.join(output_dir, MANIFEST)
    totals = packing_totals(shards)
    write_text(path, json.dumps({"settings": settings, "totals": totals, "shards": shards,
                                 "vocabulary_size": len(load_vocabulary(vocab_file))}, indent=2, sort_keys=True))


def tokenized_documents(documents, tokenizer, split_longer_than=None):
    """Yields `(index, document)` for `(index, document as lines of text)`, a document as `DocumentPacker`
    takes it: lines, each a list of sentences, each a list of ids. Many lines are tokenized per call.

    A line of more than `split_longer_than` characters is tokenized as its sentences (`split_sentences`;
    the same ids as the whole line), so the packer can split it where it does not fit; a shorter line
    cannot hold more tokens than that (each token covers a character at least) and stays one sentence.
    """
    tokenize = tf.function(tokenizer, input_signature=[tf.TensorSpec([None], tf.string)])
    pending, texts = [], []

    def flush():
        ids = iter(tokenize(tf.constant(texts)).to_list() if texts else [])
        for index, sentence_counts in pending:
            yield index, [[next(ids) for _ in range(count)] for count in sentence_counts]

    for index, document in documents:
        sentence_counts = []
        for line in document:
            sentences = (split_sentences(line) if split_longer_than is not None and len(line) > split_longer_than
                         else [line])
            sentence_counts.append(len(sentences))
            texts.extend(sentences)
        pending.append((index, sentence_counts))
        if len(texts) >= _TOKENIZE_BATCH_LINES:
            yield from flush()
            pending, texts = [], []
    yield from flush()


def build_pretraining_shards(input_files, vocab_file, output_dir, *, max_seq_length=128, num_shards=1,
                             seed=0, blanks_separate_docs=True, lowercase=True, strip_accents=None,
                             long_lines="split", num_processes=1, progress=None):
    """Builds (or finishes) the shards in `output_dir`; returns the manifest's shard counts.

    Args:
        long_lines: "split" (default: no text dropped) or "truncate" (the original's rules), as
            `DocumentPacker`.
        num_processes: worker processes; process `p` writes shards
            `p, p + num_processes, ...`. The output does not depend on it.
        progress: called as `progress(documents, tokens, seconds)` now and
            then, with the documents and tokens packed so far.
    """
    if not input_files:
        raise ValueError("no input files")
    if num_shards < 1 or num_processes < 1:
        raise ValueError(f"need num_shards >= 1 and num_processes >= 1, got {num_shards}, {num_processes}")
    if os.path.exists(output_dir) and not os.path.isdir(output_dir):
        raise ValueError(f"{output_dir}: a file, not a folder for the shards")
    os.makedirs(output_dir, exist_ok=True)
    strip_accents = lowercase if strip_accents is None else strip_accents
    settings = {"max_seq_length": max_seq_length, "num_shards": num_shards, "seed": seed,
                "blanks_separate_docs": blanks_separate_docs, "lowercase": lowercase,
                "strip_accents": strip_accents, "long_lines": long_lines, "vocab_sha256": vocabulary_hash(vocab_file),
                "input_files": [os.path.abspath(f) for f in input_files]}
    done = _check_manifest(output_dir, settings)
    wanted = [i for i in range(num_shards)
              if not (shard_name(i, num_shards) in done
                      and os.path.exists(os.path.join(output_dir, shard_name(i, num_shards))))]
    _remove_stale_temporaries(output_dir, [shard_name(i, num_shards) for i in wanted])
    groups = [wanted[p::num_processes] for p in range(num_processes) if wanted[p::num_processes]]
    if len(groups) == 1:
        done.update(_build(input_files, vocab_file, output_dir, settings, groups[0], progress))
    elif groups:
        done.update(_build_in_processes(input_files, vocab_file, output_dir, settings, groups, progress))
    _write_manifest(output_dir, settings, done, vocab_file)
    return done


def _remove_stale_temporaries(output_dir, names):
    """Temporary files left by a killed build of the shards about to be written."""
    for name in os.listdir(output_dir):
        if any(name.startswith(f"{shard}.tmp-") for shard in names):
            os.remove(os.path.join(output_dir, name))


def _build_in_processes(input_files, vocab_file, output_dir, settings, groups, progress):
    # "spawn": TensorFlow is not fork-safe.
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager, context.Pool(len(groups)) as pool:
        queue = manager.Queue()
        results = [pool.apply_async(_build_reporting, (input_files, vocab_file, output_dir, settings, group,
                                                       queue, worker))
                   for worker, group in enumerate(groups)]
        latest = {}
        start = time.time()
        while not all(result.ready() for result in results):
            time.sleep(0.2)
            while not queue.empty():
                worker, documents, tokens = queue.get()
                latest[worker] = (documents, tokens)
            if progress is not None and latest:
                progress(sum(d for d, _ in latest.values()), sum(t for _, t in latest.values()),
                         time.time() - start)
        written = {}
        for result in results:
            written.update(result.get())  # re-raises a worker's error
    return written


def _build_reporting(input_files, vocab_file, output_dir, settings, shards, queue, worker):
    return _build(input_files, vocab_file, output_dir, settings, shards,
                  lambda documents, tokens, _: queue.put((worker, documents, tokens)))


def _build(input_files, vocab_file, output_dir, settings, wanted, progress):
    tokenizer = ElectraTokenizer(vocab_file, lowercase=settings["lowercase"],
                                 strip_accents=settings["strip_accents"])
    num_shards = settings["num_shards"]
    packers = {i: DocumentPacker(settings["max_seq_length"], tokenizer.cls_token_id, tokenizer.sep_token_id,
                                 random.Random(settings["seed"] * 1_000_003 + i), long_lines=settings["long_lines"])
               for i in wanted}
    counts = {i: {"documents": 0} for i in wanted}
    stats = CorpusStats()
    documents = ((j, doc) for j, doc in enumerate(read_documents(input_files, settings["blanks_separate_docs"],
                                                                 stats))
                 if j % num_shards in packers)
    start, packed = time.time(), 0
    with contextlib.ExitStack() as stack:
        writers = {i: stack.enter_context(ShardWriter(os.path.join(output_dir, shard_name(i, num_shards))))
                   for i in wanted}
        for j, document in tokenized_documents(documents, tokenizer, packers[wanted[0]].split_longer_than):
            shard = j % num_shards
            for example in packers[shard].pack(document):
                writers[shard].write(example)
            counts[shard]["documents"] += 1
            packed += 1
            if progress is not None and packed % 500 == 0:
                progress(packed, sum(p.counts.read for p in packers.values()), time.time() - start)
        if stats.documents == 0:
            raise ValueError(f"the input files hold no text: {input_files[:5]}")
    if stats.undecodable_lines:
        path, line = stats.first_undecodable
        print(f"warning: {stats.undecodable_lines} line(s) were not valid UTF-8; bad bytes were replaced "
              f"by U+FFFD (first: {path}, line {line})")
    if progress is not None:
        progress(packed, sum(p.counts.read for p in packers.values()), time.time() - start)
    return {shard_name(i, num_shards): {"examples": writers[i].count, **counts[i], "tokens": packers[i].counts.read,
                                        "tokens_written": packers[i].counts.written,
                                        "tokens_dropped": packers[i].counts.dropped}
            for i in wanted}
