"""Text corpus → pre-training TFRecord shards (docs/pretraining.md): documents read from the corpus parts,
optionally de-duplicated, tokenized in-graph in large batches and dealt round-robin to the shards, each packed
by its own `shard_packer`, so a shard depends only on the corpus, the seed and the number of shards; a
`manifest.json` records the settings, the vocabulary hash and every shard's counts.

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

import numpy as np
import tensorflow as tf

from electra_tf.util.atomic import read_json, write_text
from electra_tf.data.corpus_readers import CorpusStats, check_parts, document_hash, read_part
from electra_tf.data.packing import LONG_LINES, DocumentPacker
from electra_tf.data.sentences import split_sentences
from electra_tf.data.tfrecord import ShardWriter
from electra_tf.data.word_segmentation import (INSTALL_HINT, WordCutter, available_cores, cjk_share, has_cjk,
                                               load_segmenter)
from electra_tf.text.tokenizer import WordPieceTokenizer
from electra_tf.text.vocabulary import load_vocabulary, vocabulary_hash
from electra_tf.text.vocabulary_learning import unknown_words

MANIFEST = "manifest.json"
_TOKENIZE_BATCH_LINES = 2048
# Languages written without spaces between words or sentences, whose text packs whole sentences by default.
CJK_LANGUAGES = ("zh", "ja", "ko")
# A corpus whose first DETECTION_CHARS characters are at least CJK_SHARE CJK ideographs is CJK text.
DETECTION_CHARS, CJK_SHARE = 100_000, 0.3
# The unknown words a shard's counts keep (its most frequent).
UNKNOWN_WORDS_KEPT = 50


def read_documents(parts, blanks_separate_docs=True, stats=None, *, text_field="text", tfds_data_dir=None,
                   dedupe=False):
    """Yields the documents (lists of non-empty lines) of every part in order; with `dedupe`, only the first copy
    of a document (by `document_hash`), the others counted in `stats.duplicate_documents`."""
    stats = stats if stats is not None else CorpusStats()
    seen = set()
    for part in parts:
        for document in read_part(part, blanks_separate_docs, text_field, tfds_data_dir, stats):
            if dedupe:
                fingerprint = document_hash(document)
                if fingerprint in seen:
                    stats.duplicate_documents += 1
                    continue
                seen.add(fingerprint)
            yield document


def shard_of(document_index, num_shards):
    """The shard document `document_index` (counted after de-duplication) goes to."""
    return document_index % num_shards


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
    """The totals of `{shard: counts}` (a count by reason summed reason by reason).

    >>> packing_totals({"a": {"tokens": 9, "tokens_dropped": {"x": 2}}, "b": {"tokens": 1, "tokens_dropped": {}}})
    {'tokens': 10, 'tokens_dropped': {'x': 2}}
    """
    totals = {}
    for counts in shards.values():
        for key, value in counts.items():
            if isinstance(value, dict):
                by_reason = totals.setdefault(key, {})
                for reason, n in value.items():
                    by_reason[reason] = by_reason.get(reason, 0) + n
            else:
                totals[key] = totals.get(key, 0) + value
    return {key: dict(sorted(value.items())) if isinstance(value, dict) else value
            for key, value in sorted(totals.items())}


def mid_sentence_rate(shards):
    """The share of the examples of `shards` (`{shard: counts}`) that end inside a sentence; None when a shard's
    counts lack it.

    >>> mid_sentence_rate({"a": {"examples": 8, "examples_ending_mid_sentence": 1},
    ...                    "b": {"examples": 2, "examples_ending_mid_sentence": 0}})
    0.1
    """
    return _share(shards, "examples_ending_mid_sentence", "examples")


def unknown_token_rate(shards):
    """The share of `[UNK]` among the tokens written into `shards` (`{shard: counts}`); None when a shard's counts
    lack it.

    >>> unknown_token_rate({"a": {"tokens_written": 90, "tokens_unknown": 3}, "b": {"tokens_written": 10,
    ...                                                                             "tokens_unknown": 0}})
    0.03
    """
    return _share(shards, "tokens_unknown", "tokens_written")


def _share(shards, part, whole):
    if any(part not in counts for counts in shards.values()):
        return None
    total = sum(counts[whole] for counts in shards.values())
    return sum(counts[part] for counts in shards.values()) / total if total else 0.0


def shard_words(files):
    """The word counts (`whole_words` of `packing_totals`) of the shard `files`, summed over the manifests of their
    folders; None when no manifest counts words (shards built without `whole_word_masking`)."""
    manifests = [read_manifest(folder) for folder in sorted({os.path.dirname(path) for path in files})]
    counts = [manifest["totals"]["whole_words"] for manifest in manifests
              if manifest and "whole_words" in manifest.get("totals", {})]
    return packing_totals(dict(enumerate(counts))) if counts else None


def masking_unit(words=None, whole_word_masking=True):
    """One line: the unit that masking masks and, given the shards' word counts, how many words hold several tokens.

    >>> masking_unit({"words": 100, "words_of_several_tokens": 40, "tokens_in_words_of_several_tokens": 90})
    'masking unit: the word (jieba for CJK text); 40.0% of 100 words hold several tokens (60.0% of 150 tokens)'
    >>> masking_unit()
    'masking unit: the word (a token and its ## pieces; no jieba words in the data)'
    >>> masking_unit(whole_word_masking=False)
    'masking unit: the token (--whole_word_masking masks whole words)'
    """
    if not whole_word_masking:
        return "masking unit: the token (--whole_word_masking masks whole words)"
    if not words:
        return "masking unit: the word (a token and its ## pieces; no jieba words in the data)"
    count, several, inside = (words.get(key, 0) for key in (
        "words", "words_of_several_tokens", "tokens_in_words_of_several_tokens"))
    tokens = count - several + inside
    return (f"masking unit: the word (jieba for CJK text); {several / max(count, 1):.1%} of {count:,} words hold "
            f"several tokens ({inside / max(tokens, 1):.1%} of {tokens:,} tokens)")


def write_manifest(output_dir, settings, shards, vocab_file, duplicate_documents=None):
    """Writes `manifest.json`: the settings, the vocabulary's size, every shard's counts and their totals
    (`packing_totals`; and, with `dedupe`, the duplicate documents dropped), the `unknown_token_rate`."""
    path = os.path.join(output_dir, MANIFEST)
    totals = packing_totals(shards)
    if settings.get("dedupe"):
        totals["duplicate_documents"] = duplicate_documents or 0
    write_text(path, json.dumps({"settings": settings, "totals": totals, "shards": shards,
                                 "unknown_token_rate": unknown_token_rate(shards),
                                 "mid_sentence_rate": mid_sentence_rate(shards),
                                 "vocabulary_size": len(load_vocabulary(vocab_file))}, indent=2, sort_keys=True))


def batch_tokenizer(tokenizer):
    """`tokenizer` as a traced function from a `[lines]` string tensor to ragged ids (traced once)."""
    return tf.function(tokenizer, input_signature=[tf.TensorSpec([None], tf.string)])


def tokenized_documents(documents, tokenize, split_longer_than=None):
    """Yields `(index, document)` for `(index, document as lines of text)`, a document as `DocumentPacker` takes it
    (lines of sentences of ids), many lines tokenized per call of `tokenize`."""
    for index, document, _ in marked_documents(documents, tokenize, split_longer_than):
        yield index, document


def marked_documents(documents, tokenize, split_longer_than=None, cutter=None):
    """`tokenized_documents` with each document's word marks: yields `(index, document, marks)`, `marks` shaped
    as the document (1 where a token continues the previous token's word, by the `cutter`'s words, a
    `word_segmentation.WordCutter`), None without `cutter`."""
    for pending, ids, marks in tokenized_batches(documents, tokenize, split_longer_than, cutter):
        lengths = ids.row_lengths().numpy().tolist() if ids is not None else []
        ids = iter(ids.to_list() if ids is not None else [])
        ends = iter(np.cumsum(lengths).tolist())
        for index, sentence_counts in pending:
            document = [[next(ids) for _ in range(count)] for count in sentence_counts]
            if marks is None:
                yield index, document, None
            else:
                yield index, document, [[marks[end - len(sentence):end].tolist()
                                         for sentence, end in zip(line, ends)] for line in document]


def sentence_batches(documents, split_longer_than=None):
    """Yields `(documents' (index, sentences a line), their sentences)` a batch of about `_TOKENIZE_BATCH_LINES`
    sentences; a line of more than `split_longer_than` characters is cut into its sentences (the same ids)."""
    pending, sentences = [], []
    for index, document in documents:
        sentence_counts = []
        for line in document:
            parts = split_sentences(line) if split_longer_than is not None and len(line) > split_longer_than else [line]
            sentence_counts.append(len(parts))
            sentences.extend(parts)
        pending.append((index, sentence_counts))
        if len(sentences) >= _TOKENIZE_BATCH_LINES:
            yield pending, sentences
            pending, sentences = [], []
    if pending:
        yield pending, sentences


def tokenized_batches(documents, tokenize, split_longer_than=None, cutter=None):
    """Yields `(documents' (index, sentences a line), ragged ids of their sentences or None, word marks)` for each
    of the `sentence_batches`; with a `cutter`, CJK text is tokenized as its `word_runs` (the same ids) and the
    word marks are an int8 array beside the ids' flat values (else None)."""
    batches = sentence_batches(documents, split_longer_than)
    if cutter is None:
        for pending, sentences in batches:
            yield pending, tokenize(tf.constant(sentences)) if sentences else None, None
        return
    for pending, runs in cutter.runs_of_batches(batches):
        yield pending, *(_segmented_ids(runs, tokenize) if runs else (None, None))


def _segmented_ids(runs, tokenize):
    """The ragged ids of a batch's sentences and their word marks, from each sentence's `word_runs`."""
    ids = tokenize(tf.constant([run for sentence_runs in runs for run, _ in sentence_runs]))
    run_lengths = iter(ids.row_lengths().numpy().tolist())
    marks = []
    for sentence_runs in runs:
        for _, run_marks in sentence_runs:
            length = next(run_lengths)
            # A run of ideographs is one token per character (BERT splits every ideograph off), so it takes its
            # characters' marks; were a tokenizer to differ, its tokens would count as words of their own.
            marks += run_marks if run_marks is not None and len(run_marks) == length else [0] * length
    ids = tf.RaggedTensor.from_row_lengths(ids, [len(sentence_runs) for sentence_runs in runs]).merge_dims(1, 2)
    return ids, np.array(marks, np.int8)


def word_segmenter(settings, whole_word_masking, tfds_data_dir=None):
    """The name and version of the word segmenter a build with `whole_word_masking` uses, or None (no flag, or no
    segmenter and no CJK text); needed and not installed, a ValueError saying how to install it."""
    if not whole_word_masking:
        return None
    try:
        return load_segmenter()[0]
    except ImportError:
        documents = read_documents(settings["input_files"], settings["blanks_separate_docs"],
                                   text_field=settings["text_field"], tfds_data_dir=tfds_data_dir)
        if any(has_cjk(line) for document in documents for line in document):
            raise ValueError("--whole_word_masking: the corpus holds CJK text, whose words need the jieba word "
                             f"segmenter: {INSTALL_HINT}") from None
        return None


def shard_packer(settings, shard, cls_id, sep_id):
    """The `DocumentPacker` of shard `shard` (its own seed), through which the local builder and the Beam pipeline
    both pack, so a shard's examples depend only on its documents, the settings and its index."""
    return DocumentPacker(settings["max_seq_length"], cls_id, sep_id,
                          random.Random(settings["seed"] * 1_000_003 + shard), long_lines=settings["long_lines"])


def shard_counts(writer, packer, unknown):
    """A shard's counts in the manifest, once its `ShardWriter` and its `shard_packer` are done with it; `unknown`:
    the words of its text that became `[UNK]` (`{word: count}`, `vocabulary_learning.unknown_words`)."""
    return {"examples": writer.count, "tokens_unknown": writer.unknown, **packer.counts.as_dict(),
            "unknown_words": top_unknown_words(unknown)}


def top_unknown_words(counts):
    """The `UNKNOWN_WORDS_KEPT` most frequent of `counts` (`{word: count}`), ties by the word.

    >>> top_unknown_words({"”": 3, "“": 3, "—": 1})
    {'“': 3, '”': 3, '—': 1}
    """
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:UNKNOWN_WORDS_KEPT])


def corpus_is_cjk(parts, blanks_separate_docs=True, text_field="text", tfds_data_dir=None, language=None):
    """Whether the corpus is CJK text: by `language` (a code such as "zh" or "zh-Hant"; CJK_LANGUAGES), else by
    its first `DETECTION_CHARS` characters (at least `CJK_SHARE` CJK ideographs)."""
    if language:
        return language.split("-")[0].split("_")[0].lower() in CJK_LANGUAGES
    lines = (line for document in read_documents(parts, blanks_separate_docs, text_field=text_field,
                                                 tfds_data_dir=tfds_data_dir) for line in document)
    sample, size = [], 0
    try:
        for line in lines:
            sample.append(line)
            size += len(line)
            if size >= DETECTION_CHARS:
                break
    except ValueError:  # a bad part: judged on what came before it; the build reports it as it reads it
        pass
    return cjk_share(sample) >= CJK_SHARE


def build_settings(parts, vocab_file, *, max_seq_length=128, num_shards=1, seed=0, blanks_separate_docs=True,
                   lowercase=True, strip_accents=None, long_lines=None, text_field="text", dedupe=False,
                   whole_word_masking=False, tfds_data_dir=None, language=None):
    """The settings a build records in its manifest (and must match to resume); checks them and the parts (and, for
    `whole_word_masking`, that the `word_segmenter` it needs is installed). `long_lines` is `DocumentPacker`'s
    (None: by `language`, or detected from the text: "sentences" for CJK, else "split")."""
    if num_shards < 1:
        raise ValueError(f"need num_shards >= 1, got {num_shards}")
    if long_lines not in (None, *LONG_LINES):
        raise ValueError(f"long_lines must be one of {list(LONG_LINES)}, got {long_lines!r}")
    files = check_parts(parts, text_field)
    if long_lines is None:
        cjk = corpus_is_cjk(files, blanks_separate_docs, text_field, tfds_data_dir, language)
        long_lines = "sentences" if cjk else "split"  # CJK lines are often whole paragraphs without a space
    settings = {"max_seq_length": max_seq_length, "num_shards": num_shards, "seed": seed,
                "blanks_separate_docs": blanks_separate_docs, "lowercase": lowercase,
                "strip_accents": lowercase if strip_accents is None else strip_accents, "long_lines": long_lines,
                "vocab_sha256": vocabulary_hash(vocab_file), "input_files": files,
                "text_field": text_field, "dedupe": dedupe}
    segmenter = word_segmenter(settings, whole_word_masking, tfds_data_dir)
    return {**settings, "word_segmenter": segmenter} if segmenter else settings


def plan_build(output_dir, settings):
    """Creates `output_dir` if needed; returns (counts of the complete shards, indices of the shards to write,
    the previous manifest's duplicate count). Refuses a folder of another build; removes stale temporaries."""
    if os.path.exists(output_dir) and not os.path.isdir(output_dir):
        raise ValueError(f"{output_dir}: a file, not a folder for the shards")
    os.makedirs(output_dir, exist_ok=True)
    num_shards = settings["num_shards"]
    done = _check_manifest(output_dir, settings)
    wanted = [i for i in range(num_shards)
              if not (shard_name(i, num_shards) in done
                      and os.path.exists(os.path.join(output_dir, shard_name(i, num_shards))))]
    _remove_stale_temporaries(output_dir, [shard_name(i, num_shards) for i in wanted])
    previous = read_manifest(output_dir) or {}
    return done, wanted, previous.get("totals", {}).get("duplicate_documents")


def build_pretraining_shards(input_files, vocab_file, output_dir, *, num_processes=1, segmenter_processes=None,
                             progress=None, **options):
    """Builds (or finishes) the shards in `output_dir` from the corpus parts `input_files` (`corpus_readers`) with
    the `options` of `build_settings`; returns the manifest's shard counts. `num_processes` and
    `segmenter_processes` do not change the output; `progress(documents, tokens, seconds)` is called now and then."""
    if num_processes < 1:
        raise ValueError(f"need num_processes >= 1, got {num_processes}")
    if segmenter_processes is not None and not 1 <= segmenter_processes <= available_cores():
        raise ValueError(f"segmenter_processes must be in 1..{available_cores()} (the cores this process may use; "
                         f"each runs one jieba worker), got {segmenter_processes}")
    settings = build_settings(input_files, vocab_file, **options)
    done, wanted, duplicates = plan_build(output_dir, settings)
    groups = [wanted[p::num_processes] for p in range(num_processes) if wanted[p::num_processes]]
    reading = (options.get("tfds_data_dir"), progress)
    if len(groups) == 1:
        written, duplicates = _build(vocab_file, output_dir, settings, groups[0], *reading,
                                     segmenter_processes or available_cores())
        done.update(written)
    elif groups:
        written, duplicates = _build_in_processes(vocab_file, output_dir, settings, groups, *reading)
        done.update(written)
    write_manifest(output_dir, settings, done, vocab_file, duplicates)
    return done


def _remove_stale_temporaries(output_dir, names):
    """Temporary files left by a killed build of the shards about to be written."""
    for name in os.listdir(output_dir):
        if any(name.startswith(f"{shard}.tmp-") for shard in names):
            os.remove(os.path.join(output_dir, name))


def _build_in_processes(vocab_file, output_dir, settings, groups, tfds_data_dir, progress):
    # "spawn": TensorFlow is not fork-safe.
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager, context.Pool(len(groups)) as pool:
        queue = manager.Queue()
        results = [pool.apply_async(_build_reporting, (vocab_file, output_dir, settings, group, tfds_data_dir,
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
        written, duplicates = {}, 0
        for result in results:
            shards, duplicates = result.get()  # re-raises a worker's error; every worker reads every document
            written.update(shards)
    return written, duplicates


def _build_reporting(vocab_file, output_dir, settings, shards, tfds_data_dir, queue, worker):
    return _build(vocab_file, output_dir, settings, shards, tfds_data_dir,
                  lambda documents, tokens, _: queue.put((worker, documents, tokens)))


def _build(vocab_file, output_dir, settings, wanted, tfds_data_dir, progress, segmenter_processes=1):
    tokenizer = WordPieceTokenizer(vocab_file, lowercase=settings["lowercase"],
                                 strip_accents=settings["strip_accents"])
    num_shards = settings["num_shards"]
    packers = {i: shard_packer(settings, i, tokenizer.cls_token_id, tokenizer.sep_token_id) for i in wanted}
    stats = CorpusStats()
    texts = {}  # the documents being tokenized, by index: the text of the words that become [UNK]
    documents = ((j, texts.setdefault(j, doc)) for j, doc in enumerate(read_documents(
        settings["input_files"], settings["blanks_separate_docs"], stats, text_field=settings["text_field"],
        tfds_data_dir=tfds_data_dir, dedupe=settings["dedupe"])) if shard_of(j, num_shards) in packers)
    unknown_lines = {i: [] for i in wanted}
    split_longer_than = packers[wanted[0]].split_longer_than
    cutter = WordCutter(segmenter_processes) if "word_segmenter" in settings else None
    start, packed = time.time(), 0
    with contextlib.ExitStack() as stack:
        unknown_id = tokenizer.token_to_id(tokenizer.oov_token)
        writers = {i: stack.enter_context(ShardWriter(os.path.join(output_dir, shard_name(i, num_shards)), unknown_id))
                   for i in wanted}
        for j, document, marks in marked_documents(documents, batch_tokenizer(tokenizer), split_longer_than, cutter):
            shard = shard_of(j, num_shards)
            lines = texts.pop(j)
            if any(unknown_id in sentence for line in document for sentence in line):
                unknown_lines[shard] += lines  # (unknown_words finds the words)
            for example in packers[shard].pack(document, marks):
                writers[shard].write(example)
            packed += 1
            if progress is not None and packed % 500 == 0:
                progress(packed, sum(p.counts.read for p in packers.values()), time.time() - start)
        if stats.documents == 0:
            raise ValueError(f"the input files hold no text: {settings['input_files'][:5]}")
    if stats.warning():
        print(stats.warning())
    if progress is not None:
        progress(packed, sum(p.counts.read for p in packers.values()), time.time() - start)
    written = {shard_name(i, num_shards): shard_counts(writers[i], packers[i],
                                                       unknown_words(tokenizer, unknown_lines[i])) for i in wanted}
    return written, stats.duplicate_documents
