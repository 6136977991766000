"""tools/build_vocab.py and tools/build_pretraining_data.py as a user runs them, and streaming sources."""

import hashlib
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

from electra_tf.data.default_corpus import write_default_corpus
from electra_tf.data.streaming import streaming_dataset, text_documents, tfds_documents
from electra_tf.text.tokenizer import WordPieceTokenizer

ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}


def run_script(name, *flags, timeout=300):
    return subprocess.run([sys.executable, "-m", f"electra_tf.tools.{name}", *flags], capture_output=True,
                          text=True, timeout=timeout, env=ENV)


def shard_digests(folder):
    return {name: hashlib.sha256(open(os.path.join(folder, name), "rb").read()).hexdigest()
            for name in sorted(os.listdir(folder)) if "tfrecord" in name}


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    write_default_corpus(str(folder / "a.txt"), max_documents=300)
    lines = (folder / "a.txt").read_text(encoding="utf-8").split("\n\n")
    (folder / "b.txt").write_text("\n\n".join(lines[150:]), encoding="utf-8")
    (folder / "a.txt").write_text("\n\n".join(lines[:150]), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def vocab_file(corpus_dir, tmp_path_factory):
    path = tmp_path_factory.mktemp("vocab") / "vocab.txt"
    result = run_script("build_vocab", f"--input_files={corpus_dir}/*.txt", "--vocab_size=1000", f"--output={path}")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "tokens from 2 file(s)" in result.stdout
    return str(path)


def test_build_vocab_refuses_bad_input(corpus_dir, vocab_file, tmp_path, run_tool):
    code, _, err = run_tool("build_vocab", f"--input_files={tmp_path}/nothing*.txt", f"--output={tmp_path}/v.txt")
    assert code == 2 and "error: no input files match" in err
    code, _, err = run_tool("build_vocab", f"--input_files={corpus_dir}/a.txt", f"--output={vocab_file}")
    assert code == 2 and "exists; pass --overwrite" in err
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "blank.txt").write_text("\n\n\n")
    code, _, err = run_tool("build_vocab", f"--input_files={tmp_path}/empty", f"--output={tmp_path}/v.txt")
    assert code == 2 and "error:" in err and not (tmp_path / "v.txt").exists()


def _build_here(run_tool, corpus_dir, vocab_file, output_dir, max_seq_length=48):
    """`_build` in this process: `(exit code, stdout, stderr)`."""
    return run_tool("build_pretraining_data", f"--input_files={corpus_dir}", f"--vocab_file={vocab_file}",
                    f"--output_dir={output_dir}", f"--max_seq_length={max_seq_length}", "--num_shards=4")


def _build(corpus_dir, vocab_file, output_dir, *extra):
    return run_script("build_pretraining_data", f"--input_files={corpus_dir}", f"--vocab_file={vocab_file}",
                    f"--output_dir={output_dir}", "--max_seq_length=48", "--num_shards=4", *extra)


def test_output_does_not_depend_on_the_process_count(corpus_dir, vocab_file, tmp_path, run_tool):
    code, out, err = _build_here(run_tool, corpus_dir, vocab_file, tmp_path / "one")  # one process: this one
    assert code in (0, None), err[-2000:]
    assert "documents" in out and "tokens" in out and "/s)" in out
    two = _build(corpus_dir, vocab_file, tmp_path / "two", "--num_processes=2")
    assert two.returncode == 0, two.stderr[-2000:]
    assert shard_digests(tmp_path / "one") == shard_digests(tmp_path / "two")
    assert len(shard_digests(tmp_path / "one")) == 4
    manifest = json.loads((tmp_path / "two" / "manifest.json").read_text())
    assert manifest["totals"]["documents"] == 300


def test_a_killed_build_resumes_to_the_same_shards(corpus_dir, vocab_file, tmp_path, run_tool):
    assert _build_here(run_tool, corpus_dir, vocab_file, tmp_path / "reference")[0] in (0, None)
    out = tmp_path / "killed"
    command = [sys.executable, "-m", "electra_tf.tools.build_pretraining_data", f"--input_files={corpus_dir}",
               f"--vocab_file={vocab_file}", f"--output_dir={out}", "--max_seq_length=48", "--num_shards=4"]
    process = subprocess.Popen(command, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and not (out.exists() and any(".tmp-" in f for f in os.listdir(out))):
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert out.exists()
    # Whatever a kill leaves, nothing looks like a complete shard unless it is one.
    for name, digest in shard_digests(out).items():
        if ".tmp-" not in name:
            assert digest == shard_digests(tmp_path / "reference")[name]
    assert _build_here(run_tool, corpus_dir, vocab_file, out)[0] in (0, None)  # the same command, run again
    assert shard_digests(out) == shard_digests(tmp_path / "reference")


def test_build_refuses_bad_input_and_keeps_what_exists(corpus_dir, vocab_file, tmp_path, run_tool):
    out = tmp_path / "data"
    assert _build_here(run_tool, corpus_dir, vocab_file, out)[0] in (0, None)
    before = shard_digests(out)
    code, _, err = _build_here(run_tool, corpus_dir, vocab_file, out, max_seq_length=64)  # refused before any work
    assert code == 2 and "holds shards built with other settings" in err
    assert shard_digests(out) == before

    no_mask = tmp_path / "no_mask.txt"
    no_mask.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nthe\n")
    code, _, err = _build_here(run_tool, corpus_dir, no_mask, tmp_path / "x")
    assert code == 2 and "missing special token(s) ['[MASK]']" in err
    code, _, err = _build_here(run_tool, tmp_path / "missing*.txt", vocab_file, tmp_path / "y")
    assert code == 2 and "no input files match" in err


def test_garbage_text_is_packed_with_a_warning(vocab_file, tmp_path):
    corpus = tmp_path / "garbage.txt"
    corpus.write_bytes(b"valid first line.\nbroken \xff\xfe bytes here.\n\n" + b"word " * 400_000 + b"\n\nlast.\n")
    result = run_script("build_pretraining_data", f"--input_files={corpus}", f"--vocab_file={vocab_file}",
                      f"--output_dir={tmp_path / 'out'}", "--max_seq_length=32", "--num_shards=1")
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.count("not valid UTF-8") == 1 and "garbage.txt, line 2" in result.stdout
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["totals"]["documents"] == 3 and manifest["totals"]["examples"] >= 3


def test_streaming_from_text_files(corpus_dir, vocab_file):
    dataset = streaming_dataset(text_documents([str(corpus_dir / "a.txt")]), vocab_file, batch_size=8,
                                seq_length=48)
    for batch in dataset.take(3):
        assert batch["input_ids"].shape == (8, 48) and batch["input_ids"].dtype == tf.int32
        lengths = batch["attention_mask"].numpy().sum(1)
        assert (lengths >= 3).all()
        ids = batch["input_ids"].numpy()
        assert (ids[np.arange(8), 0] == 2).all()  # [CLS] first (the vocabulary's id 2)


def test_streaming_from_tfds_with_mock_data(vocab_file):
    import tensorflow_datasets as tfds

    with tfds.testing.mock_data(num_examples=12):
        dataset = streaming_dataset(tfds_documents("imdb_reviews", "train", "text"), vocab_file, batch_size=4,
                                    seq_length=32, shuffle_buffer_size=0)
        batches = list(dataset.take(2))
        assert all(b["input_ids"].shape == (4, 32) for b in batches)
        with pytest.raises(Exception, match="no 'body' feature"):
            next(iter(streaming_dataset(tfds_documents("imdb_reviews", "train", "body"), vocab_file,
                                        batch_size=4, seq_length=32)))


def test_the_build_prints_the_tokens_read_written_and_dropped(vocab_file, tmp_path, run_tool):
    line = "Every word here counts. " * 40
    corpus = tmp_path / "paragraph.txt"
    corpus.write_text(line + "\n", encoding="utf-8")
    n = len(WordPieceTokenizer(vocab_file).tokenize(line))
    code, out, err = run_tool("build_pretraining_data", f"--input_files={corpus}", f"--vocab_file={vocab_file}",
                              f"--output_dir={tmp_path / 'split'}", "--max_seq_length=32", "--num_shards=1")
    assert code in (0, None), err[-2000:]
    assert f"tokens: {n} read, {n} written (100.0%), 0 dropped\n" in out
    code, out, err = run_tool("build_pretraining_data", f"--input_files={corpus}", f"--vocab_file={vocab_file}",
                              f"--output_dir={tmp_path / 'truncate'}", "--max_seq_length=32", "--num_shards=1",
                              "--long_lines=truncate")
    assert (f"tokens: {n} read, 30 written ({30 / n:.1%}), {n - 30} dropped ({n - 30} line longer than an "
            "example)\n") in out
    manifest = json.loads((tmp_path / "truncate" / "manifest.json").read_text())
    assert manifest["totals"]["tokens_dropped"] == {"line_longer_than_an_example": n - 30}
