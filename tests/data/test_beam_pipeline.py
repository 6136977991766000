"""The Beam pipeline writes the local builder's shards, byte for byte, on Beam's in-process runner.

One corpus of every input kind (text, gzip text, JSONL, Parquet) with duplicate documents is built once
locally and once on Beam (module fixtures); the tests compare them. Beam's start-up costs seconds, so
each pipeline run is shared by several assertions.
"""

import gzip
import hashlib
import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import tensorflow_datasets as tfds

from electra_tf.data import beam_pipeline, corpus_readers
from electra_tf.data.beam_pipeline import COUNTS_DIR, PipelineFailed, build_pretraining_shards_on_beam
from electra_tf.data.beam_vocabulary import learn_vocabulary_on_beam
from electra_tf.data.corpus_readers import corpus_texts
from electra_tf.data.default_corpus import default_corpus_documents
from electra_tf.data.pretraining_data import MANIFEST, build_pretraining_shards, shard_name
from electra_tf.text.vocabulary import save_vocabulary
from electra_tf.text.vocabulary_learning import build_vocabulary

SETTINGS = {"max_seq_length": 32, "num_shards": 3, "seed": 1, "dedupe": True}


def digests(folder):
    return {name: hashlib.sha256((folder / name).read_bytes()).hexdigest()
            for name in sorted(os.listdir(folder)) if "tfrecord" in name}


def write_corpus(folder):
    """Four parts, one of each kind, sharing two duplicated documents; returns their paths. Two thirds of the
    text file's documents are one paragraph a line (lines of several sentences, split by the packer)."""
    documents = default_corpus_documents(max_documents=80)
    text = lambda docs: "\n\n".join("\n".join(doc) for doc in docs) + "\n"  # noqa: E731
    (folder / "a.txt").write_text(text(documents[:10] + [[" ".join(doc)] for doc in documents[10:30]]
                                       + [documents[5]]), encoding="utf-8")
    with gzip.open(folder / "b.txt.gz", "wt", encoding="utf-8") as f:
        f.write(text(documents[30:50] + [documents[3]]))
    with open(folder / "c.jsonl", "w", encoding="utf-8") as f:
        for doc in documents[50:65] + [[line.upper() for line in documents[4]]]:  # a copy that differs in case
            f.write(json.dumps({"text": "\n".join(doc), "id": 0}) + "\n")
    pq.write_table(pa.table({"text": ["\n".join(doc) for doc in documents[65:80]]}), folder / "d.parquet",
                   row_group_size=2)
    return [str(folder / name) for name in ("a.txt", "b.txt.gz", "c.jsonl", "d.parquet")]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("beam_corpus")
    parts = write_corpus(folder)
    vocab = str(folder / "vocab.txt")
    save_vocabulary(build_vocabulary([parts[0]], 600), vocab)
    return parts, vocab


@pytest.fixture(scope="module")
def local_shards(corpus, tmp_path_factory):
    parts, vocab = corpus
    out = tmp_path_factory.mktemp("local")
    build_pretraining_shards(parts, vocab, str(out), **SETTINGS)
    return out


@pytest.fixture(scope="module")
def beam_run(corpus, tmp_path_factory, run_tool):
    """The tool with --runner=beam on the four parts (globs, listed in the same order), the text file read in
    pieces of 500 bytes (more than ten, copies of a document in different pieces), the JSONL file too, the
    Parquet file in runs of its row groups."""
    parts, vocab = corpus
    assert len(corpus_readers.part_pieces(parts[0], piece_bytes=500)) > 10
    assert len(corpus_readers.part_pieces(parts[2], piece_bytes=500)) > 5
    assert len(corpus_readers.part_pieces(parts[3], piece_bytes=500)) > 2
    out = tmp_path_factory.mktemp("beam")
    globs = f"{os.path.dirname(parts[0])}/[ab].txt*,{parts[2]},{parts[3]}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(corpus_readers, "PIECE_BYTES", 500)
        result = run_tool("build_pretraining_data", f"--input_files={globs}",
                          f"--vocab_file={vocab}", f"--output_dir={out}", "--runner=beam", "--max_seq_length=32",
                          "--num_shards=3", "--seed=1", "--dedupe")
    return out, result


def test_beam_writes_the_local_builders_shards_and_manifest(local_shards, beam_run):
    beam_shards, (code, out, err) = beam_run
    assert code in (0, None), err[-2000:]
    assert "Beam pipeline (--runner=DirectRunner)" in out and "examples in 3 shard(s)" in out
    assert digests(beam_shards) == digests(local_shards)
    assert sorted(digests(local_shards)) == [shard_name(i, 3) for i in range(3)]
    local = json.loads((local_shards / MANIFEST).read_text())
    assert json.loads((beam_shards / MANIFEST).read_text()) == local
    assert local["totals"]["duplicate_documents"] == 3  # two exact copies and an upper-case copy
    assert local["totals"]["documents"] == 80 and local["totals"]["examples"] > 50
    assert local["totals"]["tokens_written"] == local["totals"]["tokens"] > 5_000  # long lines split, none cut
    assert local["totals"]["tokens_dropped"] == {} and local["settings"]["long_lines"] == "split"
    assert [part.rsplit(".", 1)[-1] for part in local["settings"]["input_files"]] == ["txt", "gz", "jsonl",
                                                                                     "parquet"]
    assert sorted(os.listdir(beam_shards)) == sorted(os.listdir(local_shards))  # no .counts/, no .tmp-


def test_a_failed_run_keeps_its_complete_shards_and_the_rerun_finishes(corpus, local_shards, tmp_path,
                                                                         monkeypatch):
    parts, vocab = corpus
    out = tmp_path / "resumed"
    write = beam_pipeline.WriteShard.process

    def fail_on_shard_1(self, item):
        if item[0] == 1:
            raise RuntimeError("worker lost")
        yield from write(self, item)

    monkeypatch.setattr(beam_pipeline.WriteShard, "process", fail_on_shard_1)
    with pytest.raises(PipelineFailed, match=r"^the Beam pipeline \(pre-training shards\) failed: worker lost$"):
        build_pretraining_shards_on_beam(parts, vocab, str(out), **SETTINGS)
    left = digests(out)
    assert shard_name(1, 3) not in left and not (out / MANIFEST).exists()
    assert all(left[name] == digest for name, digest in digests(local_shards).items() if name in left)
    assert not [name for name in os.listdir(out) if ".tmp-" in name]
    kept = {name: (out / name).stat().st_mtime_ns for name in left}

    monkeypatch.setattr(beam_pipeline.WriteShard, "process", write)
    build_pretraining_shards_on_beam(parts, vocab, str(out), **SETTINGS)
    assert digests(out) == digests(local_shards)
    assert {name: (out / name).stat().st_mtime_ns for name in left} == kept  # not rewritten
    assert json.loads((out / MANIFEST).read_text()) == json.loads((local_shards / MANIFEST).read_text())
    assert not (out / COUNTS_DIR).exists()


def test_beam_learns_the_local_tools_vocabulary(corpus, tmp_path):
    parts, _ = corpus
    output = tmp_path / "vocab.txt"
    vocabulary = learn_vocabulary_on_beam(parts, str(output), 700)
    assert vocabulary == build_vocabulary(corpus_texts(parts), 700)
    assert 200 < len(vocabulary) <= 700 and output.read_text(encoding="utf-8").splitlines() == vocabulary


def test_the_vocabulary_tool_on_beam_writes_the_local_tools_file(corpus, tmp_path, run_tool):
    """A text file (which the local tool reads whole, the pipeline line by line) and a JSONL file, every line learned
    from (the pipeline holds out none: --held_out_every=0 for the local tool)."""
    parts, _ = corpus
    outputs = {}
    for runner in ("local", "beam"):
        outputs[runner] = tmp_path / f"{runner}.txt"
        code, out, err = run_tool("build_vocab", f"--input_files={parts[0]},{parts[2]}", "--vocab_size=500",
                                  f"--output={outputs[runner]}", f"--runner={runner}", "--held_out_every=0")
        assert code in (0, None) and "tokens from 2 file(s)" in out, err[-2000:]
    assert outputs["beam"].read_bytes() == outputs["local"].read_bytes()


@pytest.mark.parametrize("runner", ["local", "beam"])
def test_bad_corpus_files_are_refused_with_one_line_and_nothing_written(corpus, tmp_path, run_tool, refused,
                                                                        runner):
    _, vocab = corpus
    (tmp_path / "gone.txt").symlink_to(tmp_path / "nowhere.txt")
    pq.write_table(pa.table({"body": ["Some text."]}), tmp_path / "other.parquet")
    (tmp_path / "bad.jsonl").write_text('{"text": "Fine."}\n{"body": "No text field."}\n', encoding="utf-8")

    def build(pattern):
        return run_tool("build_pretraining_data", f"--input_files={pattern}", f"--vocab_file={vocab}",
                        f"--output_dir={tmp_path / 'out'}", f"--runner={runner}", "--num_shards=2")

    refused(build(str(tmp_path / "nothing*.txt")), f"no input files match '{tmp_path / 'nothing*.txt'}'")
    builder = build_pretraining_shards_on_beam if runner == "beam" else build_pretraining_shards
    with pytest.raises(ValueError, match=f"^{tmp_path / 'gone.txt'}: cannot be read \\(No such file or directory\\); "
                                         "check the path and its permissions$"):
        builder([str(tmp_path / "gone.txt")], vocab, str(tmp_path / "out"))  # e.g. removed since it was listed
    refused(build(str(tmp_path / "other.parquet")), f"{tmp_path / 'other.parquet'}: no column 'text' (it has "
                                                   "['body']); pass --text_field=<column>")
    assert not (tmp_path / "out").exists()
    (tmp_path / "blank.txt").write_text("\n\n\n")
    refused(build(str(tmp_path / "blank.txt")), f"the input files hold no text: ['{tmp_path / 'blank.txt'}']")
    assert not [name for name in os.listdir(tmp_path / "out") if "tfrecord" in name or name == MANIFEST]
    result = build(str(tmp_path / "bad.jsonl"))
    prefix = "the Beam pipeline (pre-training shards) failed: " if runner == "beam" else ""
    refused(result, f"{prefix}{tmp_path / 'bad.jsonl'}, line 2: no string field 'text'; pass --text_field=<field>")
    assert result[2].count("\n") == 1
    assert not [name for name in os.listdir(tmp_path / "out") if "tfrecord" in name or name == MANIFEST]


def test_a_tfds_dataset_gives_the_same_shards_on_both_runners(corpus, tmp_path):
    _, vocab = corpus
    with tfds.testing.mock_data(num_examples=12):
        build_pretraining_shards(["tfds:imdb_reviews:train"], vocab, str(tmp_path / "local"), num_shards=2)
        build_pretraining_shards_on_beam(["tfds:imdb_reviews:train"], vocab, str(tmp_path / "beam"), num_shards=2)
    assert digests(tmp_path / "beam") == digests(tmp_path / "local")
    manifest = json.loads((tmp_path / "beam" / MANIFEST).read_text())
    assert manifest["totals"]["documents"] == 12 and manifest["settings"]["input_files"] == ["tfds:imdb_reviews:train"]


def test_bad_utf8_is_reported_as_the_local_builder_does_from_any_piece(corpus, tmp_path, capsys, monkeypatch):
    """The line number of the first bad line counts the lines of the pieces before it."""
    _, vocab = corpus
    path = tmp_path / "corpus.txt"
    path.write_bytes(b"".join(b"document %d, line one\nline two\n\n" % i for i in range(40))
                     + b"bad \xff byte\n\nand \xfe another\n")
    monkeypatch.setattr(corpus_readers, "PIECE_BYTES", 100)
    assert len(corpus_readers.part_pieces(str(path))) > 10
    build_pretraining_shards([str(path)], vocab, str(tmp_path / "local"), num_shards=2)
    local = capsys.readouterr().out
    build_pretraining_shards_on_beam([str(path)], vocab, str(tmp_path / "beam"), num_shards=2)
    assert capsys.readouterr().out == local == (f"warning: 2 line(s) were not valid UTF-8; bad bytes were replaced "
                                                f"by U+FFFD (first: {path}, line 121)\n")
    assert digests(tmp_path / "beam") == digests(tmp_path / "local")
