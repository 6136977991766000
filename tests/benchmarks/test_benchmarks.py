"""The throughput benchmark runs end to end on a tiny config, its peer in a worker process.

The peer here is the worker's NumPy stand-in (`--peer=stub`): the same pipe and requests as the Hugging Face
peer, without torch. `test_readme_command_in_a_fresh_venv` runs the real peer the README's way (a fresh venv,
`pip install -e .[bench]`); it downloads and installs torch, so it is opt-in: ELECTRA_FRESH_VENV_TEST=1.
"""
import json
import os
import subprocess
import sys
import venv

import pytest

from electra_tf.data.default_corpus import write_default_corpus

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
from peer_worker import PeerProcess, burst  # noqa: E402  (benchmarks/ is no package)
SMOKE = ["--config=electra_tiny", "--batch_size=4", "--seq_length=16", "--precisions=fp32", "--warmup=0",
         "--rounds=2", "--breakdown_rounds=1", "--matmul_size=256"]


def run_benchmark(python, tmp_path, *arguments):
    results = os.path.join(tmp_path, "figures.json")
    command = [python, os.path.join(ROOT, "benchmarks", "pretrain_throughput.py"), *SMOKE, *arguments,
               f"--json={results}"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=1200, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout, json.load(open(results))


def test_pretrain_throughput_runs_on_a_tiny_config(tmp_path):
    stdout, figures = run_benchmark(sys.executable, tmp_path, "--objectives=electra,mlm", "--peer=stub",
                                    "--memory=false")
    assert "Throughput (electra_tiny, batch 4, length 16" in stdout
    assert "Profile of our fp32 electra step" in stdout
    assert not figures["parent_imported_torch"]
    rows = {(row["objective"], row["model"]): row for row in figures["rows"]}
    ours, peer = "electra_tf (tf.function)", "transformers (PyTorch)"
    assert set(rows) == {(objective, model) for objective in ("electra", "mlm") for model in (ours, peer)}
    for row in rows.values():
        assert row["s_per_step"] > 0 and row["tokens_per_s"] == 64 / row["s_per_step"] and row["first_step_s"] > 0
    for objective in ("electra", "mlm"):
        assert 0 < rows[(objective, ours)]["mfu"] < 1.5 and rows[(objective, ours)]["ratio"] > 0
    breakdowns = {b["model"]: b for b in figures["breakdown"]}
    assert all(len(b["parts"]) == 4 and all(part > 0 for part in b["parts"]) for b in breakdowns.values())
    kinds = figures["profiles"][0]["kinds"]
    assert kinds["matmul"] > 0 and "optimizer update (all its ops)" in kinds
    (graph,) = figures["graphs"]  # the electra step's first-step phases and the fusions that fired
    assert graph["phases"]["trace"] > 0 and graph["phases"]["optimise"] > 0
    assert graph["fusions"]["_FusedMatMul"] > 0


@pytest.mark.skipif(os.environ.get("ELECTRA_FRESH_VENV_TEST") != "1",
                    reason="installs torch and transformers into a fresh venv (set ELECTRA_FRESH_VENV_TEST=1)")
def test_readme_command_in_a_fresh_venv(tmp_path):
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=True)
    python = str(environment / "bin" / "python")
    install = subprocess.run([python, "-m", "pip", "install", "--quiet", "-e", f"{ROOT}[bench]"],
                             capture_output=True, text=True, timeout=3600)
    assert install.returncode == 0, install.stderr[-3000:]
    stdout, figures = run_benchmark(python, tmp_path, "--objectives=electra", "--peer=hf", "--memory=true",
                                    "--graph=false", "--profile=false")
    assert "peer (own process): torch" in stdout and not figures["parent_imported_torch"]
    assert {row["model"] for row in figures["rows"]} == {"electra_tf (tf.function)", "transformers (PyTorch)"}
    assert all(row.get("peak_mb") for row in figures["rows"])


def test_ablations_runs_a_study_on_a_tiny_config(tmp_path):
    corpus = tmp_path / "corpus.txt"
    write_default_corpus(str(corpus), max_documents=60)
    rows = [{"text": f"Return the {word} of the items.", "label": "function"} for word in ("sum", "size", "list")]
    rows = 7 * (rows + [{"text": f"A {word} of items.", "label": "class"} for word in ("set", "bag", "map")])
    for split in ("train", "dev"):
        (tmp_path / f"{split}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    command = [sys.executable, os.path.join(ROOT, "benchmarks", "ablations.py"), "--study=efficiency", "--steps=2",
               "--seeds=1", "--hidden_size=32", "--num_layers=1", "--embedding_size=16", "--seq_length=32",
               "--batch_size=4", "--vocab_size=300", f"--corpus_files={corpus}", f"--output_dir={tmp_path / 'out'}",
               f"--train_file={tmp_path / 'train.jsonl'}", f"--dev_file={tmp_path / 'dev.jsonl'}", "--noplot",
               "--variants=ELECTRA 15%,All-Tokens MLM"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    results = json.load(open(tmp_path / "out" / "efficiency" / "results.json"))
    labels = [r["label"] for r in results["runs"]]
    assert labels == ["ELECTRA 15%", "All-Tokens MLM"]
    flops = [r["flops"] for r in results["runs"]]
    assert max(flops) / min(flops) < 1.5  # equal FLOPs, to a step at this size
    cost = [r["flops"] / r["step"] for r in results["runs"]]
    assert cost[1] > cost[0]  # All-Tokens MLM predicts every token: it costs more per step
    assert all(0 <= r["median"] <= 1 for r in results["runs"])
    assert "| All-Tokens MLM |" in run.stdout and "paper GLUE" in run.stdout


def test_finetune_throughput_times_both_paddings_and_the_peer_step_by_step(tmp_path):
    results, texts = tmp_path / "figures.json", tmp_path / "texts.csv"
    words = "the cat sat on a mat while two red dogs ran far away".split()
    texts.write_text("text\n" + "".join(" ".join(words[: 3 + i % 10]) + "\n" for i in range(64)))
    command = [sys.executable, os.path.join(ROOT, "benchmarks", "finetune_throughput.py"), "--models=electra_tiny:4",
               "--max_seq_length=32", "--steps=3", "--warmup=2", "--peer=stub", "--vocab_size=100",
               f"--train_file={texts}", f"--json={results}"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    rows = {row["model"]: row for row in json.load(open(results))["rows"]}
    assert set(rows) == {"electra_tf (length-aware)", "electra_tf (padded to max)", "transformers (dynamic padding)"}
    assert rows["transformers (dynamic padding)"]["steps"] == 6  # one peer step after each timed step of ours
    for name in ("electra_tf (length-aware)", "electra_tf (padded to max)"):
        assert rows[name]["steps"] == 3 and rows[name]["speed_vs_peer"] > 0 and rows[name]["first_step_s"] > 0
    assert "speed vs peer" in run.stdout


def test_serving_compares_both_paddings_with_the_peer_on_texts_of_each_length(tmp_path, fixture_vocab):
    results = tmp_path / "figures.json"
    command = [sys.executable, os.path.join(ROOT, "benchmarks", "serving.py"), "--config=electra_tiny",
               "--batch_sizes=1,4", "--lengths=8,32", "--max_seq_length=32", "--seconds=0.1", "--peer_seconds=0.1",
               "--peer=stub", f"--vocab={fixture_vocab}", "--nobreakdown", "--low_precision=int8,litert_int8",
               f"--json={results}", "--graph_repeats=3", "--threads=1", "--runtimes=ort_int8"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    rows = json.load(open(results))["rows"]
    cells = {(row["batch_size"], row["tokens"]) for row in rows}
    assert cells == {(1, 8), (1, 32), (4, 8), (4, 32)}
    assert {row["path"] for row in rows} == {"export, padded to longest", "export, padded to 32",
                                             "export, weights as variables", "export, compiled (XLA)",
                                             "export, int8", "export, LiteRT int8",
                                             "Python: model.predict (raw text)", "Python: pipeline",
                                             "Python: pipeline, compile=True",
                                             "floor: projection matmuls (graph)", "floor: projection matmuls (XLA)",
                                             "transformers (tokenizer + model)", "peer: ort_int8"}
    tokenizer_rows = json.load(open(results))["tokenizer_rows"]
    assert {row["batch_size"] for row in tokenizer_rows} == {1, 4} and len(tokenizer_rows) == 14
    assert {"ours now: fused WordPiece, in-graph", "ours before: string-op rules, in-graph"} <= {
        row["path"] for row in tokenizer_rows}
    assert "HF tokenizers (Rust)" in run.stdout and "CPU: " in run.stdout and "threads per op: 1" in run.stdout
    assert all(row["p50_ms"] > 0 and row["texts_per_s"] > 0 for row in rows)
    assert all(row["text_tokens"] == row["tokens"] for row in rows)  # texts of exactly that many tokens
    assert "vs best" in run.stdout and "started peer: ort_int8" in run.stdout



def test_every_path_is_timed_in_bursts_as_it_runs_alone():
    """`peer_worker.burst`: calls back to back, the first untimed; a peer worker answers `burst` so in its process."""
    calls = []
    times = burst(lambda: calls.append(1), 0.01)
    assert len(times) >= 3 and len(calls) == len(times) + 1 and all(time >= 0 for time in times)
    worker = PeerProcess("stub")
    try:
        worker.call("init", role="serving", texts=["a film"])
        times = worker.call("burst", seconds=0.05, texts=["a gripping film"])["times"]
        assert len(times) >= 3 and all(time > 0 for time in times)
    finally:
        worker.close()


def test_serving_levers_report_each_a_b_per_cell(tmp_path, fixture_vocab):
    results = tmp_path / "levers.json"
    command = [sys.executable, os.path.join(ROOT, "benchmarks", "serving_levers.py"), "--config=electra_tiny",
               "--levers=biases,threads,litert", "--batch_sizes=1", "--lengths=8,16", "--max_seq_length=16",
               "--seconds=0.05", "--rounds=1", f"--vocab={fixture_vocab}", f"--json={results}"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    rows = json.load(open(results))["rows"]
    variants = {(row["lever"], row["variant"]) for row in rows}
    assert {lever for lever, _ in variants} == {"biases", "threads", "litert"} and len(variants) == 7
    assert {row["cell"] for row in rows} == {"1 x 8", "1 x 16"}
    assert all(row["p50_ms"] > 0 for row in rows)
    firsts = [row for row in rows if row["variant"] in ("all biases zero (random init)", "threads per op: default")]
    assert firsts and all(row["speedup"] == 1.0 for row in firsts)
    assert "speed-up over" in run.stdout
