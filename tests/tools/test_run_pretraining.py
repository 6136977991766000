"""tools/run_pretraining.py as users run it: resume, preemption, logs, init, bad input, bf16, multi-worker."""

import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import keras
import numpy as np
import pytest
import tensorflow as tf

from electra_tf.data import tfrecord_dataset
from electra_tf.data.default_corpus import write_default_corpus
from electra_tf.data.pretraining_data import build_pretraining_shards
from electra_tf.export import precision
from electra_tf.pretraining import loop as loop_module
from electra_tf.pretraining import plan as plan_module
from electra_tf.pretraining.pretrainer import ElectraPretrainer
from electra_tf.text.vocabulary import save_vocabulary
from electra_tf.text.vocabulary_learning import build_vocabulary

# As a user runs the tool: without the test session's TF_CPP_MIN_LOG_LEVEL (the tool is quiet by default).
ENV = {name: value for name, value in os.environ.items() if name != "TF_CPP_MIN_LOG_LEVEL"}
SEQ = 32


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pretraining_data")
    corpus, vocab = str(folder / "corpus.txt"), str(folder / "vocab.txt")
    write_default_corpus(corpus, max_documents=200)
    save_vocabulary(build_vocabulary([corpus], 600), vocab)
    build_pretraining_shards([corpus], vocab, str(folder / "shards"), max_seq_length=SEQ, num_shards=4)
    return {"vocab": vocab, "corpus": corpus, "train": str(folder / "shards" / "*-0000[012]-*"),
            "eval": str(folder / "shards" / "*-00003-*")}


def command(data, model_dir, *extra):
    return [sys.executable, "-m", "electra_tf.tools.run_pretraining", "--config=electra_tiny",
            f"--vocab_file={data['vocab']}", f"--train_files={data['train']}", f"--model_dir={model_dir}",
            f"--max_seq_length={SEQ}", "--batch_size=8", "--log_every=4", "--save_every=4", "--eval_every=8",
            "--keep_checkpoints=3", *extra]


@pytest.fixture(scope="module")
def run(children):
    """`run(data, model_dir, *flags)`: the tool's finished child process (a failing test shows its stderr)."""
    return lambda data, model_dir, *extra, env=None: children.run(command(data, model_dir, *extra), env=env or ENV)


def final_weights(model_dir):
    model = keras.saving.load_model(os.path.join(model_dir, "final", "discriminator.keras"), safe_mode=True)
    return [np.asarray(v) for v in model.weights]


@pytest.fixture(scope="module")
def reference_run(data, tmp_path_factory, run):
    model_dir = tmp_path_factory.mktemp("reference") / "run"
    result = run(data, model_dir, "--train_steps=24", f"--eval_files={data['eval']}", "--eval_steps=2")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "done: step 24 of 24" in result.stdout
    return model_dir, result


@pytest.fixture(scope="module")
def reference(reference_run):
    return reference_run[0]


def test_the_console_shows_progress_evaluations_and_schedule_warnings_and_no_library_noise(reference_run):
    _, result = reference_run
    assert "step 8/24 (33%): loss" in result.stdout and "evaluation at step 8: loss" in result.stdout
    assert "warning: warmup_steps=30 is not below train_steps=24: the run ends still warming up" in result.stdout
    for noise in ("oneDNN", "cuInit", "I0000", "ran out of data", "WARNING:"):
        assert noise not in result.stdout + result.stderr, noise


def test_a_finished_run_says_so_and_a_longer_one_states_its_schedule(data, reference, tmp_path, run_tool):
    code, out, err = run_tool("run_pretraining", *command(data, reference, "--train_steps=24")[3:])
    assert code in (0, None), err[-3000:]
    assert f"already complete at step 24 of 24; final models in {reference / 'final'}" in out
    assert "last metrics" not in out
    longer_dir = tmp_path / "longer"
    shutil.copytree(reference, longer_dir)
    code, out, err = run_tool("run_pretraining", *command(data, longer_dir, "--train_steps=28")[3:])
    assert code in (0, None), err[-3000:]
    assert ("train_steps 24 → 28: the learning-rate schedule is now 28 steps long, so at step 24 the rate is"
            in out and "done: step 28 of 28" in out)


def test_shards_of_another_vocabulary_are_refused_before_any_step(data, tmp_path, run):
    words = open(data["vocab"], encoding="utf-8").read().splitlines()
    words[10], words[11] = words[11], words[10]  # same size, other ids
    other = tmp_path / "vocab.txt"
    other.write_text("\n".join(words) + "\n", encoding="utf-8")
    result = run({**data, "vocab": str(other)}, tmp_path / "run", "--train_steps=2")
    assert result.returncode == 2
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert f"--vocab_file={other} (sha256 " in line and "is not the vocabulary the shards in" in line
    assert f"{len(words)} tokens) is not" in line and f", {len(words)} tokens); pass that vocab.txt" in line
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "run" / "checkpoints").exists()


def test_a_glob_over_the_shard_folder_skips_the_builders_manifest(data, tmp_path, run_tool):
    shards = os.path.dirname(data["train"])
    code, out, err = run_tool("run_pretraining", *command({**data, "train": f"{shards}/*"}, tmp_path / "run",
                                                          "--train_steps=2", "--warmup_steps=0")[3:])
    assert code in (0, None), err[-3000:]
    assert "done: step 2 of 2" in out and "warning: warmup" not in out


def test_outputs_checkpoints_and_tensorboard_scalars(reference):
    final = reference / "final"
    for name in ("discriminator.keras", "generator.keras", "run_config.json", "vocab.txt"):
        assert (final / name).exists(), name
    assert not list(final.glob("*.weights.h5")) and not (final / "config.json").exists()  # each network once
    assert tf.train.latest_checkpoint(str(reference / "checkpoints")).endswith("ckpt-24")
    assert len([f for f in os.listdir(reference / "checkpoints") if f.endswith(".index")]) == 3  # kept
    tags = {}
    for event_file in (reference / "logs").iterdir():
        for event in tf.compat.v1.train.summary_iterator(str(event_file)):
            for value in event.summary.value:
                tags.setdefault(value.tag, []).append(event.step)
    for tag in ("loss", "mlm_loss", "rtd_loss", "rtd_auc", "learning_rate", "examples_per_second",
                "tokens_per_second", "train_flops", "val_loss", "val_rtd_accuracy"):
        assert tag in tags, (tag, sorted(tags))
    assert sorted(tags["loss"]) == [4, 8, 12, 16, 20, 24]
    assert sorted(tags["val_loss"]) == [8, 16, 24]


def test_a_killed_run_resumes_to_the_uninterrupted_result(data, reference, tmp_path, run, children):
    model_dir = tmp_path / "killed"
    process = children.start(command(data, model_dir, "--train_steps=24", f"--eval_files={data['eval']}",
                                     "--eval_steps=2"), env=ENV, stdout=subprocess.DEVNULL)
    deadline = time.time() + 300
    while time.time() < deadline and not (model_dir / "checkpoints" / "ckpt-12.index").exists():
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert not (model_dir / "final").exists()
    # What a kill during the next checkpoint's write leaves (TensorFlow writes into `ckpt-N_temp/`, then
    # renames, then updates the `checkpoint` file): partial files that the resumed run must not trust.
    checkpoints = model_dir / "checkpoints"
    last = tf.train.latest_checkpoint(str(checkpoints))
    data_file = f"{last}.data-00000-of-00001"
    partial = open(data_file, "rb").read()[:1000]
    (checkpoints / "ckpt-999_temp").mkdir()
    (checkpoints / "ckpt-999_temp" / "part-00000-of-00001.data-00000-of-00001").write_bytes(partial)
    (checkpoints / "ckpt-999.data-00000-of-00001").write_bytes(partial)
    resumed = run(data, model_dir, "--train_steps=24", f"--eval_files={data['eval']}", "--eval_steps=2")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "resumed from" in resumed.stdout and "done: step 24 of 24" in resumed.stdout
    for a, b in zip(final_weights(reference), final_weights(model_dir)):
        np.testing.assert_allclose(b, a, atol=1e-5)


def test_damaged_tfrecords_are_named_or_skipped(data, tmp_path, run_tool):
    shards = sorted(glob.glob(data["train"]))
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    for shard in glob.glob(os.path.join(os.path.dirname(data["train"]), "*-of-*")):  # a whole set
        shutil.copy(shard, damaged)
    truncated, flipped = (damaged / os.path.basename(s) for s in shards[:2])
    truncated.write_bytes(truncated.read_bytes()[:-7])
    body = bytearray(flipped.read_bytes())
    body[len(body) // 2] ^= 0xFF
    flipped.write_bytes(bytes(body))
    files = f"--train_files={damaged}"
    code, _, err = run_tool("run_pretraining", *command(data, tmp_path / "stopped", "--train_steps=400",
                                                        "--save_every=1000", files)[3:])
    assert code == 2, err[-3000:]
    assert "damaged TFRecords:" in err and str(truncated) in err
    assert str(flipped) in err and "--skip_corrupt_records" in err
    code, out, err = run_tool("run_pretraining", *command(data, tmp_path / "skipped", "--train_steps=40", files,
                                                          "--skip_corrupt_records")[3:])
    assert code in (0, None), err[-3000:]
    assert "--skip_corrupt_records: 2 damaged file(s)" in out and "done: step 40 of 40" in out


@pytest.mark.parametrize("number, said", [(signal.SIGTERM, "preempted"), (signal.SIGINT, "interrupted (Ctrl-C)")])
def test_sigterm_and_ctrl_c_save_and_exit_for_a_later_resume(data, tmp_path, number, said, children):
    model_dir = tmp_path / "preempted"
    process = children.start(command(data, model_dir, "--train_steps=400", "--save_every=1000"), env=ENV,
                             stdout=subprocess.PIPE)
    for line in process.stdout:
        if line.startswith("step 8/"):
            process.send_signal(number)
            break
    output = process.stdout.read()
    assert process.wait(timeout=300) == 75
    assert "Traceback" not in children.stderr_of(process)
    assert f"{said}: saved step" in output
    step = int(output.split(f"{said}: saved step ")[1].split(";")[0])
    assert 8 <= step < 400
    assert tf.train.latest_checkpoint(str(model_dir / "checkpoints")).endswith(f"ckpt-{step}")


def test_init_checkpoint_starts_a_new_schedule_from_the_weights(data, reference, tmp_path, run_tool):
    code, out, err = run_tool("run_pretraining", *command(data, tmp_path / "continued", "--train_steps=2",
                                                          f"--init_checkpoint={reference}")[3:])
    assert code in (0, None), err[-3000:]
    assert "initialised from" in out and "done: step 2 of 2" in out
    before, after = final_weights(reference), final_weights(tmp_path / "continued")
    # Warm-up starts the new schedule at a learning rate near 0: the weights barely move.
    assert max(np.abs(a - b).max() for a, b in zip(before, after)) < 1e-3
    code, _, err = run_tool("run_pretraining", *command(data, tmp_path / "other", "--train_steps=2",
                                                        f"--init_checkpoint={reference}", "--hidden_size=32")[3:])
    assert code == 2 and "has another model config" in err and "'hidden_size': (64, 32)" in err


def test_bad_input_gives_a_clear_error_and_keeps_the_run(data, reference, tmp_path, run, run_tool):
    def refusal(model_dir, *extra):  # in this process: refused before any work
        code, _, err = run_tool("run_pretraining", *command(data, model_dir, *extra)[3:])
        assert code == 2, err[-3000:]
        return err

    assert "no input files match" in refusal(tmp_path / "m", "--train_steps=2", f"--train_files={tmp_path}/nothing-*")
    (tmp_path / "empty.tfrecord").write_bytes(b"")
    assert "hold no records" in refusal(tmp_path / "e", "--train_steps=2", f"--train_files={tmp_path}/empty.tfrecord")
    before = sorted(os.listdir(reference / "checkpoints"))
    assert "holds a run of another config (differing: ['mask_prob'])" in refusal(reference, "--train_steps=30",
                                                                                  "--mask_prob=0.3")
    assert sorted(os.listdir(reference / "checkpoints")) == before
    exploding = run(data, tmp_path / "nan", "--train_steps=20", "--learning_rate=1e30", "--warmup_steps=0",
                    "--save_every=1")
    assert exploding.returncode == 2 and "non-finite" in exploding.stderr
    latest = tf.train.latest_checkpoint(str(tmp_path / "nan" / "checkpoints"))
    if latest is not None:  # whatever was saved holds finite weights only
        for name, _ in tf.train.list_variables(latest):
            if name.startswith("model/") and "OPTIMIZER" not in name and name.endswith("VARIABLE_VALUE"):
                assert np.isfinite(tf.train.load_variable(latest, name)).all(), name


@pytest.mark.parametrize("precision", ["bfloat16", "float16"])
def test_mixed_precision_trains_on_cpu(data, tmp_path, precision, run):
    result = run(data, tmp_path / precision, "--train_steps=8", f"--mixed_precision={precision}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"precision mixed_{precision}" in result.stdout
    metrics = json.loads(result.stdout.split("last metrics ")[1].splitlines()[0])
    assert metrics["loss"] > 0 and all(np.isfinite(v) for v in metrics.values())
    assert all(np.isfinite(w).all() for w in final_weights(tmp_path / precision))


def _free_ports(n):
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def test_two_workers_on_loopback_finish_with_equal_weights(data, tmp_path, children):
    ports = _free_ports(2)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    model_dir = tmp_path / "multi_worker"
    workers = []
    for index in range(2):
        env = {**ENV, "TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": "worker", "index": index}})}
        workers.append(children.start(command(data, model_dir, "--train_steps=6", "--strategy=multi_worker"),
                                      env=env, stdout=subprocess.PIPE))
    outputs = [worker.communicate(timeout=600)[0] for worker in workers]
    for worker, out in zip(workers, outputs):
        assert worker.returncode == 0
        assert "done: step 6 of 6" in out
    chief = final_weights(model_dir)
    other = final_weights(model_dir / ".worker_1")
    initial_moved = False
    for a, b in zip(chief, other):
        np.testing.assert_allclose(b, a, atol=1e-6)
        initial_moved = initial_moved or np.abs(a).max() > 0
    assert initial_moved


def test_streaming_text_files_without_a_dump(data, tmp_path, run_tool):
    flags = [f for f in command(data, tmp_path / "stream", "--train_steps=4") if not f.startswith("--train_files")]
    code, out, err = run_tool("run_pretraining", *flags[3:], f"--train_text_files={data['corpus']}")
    assert code in (0, None), err[-3000:]
    assert "done: step 4 of 4" in out
    code, _, err = run_tool("run_pretraining", *command(data, tmp_path / "both", "--train_steps=4",
                                                        f"--train_text_files={data['corpus']}")[3:])
    assert code == 2 and "exactly one of --train_files" in err


def _scalars(model_dir, tag):
    values = {}
    for event_file in (model_dir / "logs").iterdir():
        for event in tf.compat.v1.train.summary_iterator(str(event_file)):
            values.update({event.step: tf.make_ndarray(v.tensor).item() for v in event.summary.value if v.tag == tag})
    return values


def test_two_stage_resumes_exactly_from_its_switch_over(data, tmp_path, run_tool):
    flags = ("--train_steps=8", "--training_algorithm=two_stage", "--two_stage_generator_steps=4",
             "--generator_hidden_size=1.0", "--whole_word_masking")
    whole = tmp_path / "whole"
    code, _, err = run_tool("run_pretraining", *command(data, whole, *flags)[3:])  # both runs in this process
    assert code in (0, None), err[-3000:]
    # Back to the checkpoint of step 4, taken before the discriminator was set from the generator.
    resumed = tmp_path / "resumed"
    shutil.copytree(whole, resumed)
    shutil.rmtree(resumed / "final")
    for stale in glob.glob(str(resumed / "checkpoints" / "ckpt-8*")):
        os.remove(stale)
    tf.compat.v1.train.update_checkpoint_state(str(resumed / "checkpoints"), str(resumed / "checkpoints" / "ckpt-4"))
    code, out, err = run_tool("run_pretraining", *command(data, resumed, *flags)[3:])
    assert code in (0, None) and "resumed from" in out, err[-3000:]
    for a, b in zip(final_weights(whole), final_weights(resumed)):
        np.testing.assert_allclose(b, a, atol=1e-6)
    # The FLOPs scalar prices each phase apart: the discriminator phase's steps cost more.
    flops = _scalars(whole, "train_flops")
    assert flops[8] - flops[4] > flops[4] > 0


def test_a_unigram_generator_counts_the_shards_once_and_exports_a_discriminator(data, tmp_path, run_tool):
    model_dir = tmp_path / "unigram"
    code, _, err = run_tool("run_pretraining", *command(data, model_dir, "--train_steps=4",
                                                        "--generator_type=unigram")[3:])
    assert code in (0, None), err[-3000:]
    counts = json.loads((model_dir / "unigram_counts.json").read_text())
    assert len(counts) == len(open(data["vocab"]).read().splitlines()) and sum(counts) > 0
    assert (model_dir / "final" / "discriminator.keras").exists()
    assert not (model_dir / "final" / "generator.keras").exists()
    code, _, err = run_tool("run_pretraining", *command(data, tmp_path / "bad", "--train_steps=4",
                                                        "--generator_type=unigram", "--weight_sharing=all")[3:])
    assert code == 2 and "PretrainingConfig.weight_sharing" in err


def _signal_inside(monkeypatch, owner, name, number=signal.SIGINT):
    """Makes `owner.name` raise `number` in this process once, when first called, then do its work."""
    original = getattr(owner, name)

    def wrapped(*args, **kwargs):
        monkeypatch.setattr(owner, name, original)
        signal.raise_signal(number)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapped)


# Where a Ctrl-C lands, as the function it interrupts, and the step then saved. Each moment is one run of
# 2 steps in this process; the signal is raised in this very process, inside that function: no timing race.
_MOMENTS = {
    "start-up": (plan_module, "get_strategy", None, ()),
    "first step": (ElectraPretrainer, "train_step", 1, ()),  # (while it is traced)
    "a save": (tf.train.CheckpointManager, "save", 1, ("--save_every=1",)),
    "evaluation": (ElectraPretrainer, "test_step", 1, ("--eval_every=1", "--eval_steps=1")),
    "the final save": (loop_module, "write_run_folder", 2, ()),
}


@pytest.mark.parametrize("moment", list(_MOMENTS))
def test_ctrl_c_at_any_moment_keeps_finished_work(data, tmp_path, monkeypatch, run_tool, moment):
    owner, name, saved, extra = _MOMENTS[moment]
    _signal_inside(monkeypatch, owner, name)
    model_dir = tmp_path / "run"
    exit_code, out, err = run_tool("run_pretraining", *command(data, model_dir, "--train_steps=2", *extra)[3:],
                                   *([f"--eval_files={data['eval']}"] if moment == "evaluation" else []))
    assert "Traceback" not in err
    if saved is None:  # before any work: nothing to keep
        assert exit_code == 130 and "interrupted: outputs completed before are kept" in err, err[-3000:]
        assert not model_dir.exists()
        return
    assert exit_code == 75 and f"interrupted (Ctrl-C): saved step {saved}" in out, err[-3000:]
    assert tf.train.latest_checkpoint(str(model_dir / "checkpoints")).endswith(f"ckpt-{saved}")
    assert (model_dir / "final" / "run_config.json").exists() == (moment == "the final save")
    assert ("and the final models in" in out) == (moment == "the final save")


def test_the_step_runs_without_grappler_by_default_and_the_setting_is_restored(data, tmp_path, monkeypatch,
                                                                               run_tool):
    seen, original = [], ElectraPretrainer.train_step

    def recording_train_step(self, *args, **kwargs):  # runs while the step is traced, i.e. before Grappler
        seen.append(tf.config.optimizer.get_experimental_options().get("disable_meta_optimizer", False))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(ElectraPretrainer, "train_step", recording_train_step)
    exit_code, out, err = run_tool("run_pretraining", *command(data, tmp_path / "run", "--train_steps=1")[3:])
    assert exit_code == 0, err[-3000:]
    assert seen and set(seen) == {True}  # disable_meta_optimizer (--graph_optimizer turns it back on)
    assert "1 steps, step a TensorFlow graph (Grappler off)" in out  # fp32, too short a run for XLA
    assert not tf.config.optimizer.get_experimental_options().get("disable_meta_optimizer", False)


@pytest.mark.parametrize("source", ["train_files", "train_text_files"])
def test_a_run_reads_its_vocabulary_once(data, tmp_path, monkeypatch, run_tool, source):
    # The tool sizes the model by it, the run checks the shards' vocabulary, builds the pre-trainer, packs
    # streamed text and writes the final vocab.txt: all from the one reading.
    reads, original_open = [], open

    def counting_open(file, *args, **kwargs):
        if file == data["vocab"]:
            reads.append(file)
        return original_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", counting_open)
    tool_flags = [flag for flag in command(data, tmp_path / "run", "--train_steps=1")[3:]
                  if not flag.startswith("--train_files=")]
    source_flag = f"--{source}={data['train'] if source == 'train_files' else data['corpus']}"
    exit_code, out, err = run_tool("run_pretraining", *tool_flags, source_flag)
    assert exit_code == 0 and "done: step 1 of 1" in out, err[-3000:]
    assert len(reads) == 1


def test_a_final_save_killed_in_an_extended_run_is_redone_and_its_temporaries_removed(data, tmp_path, run_tool):
    # What a kill -9 during the final save of a run extended from 2 to 4 steps leaves: the checkpoint of step
    # 4, the old final/ of step 2, and the temporary the kill left (a whole model), of a writer now dead.
    model_dir = tmp_path / "run"
    tool_flags = command(data, model_dir)[3:]
    assert run_tool("run_pretraining", *tool_flags, "--train_steps=2")[0] == 0
    shutil.copytree(model_dir / "final", tmp_path / "final_of_step_2")
    assert run_tool("run_pretraining", *tool_flags, "--train_steps=4")[0] == 0
    current = final_weights(model_dir)
    dead = subprocess.Popen(["true"])
    dead.wait()
    shutil.rmtree(model_dir / "final")
    shutil.copytree(tmp_path / "final_of_step_2", model_dir / "final")
    shutil.copytree(tmp_path / "final_of_step_2", model_dir / f".final.tmp-{dead.pid}")
    exit_code, out, err = run_tool("run_pretraining", *tool_flags, "--train_steps=4")
    assert exit_code == 0 and "already complete at step 4 of 4" in out, err[-3000:]
    assert json.loads((model_dir / "final" / "run_config.json").read_text())["pretraining"]["train_steps"] == 4
    for a, b in zip(current, final_weights(model_dir)):
        np.testing.assert_array_equal(a, b)
    assert sorted(name for name in os.listdir(model_dir) if "final" in name) == ["final"]


@pytest.mark.parametrize("flags, warned", [({"avx512f"}, True), ({"avx512f", "avx512_bf16"}, False)])
def test_bf16_on_a_cpu_that_emulates_it_is_warned_about_in_one_line(data, tmp_path, monkeypatch, run_tool, flags,
                                                                    warned):
    monkeypatch.setattr(precision, "cpu_flags", lambda: frozenset(flags))
    # (nothing to train on: the run stops right after the start-up checks, with the precision left as it was)
    exit_code, out, err = run_tool("run_pretraining", *command(data, tmp_path / "run", "--train_steps=1",
                                                               "--mixed_precision=bfloat16")[3:],
                                   f"--train_files={tmp_path}/nothing-*")
    assert exit_code == 2 and "no input files match" in err, err[-2000:]
    warning = ("warning: --mixed_precision=bfloat16 on a CPU without avx512_bf16 or amx_bf16, which emulates "
               "bfloat16: the steps will be many times slower than in float32 (leave --mixed_precision unset)")
    assert (warning in out) == warned and out.count("warning: --mixed_precision") == warned, out


def test_a_resume_on_other_shards_says_so_in_one_line(data, tmp_path, run_tool):
    model_dir = tmp_path / "run"
    tool_flags = [*command(data, model_dir)[3:], "--warmup_steps=0"]
    assert run_tool("run_pretraining", *tool_flags, "--train_steps=2")[0] == 0
    assert json.loads((model_dir / "train_data.json").read_text())["files"][0][0].endswith("-00000-of-00004")
    moved = tmp_path / "moved"  # the same shards elsewhere (the whole set, of which the same three): the same data
    moved.mkdir()
    for shard in glob.glob(os.path.join(os.path.dirname(data["train"]), "*-of-*")):
        shutil.copy(shard, moved)
    exit_code, out, err = run_tool("run_pretraining", *tool_flags, "--train_steps=3",
                                   f"--train_files={moved}/{os.path.basename(data['train'])}")
    assert exit_code == 0 and "resumed from" in out and "warning:" not in out, err[-3000:]
    exit_code, out, err = run_tool("run_pretraining", *tool_flags, "--train_steps=4", f"--train_files={data['eval']}")
    assert exit_code == 0 and "done: step 4 of 4" in out, err[-3000:]
    (line,) = [line for line in out.splitlines() if line.startswith("warning: ")]
    assert line == (f"warning: {model_dir} began on other training data (train_data.json): 3 of its files are not "
                    "read now (e.g. pretrain_data.tfrecord-00000-of-00004), 1 is new (e.g. "
                    "pretrain_data.tfrecord-00003-of-00004); the run goes on with these, so its data order is not "
                    "the one it began with"), line


def test_a_shard_that_cannot_be_read_during_training_is_named_in_one_line(data, tmp_path, monkeypatch, run_tool):
    shards = tmp_path / "shards"
    shards.mkdir()
    for shard in glob.glob(os.path.join(os.path.dirname(data["train"]), "*-of-*")):  # a whole set
        shutil.copy(shard, shards)
    lost = sorted(shards.iterdir())[-1]
    building = tfrecord_dataset.Shards.dataset

    def losing_a_shard(*args, **kwargs):  # once the run's checks passed, a shard goes (a disk, a mount, a chmod)
        dataset = building(*args, **kwargs)
        if lost.exists():
            lost.unlink()
        return dataset

    monkeypatch.setattr(tfrecord_dataset.Shards, "dataset", losing_a_shard)
    exit_code, out, err = run_tool("run_pretraining", *command(data, tmp_path / "run", "--train_steps=2")[3:],
                                   f"--train_files={shards}")
    assert exit_code == 2, err[-3000:]
    (line,) = err.strip().splitlines()
    assert line.startswith(f"error: {lost} cannot be read while training (") and "Graph execution" not in line, line
    assert line.endswith("; the last checkpoint is kept: make the file readable, or leave it out, then re-run"), line
