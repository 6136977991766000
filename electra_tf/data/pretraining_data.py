"""Text corpus → pre-training TFRecord shards.

Documents are read from the corpus parts (`corpus_readers`: text files, one
sentence or one paragraph a line, a blank line ending a document with
`blanks_separate_docs`; JSONL, Parquet, TFDS), optionally de-duplicated,
tokenized in-graph in large batches, and dealt round-robin to the shards:
document `j` goes to shard `j % num_shards`. Each shard packs its documents in
order with its own `shard_packer` (a `DocumentPacker` seeded by the seed and the
shard: by default no text is dropped, a line longer than an example is split at
its sentence ends, and CJK text packs whole sentences, `long_lines="sentences"`; `long_lines="truncate"` is
the original's cut), so its
content depends only on the corpus, the seed and the number of shards (the Beam
pipeline, `beam_pipeline`, packs through the same `shard_packer` and writes the
same bytes).

Shards appear atomically (`write_shard`) and a `manifest.json` records the
settings, the vocabulary hash and every shard's counts (documents, examples,
tokens read, written and dropped by reason, `[UNK]` tokens written, examples ending mid-sentence, the words the
vocabulary maps to `[UNK]`) and their totals, the share of `[UNK]` among the tokens written (`unknown_token_rate`:
a vocabulary that does not fit the text shows here) with the most frequent unknown words (`unknown_words`), and
the share of examples that end mid-sentence (`mid_sentence_rate`). Running the
same build again skips complete shards and finishes the others; an output folder holding shards of other
settings is an error.

With `whole_word_masking`, CJK text is segmented into words (`word_segmentation`: jieba) and each example
stores which tokens continue the previous token's word (`continues_word`), for in-graph whole-word masking; the
manifest counts the words and those of several tokens (`whole_words`: what whole-word masking masks as one).

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
    """Yields the documents (lists of non-empty lines) of every part in order (`corpus_readers.read_part`).

    With `dedupe`, a document whose `document_hash` was seen before is dropped and counted in
    `stats.duplicate_documents`: the first copy stays.
    """
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
    """The totals of `{shard: counts}`: each count summed over the shards, a count by reason (`tokens_dropped`)
    summed reason by reason.

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
    """The share of the examples of `shards` (`{shard: counts}`) that end inside a sentence (the next example
    goes on with it, or the original rules cut it); None when a shard's counts lack it.

    >>> mid_sentence_rate({"a": {"examples": 8, "examples_ending_mid_sentence": 1},
    ...                    "b": {"examples": 2, "examples_ending_mid_sentence": 0}})
    0.1
    """
    if any("examples_ending_mid_sentence" not in counts for counts in shards.values()):
        return None
    examples = sum(counts["examples"] for counts in shards.values())
    return sum(counts["examples_ending_mid_sentence"] for counts in shards.values()) / examples if examples else 0.0


def unknown_token_rate(shards):
    """The share of `[UNK]` among the tokens written into `shards` (`{shard: counts}`), special tokens not
    counted; None when a shard's counts lack it (written before the count was kept).

    >>> unknown_token_rate({"a": {"tokens_written": 90, "tokens_unknown": 3}, "b": {"tokens_written": 10,
    ...                                                                             "tokens_unknown": 0}})
    0.03
    """
    if any("tokens_unknown" not in counts for counts in shards.values()):
        return None
    written = sum(counts["tokens_written"] for counts in shards.values())
    return sum(counts["tokens_unknown"] for counts in shards.values()) / written if written else 0.0


def shard_words(files):
    """The word counts (`whole_words` of `packing_totals`) of the shard `files`, summed over the manifests of their
    folders; None when no manifest counts words (shards built without `whole_word_masking`)."""
    manifests = [read_manifest(folder) for folder in sorted({os.path.dirname(path) for path in files})]
    counts = [manifest["totals"]["whole_words"] for manifest in manifests
              if manifest and "whole_words" in manifest.get("totals", {})]
    return packing_totals(dict(enumerate(counts))) if counts else None


def masking_unit(words=None, whole_word_masking=True):
    """One line: the unit that masking masks (the word, or with `whole_word_masking` False the token), and given the
    shards' word counts (`shard_words`), how many of their words hold several tokens, masked as one.

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
    """Yields `(index, document)` for `(index, document as lines of text)`, a document as `DocumentPacker`
    takes it: lines, each a list of sentences, each a list of ids. Many lines are tokenized per call of
    `tokenize` (a `batch_tokenizer`; see `tokenized_batches`).
    """
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
    sentences, for `(index, document as lines of text)`.

    A line of more than `split_longer_than` characters is cut into its sentences (`split_sentences`;
    tokenized, the same ids as the whole line), so the packer can split it where it does not fit; a shorter line
    cannot hold more tokens than that (each token covers a character at least) and stays one sentence.
    """
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
    of the `sentence_batches`.

    With a `cutter` (`word_segmentation.WordCutter`: jieba, in worker processes), a sentence holding CJK text is
    tokenized as its `word_runs` (the same ids again), and the word marks are an int8 array beside the ids' flat
    values (1 where a token continues the previous token's word); without, they are None.
    """
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
    """The name and version of the word segmenter a build with `whole_word_masking` uses (`load_segmenter`;
    recorded as the setting `word_segmenter`), or None: without the flag, or when the segmenter is not installed
    and the corpus holds no CJK text (whose words `##` pieces already give). Needed and not installed: a
    ValueError saying how to install it, raised after reading the corpus up to its first CJK line, before any
    other work."""
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
    """The `DocumentPacker` of shard `shard` (its own seed), which packs its documents in document order and
    counts them (`packer.counts.as_dict()`: the shard's counts in the manifest, `examples` aside).

    The local builder and the Beam pipeline both pack through it, so a shard's examples depend only on
    its documents, the settings and its index.
    """
    return DocumentPacker(settings["max_seq_length"], cls_id, sep_id,
                          random.Random(settings["seed"] * 1_000_003 + shard), long_lines=settings["long_lines"])


def shard_counts(writer, packer, unknown):
    """A shard's counts in the manifest, once its `ShardWriter` and its `shard_packer` are done with it; `unknown`:
    the words of its text that became `[UNK]` (`{word: count}`, `vocabulary_learning.unknown_words`)."""
    return {"examples": writer.count, "tokens_unknown": writer.unknown, **packer.counts.as_dict(),
            "unknown_words": top_unknown_words(unknown)}


def top_unknown_words(counts):
    """The `UNKNOWN_WORDS_KEPT` most frequent of `counts` (`{word: count}`), ties by the word: what a shard's counts
    keep (`unknown_words`), the same whichever builder counted them.

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


def default_long_lines(cjk):
    """The `long_lines` of a build that gives none: "sentences" for CJK text (`corpus_is_cjk`), whose lines are
    often whole paragraphs without a space, so that cutting them where an example is full ("split") ends more than
    a third of its examples mid-sentence; "split" otherwise."""
    return "sentences" if cjk else "split"


def build_settings(parts, vocab_file, *, max_seq_length=128, num_shards=1, seed=0, blanks_separate_docs=True,
                   lowercase=True, strip_accents=None, long_lines=None, text_field="text", dedupe=False,
                   whole_word_masking=False, tfds_data_dir=None, language=None):
    """The settings a build records in its manifest (and must match to resume); checks them and the parts
    (and, for `whole_word_masking`, that the `word_segmenter` it needs is installed). `long_lines` None: as
    `default_long_lines` (by `language`, or the text)."""
    if num_shards < 1:
        raise ValueError(f"need num_shards >= 1, got {num_shards}")
    if long_lines not in (None, *LONG_LINES):
        raise ValueError(f"long_lines must be one of {list(LONG_LINES)}, got {long_lines!r}")
    files = check_parts(parts, text_field)
    if long_lines is None:
        long_lines = default_long_lines(corpus_is_cjk(files, blanks_separate_docs, text_field, tfds_data_dir,
                                                      language))
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


def build_pretraining_shards(input_files, vocab_file, output_dir, *, max_seq_length=128, num_shards=1,
                             seed=0, blanks_separate_docs=True, lowercase=True, strip_accents=None,
                             long_lines=None, text_field="text", tfds_data_dir=None, dedupe=False,
                             whole_word_masking=False, language=None, num_processes=1, segmenter_processes=None,
                             progress=None):
    """Builds (or finishes) the shards in `output_dir`; returns the manifest's shard counts.

    Args:
        input_files: the corpus parts: text, `.jsonl` or `.parquet` files, or `tfds:<name>[:<split>]`
            (see `corpus_readers`).
        long_lines: "split" (no text dropped), "sentences" (no text dropped, examples end at sentence ends) or
            "truncate" (the original's rules), as `DocumentPacker`; None (default): "sentences" for CJK text,
            "split" for other text (`default_long_lines`).
        language: the corpus's language code ("zh", "ja", "ko": CJK text), for the defaults that follow it;
            None: detected (`corpus_is_cjk`).
        text_field: the JSONL field, Parquet column or TFDS feature holding a document's text.
        tfds_data_dir: where TFDS datasets are prepared.
        dedupe: drop exact duplicate documents (`corpus_readers.document_hash`), counted in the manifest.
        whole_word_masking: store the words of CJK text, found by a word segmenter (jieba), with each example
            (`continues_word`), for `PretrainingConfig.whole_word_masking`; the manifest's settings name the
            segmenter and its version (`word_segmenter`). Not needed for other text (`##` pieces give words).
        num_processes: worker processes; process `p` writes shards
            `p, p + num_processes, ...`. The output does not depend on it.
        segmenter_processes: with `whole_word_masking`, the processes that cut CJK text into words while this
            one tokenizes (`word_segmentation.WordCutter`), at most one per core this process may use (None). (With
            `num_processes` above 1, each of those cuts its own text.) The output does not depend on it.
        progress: called as `progress(documents, tokens, seconds)` now and
            then, with the documents and tokens packed so far.
    """
    if num_processes < 1:
        raise ValueError(f"need num_processes >= 1, got {num_processes}")
    if segmenter_processes is not None and not 1 <= segmenter_processes <= available_cores():
        raise ValueError(f"segmenter_processes must be in 1..{available_cores()} (the cores this process may use; "
                         f"each runs one jieba worker), got {segmenter_processes}")
    settings = build_settings(input_files, vocab_file, max_seq_length=max_seq_length, num_shards=num_shards,
                              seed=seed, blanks_separate_docs=blanks_separate_docs, lowercase=lowercase,
                              strip_accents=strip_accents, long_lines=long_lines, text_field=text_field,
                              dedupe=dedupe, whole_word_masking=whole_word_masking, tfds_data_dir=tfds_data_dir,
                              language=language)
    done, wanted, duplicates = plan_build(output_dir, settings)
    groups = [wanted[p::num_processes] for p in range(num_processes) if wanted[p::num_processes]]
    reading = (tfds_data_dir, progress)
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
