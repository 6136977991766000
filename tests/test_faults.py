"""Faults: a full disk while writing shards or checkpoints, kill -9 during fine-tuning. Nothing is lost.

A full disk is simulated with a file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored) on the tool's process: its
writes fail mid-file with EFBIG, the same failing-write path as ENOSPC, without needing a mount.
"""

import glob
import os
import resource
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

from electra_tf.data.default_corpus import write_default_corpus
from electra_tf.data.tfrecord import find_corrupt_records
from electra_tf.tokenization import build_vocabulary
from electra_tf.vocabulary import save_vocabulary

ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}


def tool(name, *arguments, max_file_bytes=None):
    def limit_file_size():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))

    return subprocess.run([sys.executable, "-m", f"electra_tf.tools.{name}", *arguments], capture_output=True,
                          text=True, timeout=600, env=ENV, preexec_fn=limit_file_size if max_file_bytes else None)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("faults")
    write_default_corpus(str(folder / "corpus.txt"), max_documents=600)
    save_vocabulary(build_vocabulary([str(folder / "corpus.txt")], 600), str(folder / "vocab.txt"))
    return folder


def no_temporary_files(folder):
    return [p for p in glob.glob(f"{folder}/**/*", recursive=True) if ".tmp-" in p or p.endswith("_temp")]


def test_full_disk_while_writing_shards_keeps_what_was_complete_and_a_rerun_finishes(corpus, tmp_path):
    arguments = [f"--input_files={corpus / 'corpus.txt'}", f"--vocab_file={corpus / 'vocab.txt'}",
                 "--max_seq_length=64", "--num_shards=4"]
    full = tool("build_pretraining_data", *arguments, f"--output_dir={tmp_path / 'shards'}",
                max_file_bytes=60_000)
    assert full.returncode == 74, full.stderr[-2000:]
    assert "error: a write failed (" in full.stderr and "re-run the same command" in full.stderr
    assert no_temporary_files(tmp_path / "shards") == []
    assert find_corrupt_records(glob.glob(str(tmp_path / "shards" / "*tfrecord*"))) == []
    again = tool("build_pretraining_data", *arguments, f"--output_dir={tmp_path / 'shards'}")
    assert again.returncode == 0, again.stderr[-2000:]
    clean = tool("build_pretraining_data", *arguments, f"--output_dir={tmp_path / 'clean'}")
    assert clean.returncode == 0, clean.stderr[-2000:]
    for path in sorted(glob.glob(str(tmp_path / "clean" / "*tfrecord*"))):
        with open(path, "rb") as a, open(tmp_path / "shards" / os.path.basename(path), "rb") as b:
            assert a.read() == b.read(), path


def test_full_disk_while_writing_a_checkpoint_keeps_the_last_good_one(corpus, tmp_path):
    shards = tool("build_pretraining_data", f"--input_files={corpus / 'corpus.txt'}",
                  f"--vocab_file={corpus / 'vocab.txt'}", f"--output_dir={tmp_path / 'shards'}",
                  "--max_seq_length=32", "--num_shards=2")
    assert shards.returncode == 0, shards.stderr[-2000:]
    model_dir = tmp_path / "run"
    arguments = ["--config=electra_tiny", f"--vocab_file={corpus / 'vocab.txt'}", f"--model_dir={model_dir}",
                 f"--train_files={tmp_path / 'shards'}", "--max_seq_length=32", "--batch_size=8", "--save_every=4",
                 "--log_every=4"]
    first = tool("run_pretraining", *arguments, "--train_steps=4")
    assert first.returncode == 0, first.stderr[-2000:]
    checkpoint_bytes = os.path.getsize(glob.glob(str(model_dir / "checkpoints" / "ckpt-4.data-*"))[0])
    full = tool("run_pretraining", *arguments, "--train_steps=8", max_file_bytes=checkpoint_bytes // 2)
    assert full.returncode == 74, full.stderr[-2000:]
    assert "error: a write failed (" in full.stderr
    latest = tf.train.latest_checkpoint(str(model_dir / "checkpoints"))
    assert latest.endswith("ckpt-4")
    assert all(np.isfinite(tf.train.load_variable(latest, name)).all()
               for name, _ in tf.train.list_variables(latest) if name.startswith("model/"))
    again = tool("run_pretraining", *arguments, "--train_steps=8")
    assert again.returncode == 0, again.stderr[-2000:]
    assert "resumed from" in again.stdout and "done: step 8 of 8" in again.stdout


def test_killed_fine_tuning_is_finished_by_the_same_command(tiny_pretrained_dir, tmp_path):
    rng = np.random.default_rng(0)
    (tmp_path / "SST-2").mkdir()
    for split, n in (("train", 48), ("dev", 16)):
        rows = ["sentence\tlabel"] + [f"{' '.join(rng.choice(['a', 'good', 'bad', 'film'], 5))}\t{i % 2}"
                                      for i in range(n)]
        (tmp_path / "SST-2" / f"{split}.tsv").write_text("\n".join(rows) + "\n")
    (tmp_path / "SST-2" / "test.tsv").write_text("index\tsentence\n0\ta good film\n")
    output = tmp_path / "out"
    command = [sys.executable, "-m", "electra_tf.tools.run_finetuning", "--task=sst2", f"--data_dir={tmp_path}",
               f"--init_checkpoint={tiny_pretrained_dir}", f"--output_dir={output}", "--num_trials=2",
               "--epochs=20", "--batch_size=8", "--max_seq_length=16"]
    process = subprocess.Popen(command, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while time.time() < deadline and not (output / "trial_0" / "results.json").exists():
        time.sleep(0.05)
    time.sleep(1.0)  # into the second trial's training
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert not (output / "results.json").exists()
    finished = subprocess.run(command, capture_output=True, text=True, timeout=600, env=ENV)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert "trial 0: done before, kept" in finished.stdout
    assert (output / "results.json").exists() and (output / "trial_1" / "SST-2.tsv").exists()
    assert no_temporary_files(output) == []
