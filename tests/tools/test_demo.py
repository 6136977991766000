import json
import os
import re
import subprocess
import sys

import keras
import tensorflow as tf

from electra_tf.config import load_run_config

# As a user runs the tools: without the test session's TF_CPP_MIN_LOG_LEVEL (they are quiet by default).
USER_ENV = {name: value for name, value in os.environ.items() if name != "TF_CPP_MIN_LOG_LEVEL"}
# What the examples run with here, to keep the test short: fewer pre-training steps.
QUICKER = {"steps_per_epoch=100, epochs=2": "steps_per_epoch=2, epochs=1"}


def test_demo_runs_end_to_end_on_the_default_corpus(tmp_path, documented_blocks):
    out = tmp_path / "runs" / "demo"  # as `make demo` writes it, so the README's commands run below
    command = [sys.executable, "-m", "electra_tf.tools.demo", f"--output_dir={out}", "--max_documents=400",
               "--vocab_size=1200", "--train_steps=30", "--num_shards=3"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, env=USER_ENV)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "held-out metrics after pre-training" in result.stdout
    metrics = json.loads(result.stdout.split("held-out metrics after pre-training")[1].split("\n==")[0])
    assert {"loss", "mlm_loss", "rtd_loss", "rtd_auc", "rtd_accuracy"} <= set(metrics)
    assert all(value == value for value in metrics.values())  # no NaN
    accuracy, baseline = map(float, re.search(r"ELECTRA fine-tuned: ([\d.]+)\s+majority class: ([\d.]+)",
                                              result.stdout).groups())
    assert accuracy > baseline > 0.2  # three classes, capped at 600 examples each
    assert (out / "docstring_kinds" / "classifier" / "model.safetensors").exists()  # a transformers folder
    assert "(majority class " in result.stdout and "learning rate 0.0012" in result.stdout  # by the width (64)
    for noise in ("I0000", "oneDNN", "cuInit", "WARNING:", "UserWarning", "renamed", "ran out of data", "Traceback"):
        assert noise not in result.stdout + result.stderr, noise
    served = re.search(r"serving_default\('Return the number of items in the queue.'\) → (\w+) \(p = ([\d.]+)\)",
                       result.stdout)
    assert served and served.group(1) in ("module", "class", "function"), result.stdout[-1500:]
    assert (out / "exports" / "docstring_kinds" / "1" / "saved_model.pb").exists()
    # The pre-training is a run of electra-pretrain's (the same call): its checkpoints, logs and final/.
    model_dir = out / "model"
    assert "ELECTRA pre-training (electra): default strategy" in result.stdout
    assert "evaluation at step 30: loss: " in result.stdout and "done: step 30 of 30" in result.stdout
    assert tf.train.latest_checkpoint(str(model_dir / "checkpoints")).endswith("ckpt-30")
    assert (model_dir / "logs").is_dir() and (model_dir / "train_data.json").exists()
    for name in ("discriminator.keras", "generator.keras", "run_config.json", "vocab.txt", "tokenizer_config.json"):
        assert (model_dir / "final" / name).exists(), name
    discriminator = keras.saving.load_model(str(model_dir / "final" / "discriminator.keras"), safe_mode=True)
    assert discriminator.config == load_run_config(str(model_dir / "final" / "run_config.json"))[0]

    # A second run reuses the corpus, vocabulary and shards (its data step alone: the rest always runs again).
    again = subprocess.run([sys.executable, "-c", "import sys; from electra_tf.tools.demo import prepare_data; "
                            "prepare_data(sys.argv[1], 64, 1200, 3, 0, 400)", str(out)],
                           capture_output=True, text=True, timeout=600, env=USER_ENV)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "writing the default corpus" not in again.stdout and "learning a" not in again.stdout
    assert "examples," in again.stdout

    # The README's and the docs pages' examples marked as tested run as they are, in order, in the folder
    # `make demo` ran in (a Python block as a script), on the demo's output.
    path = os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]])
    blocks = [block for block in documented_blocks if block.tested]
    assert [block.language for block in blocks].count("python") == 2 and len(blocks) == 4, blocks
    for block in blocks:
        page, language, code = block.page, block.language, block.code
        for slow, quick in QUICKER.items():
            code = code.replace(slow, quick)
        command = ["bash", "-euo", "pipefail", "-c", code] if language == "bash" else [sys.executable, "-c", code]
        ran = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=1200,
                             env={**USER_ENV, "PATH": path})
        assert ran.returncode == 0, (page, code[:200], ran.stdout[-2000:], ran.stderr[-3000:])
        assert "Traceback" not in ran.stderr
    assert (tmp_path / "discriminator.keras").exists()
    assert json.loads((tmp_path / "classifier" / "electra_tf.json").read_text())["label_names"] == \
        ["function", "class"]
    assert (tmp_path / "exports" / "my_task" / "1" / "saved_model.pb").exists()
    assert json.loads((tmp_path / "runs" / "from_hf" / "trial_0" / "model" / "config.json").read_text())[
        "id2label"] == {"0": "class", "1": "function", "2": "module"}
    assert (tmp_path / "presets" / "electra-demo" / "metadata.json").exists()
