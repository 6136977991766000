"""The throughput benchmark runs end to end on a tiny config (our side only: the peer needs torch)."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_pretrain_throughput_runs_on_a_tiny_config(tmp_path):
    results = os.path.join(tmp_path, "figures.json")
    command = [sys.executable, os.path.join(ROOT, "benchmarks", "pretrain_throughput.py"), "--config=electra_tiny",
               "--batch_size=4", "--seq_length=16", "--precisions=fp32", "--objectives=electra,mlm", "--warmup=0",
               "--rounds=2", "--breakdown_rounds=1", "--peer=false", "--memory=false", "--matmul_size=256",
               f"--json={results}"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Throughput (electra_tiny, batch 4, length 16" in run.stdout
    assert "Profile of our fp32 electra step" in run.stdout
    figures = json.load(open(results))
    rows = {(row["objective"], row["model"]): row for row in figures["rows"]}
    assert set(rows) == {("electra", "electra_tf (tf.function)"), ("mlm", "electra_tf (tf.function)")}
    for row in rows.values():
        assert row["s_per_step"] > 0 and row["tokens_per_s"] == 64 / row["s_per_step"]
        assert 0 < row["mfu"] < 1.5
    (breakdown,) = figures["breakdown"]
    assert len(breakdown["parts"]) == 4 and all(part > 0 for part in breakdown["parts"])
    kinds = figures["profiles"][0]["kinds"]
    assert kinds["matmul"] > 0 and "optimizer update (all its ops)" in kinds


def test_ablations_runs_a_study_on_a_tiny_config(tmp_path):
    from electra_tf.data.default_corpus import write_default_corpus

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
