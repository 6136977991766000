"""Faults: a full disk while writing shards, checkpoints or converted models, kill -9 during fine-tuning or
while a folder is replaced, two runs on one folder. Nothing is lost, nothing is half-written.

A full disk is simulated with a file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored) on the tool's process: its
writes fail mid-file with EFBIG, the same failing-write path as ENOSPC, without needing a mount.
"""

import errno
import glob
import os
import random
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from electra_tf import ElectraDiscriminator, PretrainingConfig
from electra_tf.util import atomic
from electra_tf.util import folder_lock
from electra_tf.checkpoints import hf, ours
from electra_tf.data import tfrecord
from electra_tf.data.default_corpus import write_default_corpus
from electra_tf.data.packing import Example
from electra_tf.data.tfrecord import ShardWriter, find_corrupt_records
from electra_tf.text.vocabulary import save_vocabulary
from electra_tf.text.vocabulary_learning import build_vocabulary

ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}


@pytest.fixture(scope="session")
def tool(children):
    """`tool(name, *arguments, max_file_bytes=None)`: the finished child process of `tools/<name>.py`,
    its files limited to `max_file_bytes` when given (a failing test shows its stderr)."""

    def run(name, *arguments, max_file_bytes=None):
        def limit_file_size():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))

        return children.run([sys.executable, "-m", f"electra_tf.tools.{name}", *arguments], env=ENV,
                            preexec_fn=limit_file_size if max_file_bytes else None)

    return run


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("faults")
    write_default_corpus(str(folder / "corpus.txt"), max_documents=600)
    save_vocabulary(build_vocabulary([str(folder / "corpus.txt")], 600), str(folder / "vocab.txt"))
    return folder


def no_temporary_files(folder):
    return [p for p in glob.glob(f"{folder}/**/*", recursive=True) if ".tmp-" in p or p.endswith("_temp")]


def test_full_disk_while_writing_shards_keeps_what_was_complete_and_a_rerun_finishes(corpus, tmp_path, tool,
                                                                                     run_tool):
    arguments = [f"--input_files={corpus / 'corpus.txt'}", f"--vocab_file={corpus / 'vocab.txt'}",
                 "--max_seq_length=64", "--num_shards=4"]
    full = tool("build_pretraining_data", *arguments, f"--output_dir={tmp_path / 'shards'}",
                max_file_bytes=60_000)
    assert full.returncode == 74, full.stderr[-2000:]
    assert "error: a write failed (" in full.stderr and "re-run the same command" in full.stderr
    assert no_temporary_files(tmp_path / "shards") == []
    assert find_corrupt_records(glob.glob(str(tmp_path / "shards" / "*tfrecord*"))) == []
    # The re-run, and a clean build to compare with, in this process (only the full disk needs a child).
    code, _, err = run_tool("build_pretraining_data", *arguments, f"--output_dir={tmp_path / 'shards'}")
    assert code in (0, None), err[-2000:]
    code, _, err = run_tool("build_pretraining_data", *arguments, f"--output_dir={tmp_path / 'clean'}")
    assert code in (0, None), err[-2000:]
    for path in sorted(glob.glob(str(tmp_path / "clean" / "*tfrecord*"))):
        with open(path, "rb") as a, open(tmp_path / "shards" / os.path.basename(path), "rb") as b:
            assert a.read() == b.read(), path


def test_a_shard_whose_last_flush_fails_leaves_no_temporary_file_to_hold_the_space(tmp_path, monkeypatch):
    class FullDiskOnClose(tf.io.TFRecordWriter):  # the disk fills as the last buffer is flushed
        def close(self):
            super().close()
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(tfrecord.tf.io, "TFRecordWriter", FullDiskOnClose)
    path = tmp_path / "pretrain_data.tfrecord-00000-of-00001"
    with pytest.raises(OSError, match="No space left"), ShardWriter(str(path)) as writer:
        writer.write(Example(input_ids=[2, 3], input_mask=[1, 1], segment_ids=[0, 0]))
    assert os.listdir(tmp_path) == []


def test_full_disk_while_writing_a_checkpoint_keeps_the_last_good_one(corpus, tmp_path, tool, run_tool):
    code, _, err = run_tool("build_pretraining_data", f"--input_files={corpus / 'corpus.txt'}",
                            f"--vocab_file={corpus / 'vocab.txt'}", f"--output_dir={tmp_path / 'shards'}",
                            "--max_seq_length=32", "--num_shards=2")
    assert code in (0, None), err[-2000:]
    model_dir = tmp_path / "run"
    arguments = ["--config=electra_tiny", f"--vocab_file={corpus / 'vocab.txt'}", f"--model_dir={model_dir}",
                 f"--train_files={tmp_path / 'shards'}", "--max_seq_length=32", "--batch_size=8", "--save_every=4",
                 "--log_every=4"]
    code, _, err = run_tool("run_pretraining", *arguments, "--train_steps=4")  # (only the full disk needs a child)
    assert code in (0, None), err[-2000:]
    checkpoint_bytes = os.path.getsize(glob.glob(str(model_dir / "checkpoints" / "ckpt-4.data-*"))[0])
    full = tool("run_pretraining", *arguments, "--train_steps=8", max_file_bytes=checkpoint_bytes // 2)
    assert full.returncode == 74, full.stderr[-2000:]
    assert "error: a write failed (" in full.stderr
    latest = tf.train.latest_checkpoint(str(model_dir / "checkpoints"))
    assert latest.endswith("ckpt-4")
    assert all(np.isfinite(tf.train.load_variable(latest, name)).all()
               for name, _ in tf.train.list_variables(latest) if name.startswith("model/"))
    code, out, err = run_tool("run_pretraining", *arguments, "--train_steps=8")
    assert code in (0, None), err[-2000:]
    assert "resumed from" in out and "done: step 8 of 8" in out


def test_killed_fine_tuning_is_finished_by_the_same_command(tiny_pretrained_dir, tmp_path, children):
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
    process = children.start(command, env=ENV, stdout=subprocess.DEVNULL)
    deadline = time.time() + 300
    while time.time() < deadline and not (output / "trial_0" / "results.json").exists():
        time.sleep(0.05)
    time.sleep(1.0)  # into the second trial's training
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert not (output / "results.json").exists()
    finished = children.run(command, env=ENV)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert "trial 0: done before, kept" in finished.stdout
    assert (output / "results.json").exists() and (output / "trial_1" / "SST-2.tsv").exists()
    assert no_temporary_files(output) == []


# A tiny child that holds the locks of the folders given, loading only `folder_lock.py` (no TensorFlow).
_HOLD_LOCKS = """
import importlib.util, sys, time
spec = importlib.util.spec_from_file_location("folder_lock", sys.argv[1])
folder_lock = importlib.util.module_from_spec(spec)
spec.loader.exec_module(folder_lock)
for folder in sys.argv[2:]:
    folder_lock.lock_folder(folder)
print("locked", flush=True)
time.sleep(600)
"""


def test_a_folder_another_run_writes_is_refused_naming_its_pid_and_a_dead_runs_lock_is_taken_over(
        corpus, tiny_pretrained_dir, tmp_path, children, run_tool, refused):
    folders = {"run_pretraining": tmp_path / "run", "run_finetuning": tmp_path / "sst2",
               "export_model": tmp_path / "exports" / "sst2", "convert_checkpoint": tmp_path / "converted"}
    holder = children.start([sys.executable, "-c", _HOLD_LOCKS, folder_lock.__file__, *map(str, folders.values())],
                            stdout=subprocess.PIPE)
    assert holder.stdout.readline() == "locked\n"
    arguments = {
        "run_pretraining": ["--config=electra_tiny", f"--vocab_file={corpus / 'vocab.txt'}", "--train_steps=2",
                            f"--train_text_files={corpus / 'corpus.txt'}", f"--model_dir={folders['run_pretraining']}"],
        "run_finetuning": ["--task=sst2", f"--init_checkpoint={tiny_pretrained_dir}", f"--data_dir={tmp_path}",
                           f"--output_dir={folders['run_finetuning']}"],
        "export_model": [f"--model={tiny_pretrained_dir}", f"--export_dir={tmp_path / 'exports'}", "--model_name=sst2"],
        "convert_checkpoint": [f"--input={tiny_pretrained_dir}", "--to=huggingface",
                               f"--output={folders['convert_checkpoint']}"],
    }
    for name, folder in folders.items():
        result = run_tool(name, *arguments[name])
        refused(result, f"{folder} is being written by another run (pid {holder.pid}, since ")
        assert len(result[2].strip().splitlines()) == 1 and not folder.exists(), name
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    assert folder_lock.holder(folders["run_finetuning"])["pid"] == holder.pid  # its lock file stays behind
    with folder_lock.lock_folder(folders["run_finetuning"]):  # and is taken over
        assert folder_lock.holder(folders["run_finetuning"])["pid"] == os.getpid()
    assert not os.path.exists(folder_lock.lock_path(folders["run_finetuning"]))


# A child that replaces a folder of five files over and over, each time with its iteration number in all five.
_REPLACE_FOREVER = """
import importlib.util, os, sys
spec = importlib.util.spec_from_file_location("atomic", sys.argv[1])
atomic = importlib.util.module_from_spec(spec)
spec.loader.exec_module(atomic)
print("ready", flush=True)
for i in range(1, 10**9):
    with atomic.atomic_folder(sys.argv[2]) as tmp:
        for name in "abcde":
            with open(os.path.join(tmp, name), "w") as f:
                f.write(str(i) * 2000)
"""


def test_kill_9_while_a_folder_is_replaced_leaves_the_old_or_the_new_one_whole(tmp_path, children):
    folder = tmp_path / "model"
    with atomic.atomic_folder(folder) as tmp:
        for name in "abcde":
            (Path(tmp) / name).write_text("0" * 2000)
    process = children.start([sys.executable, "-c", _REPLACE_FOREVER, atomic.__file__, str(folder)],
                             stdout=subprocess.PIPE, env=ENV)
    assert process.stdout.readline() == "ready\n"
    time.sleep(random.uniform(0.2, 0.6))
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    contents = {path.name: path.read_text() for path in folder.iterdir()}
    assert sorted(contents) == list("abcde") and len(set(contents.values())) == 1, contents
    atomic.remove_leftovers(folder)  # what the next writer of the folder does first
    assert sorted(os.listdir(tmp_path)) == ["model"]


def test_a_crash_between_the_two_renames_of_a_replacement_gives_the_old_folder_back(tmp_path):
    # Where renameat2 cannot swap, the old folder is renamed aside and the new one in: a crash in between
    # leaves both aside. The next writer (or `remove_leftovers`) puts the old one back and drops the new one.
    dead = subprocess.Popen(["true"])
    dead.wait()
    (tmp_path / f".model.old-{dead.pid}").mkdir()
    (tmp_path / f".model.old-{dead.pid}" / "weights").write_text("old, whole")
    (tmp_path / f".model.tmp-{dead.pid}").mkdir()
    (tmp_path / f"model.tmp-{dead.pid}").write_text("a file's leftover")
    atomic.remove_leftovers(tmp_path / "model")
    assert sorted(os.listdir(tmp_path)) == ["model"]
    assert (tmp_path / "model" / "weights").read_text() == "old, whole"


def test_full_disk_while_converting_exits_74_and_leaves_no_half_folder(tool, tmp_path, fixtures_dir, run_tool):
    arguments = [f"--input={fixtures_dir / 'hf' / 'discriminator'}", "--to=huggingface", f"--output={tmp_path / 'hf'}"]
    full = tool("convert_checkpoint", *arguments, max_file_bytes=20_000)
    assert full.returncode == 74, full.stderr[-2000:]
    assert "error: a write failed (" in full.stderr and "Traceback" not in full.stderr
    assert os.listdir(tmp_path) == []
    code, _, err = run_tool("convert_checkpoint", *arguments)  # the re-run, in this process
    assert code in (0, None) and sorted(os.listdir(tmp_path)) == ["hf"], err[-2000:]


def _no_space(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def _contents(folder):
    return {path.name: path.read_bytes() for path in sorted(Path(folder).iterdir())}


def test_a_model_or_run_folder_save_that_fails_midway_keeps_the_folder_it_would_replace(
        tmp_path, tiny_config, monkeypatch):
    # What fine-tuning's trial_<i>/model, pre-training's final/ and conversions write: whole or not at all.
    model_folder, run_folder = tmp_path / "model", tmp_path / "final"
    ElectraDiscriminator(tiny_config).save_pretrained(model_folder)
    ours.write_run_folder(run_folder, {"discriminator": ElectraDiscriminator(tiny_config)}, tiny_config,
                          PretrainingConfig())
    before = _contents(model_folder), _contents(run_folder)
    monkeypatch.setattr(hf, "save_huggingface", _no_space)  # after model.keras and the tokenizer files
    with pytest.raises(OSError, match="No space left"):
        ElectraDiscriminator(tiny_config).save_pretrained(model_folder)
    monkeypatch.setattr(ours, "save_run_config", _no_space)  # after the networks
    with pytest.raises(OSError, match="No space left"):
        ours.write_run_folder(run_folder, {"discriminator": ElectraDiscriminator(tiny_config)}, tiny_config,
                              PretrainingConfig())
    assert (_contents(model_folder), _contents(run_folder)) == before
    assert sorted(os.listdir(tmp_path)) == ["final", "model"]
