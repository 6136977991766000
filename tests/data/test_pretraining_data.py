import json
import os
import random

import numpy as np
import pytest
import tensorflow as tf

from electra_tf.data.default_corpus import default_corpus_documents, to_sentences, write_default_corpus
from electra_tf.data.packing import DROPPED_LONG_LINE, DROPPED_OVERFLOW, DocumentPacker, ExampleBuilder
from electra_tf.data.tfrecord_dataset import pretraining_dataset
from electra_tf.data.pretraining_data import (
    MANIFEST,
    build_pretraining_shards,
    read_documents,
    shard_name,
    tokenized_documents,
)
from electra_tf.data.streaming import packed_examples
from electra_tf.data.tfrecord import record_format, write_shard
from electra_tf.text.tokenizer import WordPieceTokenizer
from electra_tf.text.vocabulary import load_vocabulary, save_vocabulary
from electra_tf.text.vocabulary_learning import build_vocabulary

CLS, SEP = 101, 102


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    write_default_corpus(str(path), max_documents=150)
    return str(path)


@pytest.fixture(scope="module")
def vocab_file(corpus, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("vocab") / "vocab.txt")
    save_vocabulary(build_vocabulary([corpus], 800), path)
    return path


def test_default_corpus_is_real_english_prose():
    documents = default_corpus_documents(max_documents=200)
    assert len(documents) == 200
    text = " ".join(s for doc in documents for s in doc)
    words = text.lower().split()
    assert len(words) > 5000
    for common in ("the", "of", "is", "a", "to"):
        assert words.count(common) > 20, common
    assert not any(s.startswith(">>>") for doc in documents for s in doc)


def test_to_sentences_drops_code_and_splits_prose():
    text = "Return the sum. It is fast!\n\n>>> add(1, 2)\n3\n\nSee also the docs."
    assert to_sentences(text) == ["Return the sum.", "It is fast!", "See also the docs."]


def test_vocabulary_has_special_tokens_first(vocab_file):
    vocabulary = load_vocabulary(vocab_file)
    assert vocabulary[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert 100 < len(vocabulary) <= 800
    assert any(token.startswith("##") for token in vocabulary)


def test_tokenizer_on_real_text(vocab_file):
    tokenizer = WordPieceTokenizer(vocab_file)
    ids = tokenizer.tokenize(["Return the Number of items, e.g. 3!"])[0].numpy().tolist()
    vocabulary = load_vocabulary(vocab_file)
    tokens = [vocabulary[i] for i in ids]
    assert tokens[:2] == ["return", "the"]  # lower-cased
    assert "," in tokens and "!" in tokens and "3" in tokens  # punctuation and digits split off
    batch = tokenizer.encode(["A first text.", "Another, longer, second text here."], sequence_length=8)
    assert batch["input_ids"].shape == (2, 8)
    assert batch["input_ids"][0, 0] == tokenizer.cls_token_id
    assert set(np.unique(batch["attention_mask"])) <= {0, 1}
    assert tokenizer.special_token_ids == sorted(
        vocabulary.index(t) for t in ("[PAD]", "[CLS]", "[SEP]", "[MASK]"))


def test_bert_layout_vocabulary_is_accepted_as_is(tmp_path):
    vocabulary = [f"[unused{i}]" for i in range(100)]
    vocabulary[0] = "[PAD]"
    vocabulary += ["[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world"]
    path = tmp_path / "vocab.txt"
    path.write_text("".join(t + "\n" for t in vocabulary), encoding="utf-8")
    tokenizer = WordPieceTokenizer(str(path))
    assert (tokenizer.pad_token_id, tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.mask_token_id) == (
        0, 101, 102, 103)
    assert tokenizer.tokenize(["Hello world"])[0].numpy().tolist() == [104, 105]


@pytest.mark.parametrize("content, message", [
    ("", "empty"),
    ("[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n", r"missing special token\(s\) \['\[MASK\]'\]"),
    ("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhi\nhi\n", r"duplicate token\(s\), e.g. \['hi'\]"),
])
def test_bad_vocabularies(tmp_path, content, message):
    path = tmp_path / "vocab.txt"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        load_vocabulary(str(path))


def _pack(documents, max_length, seed):
    builder = ExampleBuilder(max_length, CLS, SEP, random.Random(seed))
    examples = []
    for doc_id, document in enumerate(documents):
        for sentence in document:
            example = builder.add_sentence(sentence)
            if example is not None:
                examples.append((doc_id, example))
        example = builder.end_document()
        if example is not None:
            examples.append((doc_id, example))
    return examples


def test_packing_invariants_on_real_text(vocab_file):
    tokenizer = WordPieceTokenizer(vocab_file)
    documents = [[tokenizer.tokenize([s])[0].numpy().tolist() for s in doc] for doc in default_corpus_documents(60)]
    # Tag every token with its document and its place in it: doc * offset + index.
    offset = 1_000_000
    tagged = []
    for d, doc in enumerate(documents):
        counter = iter(range(offset * (d + 1), offset * (d + 2)))
        tagged.append([[next(counter) for _ in sentence] for sentence in doc])
    max_length = 32
    examples = _pack(tagged, max_length, seed=0)
    single_segment = short = 0
    for doc_id, example in examples:
        ids, mask, segments = example.input_ids, example.input_mask, example.segment_ids
        assert len(ids) == len(mask) == len(segments) == max_length
        n = sum(mask)
        assert mask == [1] * n + [0] * (max_length - n)
        assert ids[0] == CLS and ids[n - 1] == SEP and ids[n:] == [0] * (max_length - n)
        seps = [i for i in range(n) if ids[i] == SEP]
        assert len(seps) in (1, 2)
        assert segments[:seps[0] + 1] == [0] * (seps[0] + 1)
        assert segments[seps[0] + 1:n] == [1] * (n - seps[0] - 1)
        words = [t for t in ids[:n] if t not in (CLS, SEP)]
        assert words and all(t // offset == doc_id + 1 for t in words)  # never crosses a document
        for segment in (ids[1:seps[0]], ids[seps[0] + 1:n - 1]):
            assert segment == sorted(segment)  # each segment keeps the document's order
        single_segment += len(seps) == 1
        short += n < max_length // 2
    assert 0 < single_segment < len(examples)
    assert short > 0  # the 5 % random-length targets
    # Most text lands in an example (the rest is truncated away, as in the original).
    assert sum(sum(e.input_mask) for _, e in examples) > 0.4 * sum(len(s) for d in tagged for s in d)


def test_packing_is_deterministic_for_a_seed():
    documents = [[list(range(5, 5 + n)) for n in (7, 3, 12, 9)] for _ in range(20)]
    first = [e.input_ids for _, e in _pack(documents, 16, seed=1)]
    again = [e.input_ids for _, e in _pack(documents, 16, seed=1)]
    other = [e.input_ids for _, e in _pack(documents, 16, seed=2)]
    assert first == again and first != other


def _random_documents(seed, long_every=4):
    """Documents of lines (each a list of sentences of unique, increasing ids), some lines far longer than
    an example."""
    rng = random.Random(seed)
    counter = iter(range(1000, 10**9))
    documents = []
    for _ in range(30):
        lines = []
        for _ in range(rng.randint(1, 6)):
            lengths = [rng.randint(0, 200 if rng.random() < 1 / long_every else 30) for _ in range(rng.randint(1, 4))]
            lines.append([[next(counter) for _ in range(n)] for n in lengths])
        documents.append(lines)
    return documents


def _text_tokens(example):
    return [t for t, m in zip(example.input_ids, example.input_mask) if m and t not in (CLS, SEP)]


def _segments(example):
    """Segment A's and segment B's tokens."""
    ids = example.input_ids[:example.num_tokens]
    return ids[1:ids.index(SEP)], ids[ids.index(SEP) + 1:-1]


@pytest.mark.parametrize("max_length", [8, 32, 128])
def test_split_packing_keeps_every_token_of_its_document(max_length):
    documents = _random_documents(seed=max_length)
    packer = DocumentPacker(max_length, CLS, SEP, random.Random(0))
    single = total = 0
    for document in documents:
        examples = packer.pack(document)
        # Every token once (ids increase through the document; segments may interleave sentences, as the
        # original's A/B rule does), and in order within each segment.
        assert sorted(t for e in examples for t in _text_tokens(e)) == [t for line in document for s in line
                                                                          for t in s]
        assert all(segment == sorted(segment) for e in examples for segment in _segments(e))
        for example in examples:
            n = example.num_tokens
            assert len(example.input_ids) == max_length and example.input_ids[0] == CLS
            assert example.input_ids[n - 1] == SEP and example.input_ids.count(SEP) in (1, 2)
            single += example.input_ids.count(SEP) == 1
        total += len(examples)
    read = sum(len(s) for d in documents for line in d for s in line)
    counts = packer.counts.as_dict()
    assert counts == {"documents": len(documents), "tokens": read, "tokens_written": read, "tokens_dropped": {},
                      "examples_ending_mid_sentence": counts["examples_ending_mid_sentence"]}
    assert 0 < counts["examples_ending_mid_sentence"] < total  # split: a full example ends mid-sentence
    assert single < 0.3 * total  # long lines become two-segment examples, not one-segment runs


def test_truncate_packing_is_the_original_rule_and_counts_what_it_drops():
    documents = _random_documents(seed=1)
    flat = [[[t for s in line for t in s] for line in document] for document in documents]
    original = [e.input_ids for _, e in _pack(flat, 32, seed=3)]
    packer = DocumentPacker(32, CLS, SEP, random.Random(3), long_lines="truncate")
    assert [e.input_ids for d in documents for e in packer.pack(d)] == original
    counts = packer.counts
    assert counts.written == sum(1 for ids in original for t in ids if t not in (CLS, SEP, 0))
    assert set(counts.dropped) == {DROPPED_LONG_LINE, DROPPED_OVERFLOW}
    assert counts.read - counts.written == sum(counts.dropped.values()) > 0
    with pytest.raises(ValueError, match=r"long_lines must be one of \['split', 'sentences', 'truncate'\], "
                                         r"got 'cut'"):
        DocumentPacker(32, CLS, SEP, long_lines="cut")


def test_long_lines_are_tokenized_as_their_sentences(vocab_file):
    tokenizer = WordPieceTokenizer(vocab_file)
    long_line = "Return the sum. It is fast! Why? (Because.) " * 3 + "the end"
    documents = [(0, ["Short line. Not split.", long_line])]
    ((_, (short, long)),) = tokenized_documents(documents, tokenizer, split_longer_than=40)
    assert len(short) == 1 and len(long) == 10  # no end after "(Because.)": a bracket precedes the space
    assert [t for s in long for t in s] == tokenizer.tokenize(long_line).numpy().tolist()  # the same ids as the line
    ((_, lines),) = tokenized_documents(documents, tokenizer)
    assert [len(line) for line in lines] == [1, 1]


def test_streaming_packs_over_long_lines_whole_too(vocab_file):
    tokenizer = WordPieceTokenizer(vocab_file)
    line = "Return the sum of the items. It is fast! " * 20
    expected = tokenizer.tokenize(line).numpy().tolist()
    stream = packed_examples(lambda: iter([[line]]), tokenizer, seq_length=32)
    seen = []
    while len(seen) < len(expected):  # one epoch
        example = next(stream)
        seen += [t for t, m in zip(example["input_ids"], example["attention_mask"])
                 if m and t not in (tokenizer.cls_token_id, tokenizer.sep_token_id)]
    assert sorted(seen) == sorted(expected)
    truncated = next(packed_examples(lambda: iter([[line]]), tokenizer, seq_length=32, long_lines="truncate"))
    assert truncated["input_ids"] == [tokenizer.cls_token_id] + expected[:30] + [tokenizer.sep_token_id]


def _paragraph_corpus(sentence_corpus, path, documents=16):
    """One paragraph a line (a document's sentences joined), each fourth line followed by a 300+-word line."""
    paragraphs = [" ".join(document) for document in list(read_documents([sentence_corpus]))[:documents]]
    with open(path, "w", encoding="utf-8") as f:
        for i in range(0, len(paragraphs), 4):
            f.write("\n".join(paragraphs[i:i + 4]) + "\n" + " ".join(paragraphs[i:i + 12] * 3) + "\n\n")
    return str(path)


def test_a_paragraph_per_line_corpus_is_packed_whole_and_the_manifest_counts_tokens(corpus, vocab_file, tmp_path):
    corpus = _paragraph_corpus(corpus, tmp_path / "paragraphs.txt")
    totals = {}
    for long_lines in ("split", "truncate"):
        build_pretraining_shards([corpus], vocab_file, str(tmp_path / long_lines), max_seq_length=32, num_shards=2,
                                 long_lines=long_lines)
        manifest = json.loads((tmp_path / long_lines / MANIFEST).read_text())
        assert manifest["settings"]["long_lines"] == long_lines
        totals[long_lines] = manifest["totals"]
        for counts in manifest["shards"].values():
            assert counts["tokens"] - counts["tokens_written"] == sum(counts["tokens_dropped"].values())
    split, truncate = totals["split"], totals["truncate"]
    assert split["tokens"] == truncate["tokens"] > 3_000
    assert split["tokens_written"] == split["tokens"] and split["tokens_dropped"] == {}
    assert truncate["tokens_written"] < 0.5 * truncate["tokens"]
    assert truncate["tokens_dropped"][DROPPED_LONG_LINE] > 0.5 * truncate["tokens"]
    # What the shards hold is what the manifest says.
    dataset = pretraining_dataset(str(tmp_path / "split" / "*tfrecord*"), batch_size=1, seq_length=32,
                                  training=False)
    ids = np.concatenate([b["input_ids"].numpy()[b["attention_mask"].numpy() == 1] for b in dataset])
    assert int(np.isin(ids, [2, 3], invert=True).sum()) == split["tokens"]  # [CLS]=2, [SEP]=3 not counted


def test_read_documents_replaces_and_counts_bad_utf8(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_bytes(b"first line\nsecond \xff line\n\nnext document\n")
    from electra_tf.data.pretraining_data import CorpusStats
    stats = CorpusStats()
    documents = list(read_documents([str(path)], stats=stats))
    assert documents == [["first line", "second \ufffd line"], ["next document"]]
    assert stats.undecodable_lines == 1 and stats.first_undecodable == (str(path), 2)
    assert list(read_documents([str(path)], blanks_separate_docs=False)) == [
        ["first line", "second \ufffd line", "next document"]]


def test_build_shards_round_trip_and_resume(corpus, vocab_file, tmp_path):
    out = str(tmp_path / "data")
    counts = build_pretraining_shards([corpus], vocab_file, out, max_seq_length=32, num_shards=3, seed=0)
    assert sorted(counts) == [shard_name(i, 3) for i in range(3)]
    total = sum(c["examples"] for c in counts.values())
    assert total > 100
    manifest = json.loads(open(os.path.join(out, MANIFEST)).read())
    assert manifest["totals"]["examples"] == total and manifest["settings"]["max_seq_length"] == 32
    assert record_format(os.path.join(out, shard_name(0, 3))) == (("input_ids", "input_mask", "segment_ids"), 32)

    # Remove one shard: the same build rewrites it identically and leaves the others alone.
    victim = os.path.join(out, shard_name(1, 3))
    original = open(victim, "rb").read()
    untouched = os.path.getmtime(os.path.join(out, shard_name(0, 3)))
    os.remove(victim)
    build_pretraining_shards([corpus], vocab_file, out, max_seq_length=32, num_shards=3, seed=0)
    assert open(victim, "rb").read() == original
    assert os.path.getmtime(os.path.join(out, shard_name(0, 3))) == untouched
    assert not [f for f in os.listdir(out) if ".tmp-" in f]

    with pytest.raises(ValueError, match=r"other settings \(differing: \['max_seq_length'\]\)"):
        build_pretraining_shards([corpus], vocab_file, out, max_seq_length=64, num_shards=3, seed=0)

    dataset = pretraining_dataset(os.path.join(out, "*tfrecord*"), batch_size=16, seq_length=32, training=False)
    seen = 0
    for batch in dataset:
        assert batch["input_ids"].dtype == tf.int32 and batch["input_ids"].shape == (16, 32)
        assert np.all(batch["input_ids"][:, 0] == WordPieceTokenizer(vocab_file).cls_token_id)
        seen += 16
    assert total - 16 * 3 < seen <= total

    with pytest.raises(ValueError, match="records have length 32, but the sequence length is 64"):
        pretraining_dataset(os.path.join(out, "*tfrecord*"), batch_size=16, seq_length=64)


def test_empty_corpus_is_an_error_and_leaves_no_shard(tmp_path, vocab_file):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    out = tmp_path / "data"
    with pytest.raises(ValueError, match="hold no text"):
        build_pretraining_shards([str(empty)], vocab_file, str(out), max_seq_length=32, num_shards=2)
    assert [f for f in os.listdir(out) if "tfrecord" in f] == []


def test_reader_errors_name_the_problem(tmp_path):
    with pytest.raises(ValueError, match="no files match"):
        pretraining_dataset(str(tmp_path / "*.tfrecord"), batch_size=2, seq_length=8)
    empty = tmp_path / "empty.tfrecord"
    write_shard(str(empty), [])
    with pytest.raises(ValueError, match="hold no records"):
        pretraining_dataset(str(empty), batch_size=2, seq_length=8)
    corrupt = tmp_path / "corrupt.tfrecord"
    corrupt.write_bytes(b"\x00" * 40)
    with pytest.raises(ValueError, match="corrupt.tfrecord: corrupt TFRecord"):
        pretraining_dataset(str(corrupt), batch_size=2, seq_length=8)


def test_reader_accepts_model_garden_v2_feature_names(tmp_path):
    def int64s(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))

    path = tmp_path / "v2.tfrecord"
    with tf.io.TFRecordWriter(str(path)) as writer:
        for i in range(4):
            features = {"input_word_ids": int64s([2, 10 + i, 3, 0]), "input_mask": int64s([1, 1, 1, 0]),
                        "input_type_ids": int64s([0, 0, 0, 0])}
            writer.write(tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString())
    batch = next(iter(pretraining_dataset(str(path), batch_size=4, seq_length=4, training=False)))
    np.testing.assert_array_equal(batch["input_ids"][:, 1], [10, 11, 12, 13])
    np.testing.assert_array_equal(batch["attention_mask"][0], [1, 1, 1, 0])
