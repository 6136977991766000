"""tools/run_finetuning.py as users run it: trials and their median, GLUE files, resume, bad input."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

# As a user runs the tool: without the test session's TF_CPP_MIN_LOG_LEVEL (the tool is quiet by default).
ENV = {name: value for name, value in os.environ.items() if name != "TF_CPP_MIN_LOG_LEVEL"}
WORDS = ["red", "blue", "green", "cat", "dog", "house", "tree", "car", "book", "river"]


def run(*arguments):
    return subprocess.run([sys.executable, "-m", "electra_tf.tools.run_finetuning", *arguments],
                          capture_output=True, text=True, timeout=600, env=ENV)


@pytest.fixture(scope="module")
def rte_dir(tmp_path_factory):
    """RTE-shaped TSV files: entailment when both sentences share their first word."""
    folder = tmp_path_factory.mktemp("glue") / "RTE"
    folder.mkdir()
    rng = np.random.default_rng(0)
    for split, n in (("train", 64), ("dev", 16), ("test", 8)):
        rows = ["index\tsentence1\tsentence2" + ("" if split == "test" else "\tlabel")]
        for i in range(n):
            first, second = rng.choice(WORDS, 3), rng.choice(WORDS, 3)
            if i % 2:
                second[0] = first[0] = "zebra"
            label = "" if split == "test" else ["not_entailment", "entailment"][i % 2]
            rows.append("\t".join([str(i), " ".join(first), " ".join(second)] + ([label] if label else [])))
        (folder / f"{split}.tsv").write_text("\n".join(rows) + "\n")
    return str(folder.parent)


def test_trials_report_the_median_and_a_rerun_resumes(rte_dir, tiny_pretrained_dir, tmp_path, run_tool):
    output = tmp_path / "rte"
    arguments = ["--task=rte", f"--data_dir={rte_dir}", f"--init_checkpoint={tiny_pretrained_dir}",
                 f"--output_dir={output}", "--num_trials=2", "--epochs=3", "--batch_size=8", "--max_seq_length=16",
                 "--learning_rate=3e-3"]
    result = run(*arguments)
    assert result.returncode == 0, result.stderr[-3000:]
    results = json.loads((output / "results.json").read_text())
    trials = results["dev"]["dev"]["accuracy"]["trials"]
    assert len(trials) == 2 and results["dev"]["dev"]["accuracy"]["median"] == pytest.approx(np.median(trials))
    assert results["config"]["epochs"] == 3.0 and results["model_size"] == "custom"  # a tiny model: no paper size
    assert results["model_shape"] == {"hidden_size": 32, "num_layers": 2, "embedding_size": 16}
    # Only what no flag set is a default: the layer-wise decay here.
    assert results["defaults"] == {"layerwise_lr_decay": {"value": 0.8, "reason": "the paper's: 0.9 for Large"}}
    for trial in (0, 1):
        trial_results = json.loads((output / f"trial_{trial}" / "results.json").read_text())
        assert trial_results["seed"] == trial
        submission = (output / f"trial_{trial}" / "RTE.tsv").read_text().splitlines()
        assert submission[0] == "index\tprediction" and len(submission) == 9
        assert trial_results["label_names"] == ["entailment", "not_entailment"]
        assert (output / f"trial_{trial}" / "model" / "model.safetensors").exists()
        assert trial_results["dev_majority_class"] == 0.5
    # The run shows its progress and dev scores, and writes TensorBoard logs and self-describing model folders.
    assert "fine-tuning rte: 64 examples, 3 epoch(s) of 8 steps of 8, 24 steps in all, learning rate 0.003" \
        in result.stdout
    assert "(majority class 0.5000)" in result.stdout and "(dev majority class 0.5000)" in result.stdout
    assert results["dev_majority_class"] == 0.5 and "note: head=" not in result.stdout
    assert "step 24/24 (100%) · loss " in result.stdout and " examples/s · 0:00 left" in result.stdout
    for step, epoch in ((8, 1), (16, 2), (24, 3)):
        assert f"dev at step {step} (epoch {epoch}): accuracy " in result.stdout
    assert "I0000" not in result.stderr and "oneDNN" not in result.stderr
    history = json.loads((output / "trial_0" / "results.json").read_text())["dev_history"]
    assert [entry["step"] for entry in history] == [8, 16, 24]
    assert any(name.startswith("events.out.tfevents") for name in os.listdir(output / "trial_0" / "logs"))
    model_folder = output / "trial_0" / "model"
    info = json.loads((model_folder / "electra_tf.json").read_text())
    assert info["label_names"] == ["entailment", "not_entailment"] and info["text_pair"] is True
    assert info["max_seq_length"] == 16 and info["serving_task"] == "classification" and info["task"] == "rte"
    # The default head is Hugging Face's: the folder is one transformers loads, the weights in it once.
    assert set(os.listdir(model_folder)) == {"vocab.txt", "tokenizer_config.json", "config.json", "model.safetensors",
                                             "electra_tf.json", "README.md"}
    card = (model_folder / "README.md").read_text()  # the model card: its scores and the command that made it
    assert "pipeline_tag: text-classification" in card and "| dev | accuracy |" in card
    assert "electra-finetune --" in card and "--task=rte" in card
    hf_config = json.loads((model_folder / "config.json").read_text())
    assert hf_config["architectures"] == ["ElectraForSequenceClassification"]
    assert hf_config["id2label"] == {"0": "entailment", "1": "not_entailment"}
    code, _, err = run_tool("export_model", f"--model={model_folder}", f"--export_dir={tmp_path / 'exports'}",
                            "--model_name=rte")
    assert code in (0, None), err[-3000:]
    serving = json.loads((tmp_path / "exports" / "rte" / "1" / "assets.extra" / "export_info.json").read_text())
    assert serving["label_names"] == ["entailment", "not_entailment"] and serving["max_seq_length"] == 16
    assert serving["text_inputs"] == ["text", "text_pair"]
    # An interrupted run is re-run with the same command: finished trials are kept, not trained again.
    (output / "trial_1" / "results.json").unlink()
    code, out, err = run_tool("run_finetuning", *arguments)
    assert code == 0, err[-3000:]
    assert "trial 0: done before, kept" in out and "trial 1: done before" not in out


def test_bad_input_exits_with_a_clear_error(rte_dir, tiny_pretrained_dir, tmp_path, run_tool, refused):
    bad = tmp_path / "RTE"
    bad.mkdir()
    (bad / "train.tsv").write_text("index\tsentence1\tsentence2\tlabel\n0\ta b\tc d\tperhaps\n")
    common = [f"--init_checkpoint={tiny_pretrained_dir}", f"--output_dir={tmp_path / 'out'}"]
    code, _, err = run_tool("run_finetuning", "--task=rte", f"--data_dir={tmp_path}", *common)
    assert code == 2 and "labels ['perhaps'] are not in the declared set" in err
    code, _, err = run_tool("run_finetuning", "--task=glu", f"--data_dir={rte_dir}", *common)
    assert code == 2 and "unknown task 'glu'; the tasks are:" in err
    refused(run_tool("run_finetuning", "--task=rte", f"--data_dir={rte_dir}", "--init_checkpoint=/no/such/model",
                     f"--output_dir={tmp_path / 'out'}"), "/no/such/model: does not exist")


def test_a_labelled_test_file_is_scored_and_reported_like_dev(tiny_pretrained_dir, tmp_path, run_tool):
    rows = {"train": 16, "dev": 8, "test": 8}
    for split, n in rows.items():
        lines = [json.dumps({"text": f"{WORDS[i % 10]} {WORDS[(i + 3) % 10]}", "label": "ab"[i % 2]}) for i in range(n)]
        (tmp_path / f"{split}.jsonl").write_text("\n".join(lines) + "\n")
    output = tmp_path / "out"
    code, out, err = run_tool("run_finetuning", "--task=text_classification",
                              *(f"--{split}_file={tmp_path / split}.jsonl" for split in rows),
                              f"--init_checkpoint={tiny_pretrained_dir}", f"--output_dir={output}", "--epochs=1",
                              "--batch_size=8", "--max_seq_length=8")
    assert code == 0, err[-3000:]
    trial = json.loads((output / "trial_0" / "results.json").read_text())
    assert set(trial["scores"]) == {"dev", "test"} and 0 <= trial["scores"]["test"]["accuracy"] <= 1
    summary = json.loads((output / "results.json").read_text())
    assert set(summary["dev"]) == {"dev"} and summary["test"]["test"]["accuracy"]["trials"] == [
        trial["scores"]["test"]["accuracy"]]
    assert '"test": {"accuracy": ' in out and "test: {" in out


def test_chinese_qa_is_scored_as_cmrc_with_qa_metric_and_hinted_without(tiny_pretrained_dir, tmp_path,
                                                                         run_tool):
    context = "江泽民主席在北京会见了克林顿。"
    qas = [{"id": f"q{i}", "question": "谁在北京会见了克林顿？", "answers": [{"text": "江泽民", "answer_start": 0}]}
           for i in range(8)]
    data = json.dumps({"version": "1.1", "data": [{"title": "t", "paragraphs": [{"context": context, "qas": qas}]}]})
    (tmp_path / "train.json").write_text(data)
    common = ["--task=squadv1", f"--train_file={tmp_path / 'train.json'}", f"--dev_file={tmp_path / 'train.json'}",
              f"--init_checkpoint={tiny_pretrained_dir}", "--epochs=1", "--batch_size=8", "--max_seq_length=32"]
    code, out, err = run_tool("run_finetuning", *common, f"--output_dir={tmp_path / 'squad'}")
    assert code == 0, err[-3000:]
    assert "note: the dev questions and answers are mostly Chinese" in out and "--qa_metric=cmrc" in out
    code, out, err = run_tool("run_finetuning", *common, f"--output_dir={tmp_path / 'cmrc'}", "--qa_metric=cmrc")
    assert code == 0, err[-3000:]
    assert "note: the dev questions and answers are mostly Chinese" not in out
    trial = json.loads((tmp_path / "cmrc" / "trial_0" / "results.json").read_text())
    assert trial["run"]["qa_metric"] == "cmrc" and set(trial["scores"]["dev"]) == {"exact_match", "f1", "total"}
