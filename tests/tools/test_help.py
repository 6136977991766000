"""`--help` of every console script: what the tool does, an example, its own flags and the config fields with
their defaults (absl alone shows only `USAGE: ... [flags]` for an installed script)."""

import os
import subprocess
import sys

import pytest

BIN = os.path.dirname(sys.executable)
# Each console script, and flags its help must show with their defaults.
SCRIPTS = {
    "electra-demo": ["--output_dir", "(default: 'runs/demo')", "--train_steps", "--deterministic"],
    "electra-build-vocab": ["--input_files", "(required)", "--vocab_size", "(default: 30522)"],
    "electra-build-pretraining-data": ["--vocab_file", "--num_shards", "(default: 16)", "--num_processes"],
    "electra-pretrain": ["--vocab_file", "--train_files", "--strategy <default|mirrored|multi_worker|tpu>",
                         "--hidden_size", "(default: 256)", "--train_steps", "(default: 1000000)", "--learning_rate",
                         "--warmup_fraction", "--deterministic", "ElectraConfig fields",
                         "PretrainingConfig fields"],
    "electra-finetune": ["--task", "docstring_kinds", "--init_checkpoint", "--batch_size", "(default: 32)",
                         "--learning_rate", "(default: by the model's width)", "--epochs",
                         "(default: the task's)", "--head", "(default: 'huggingface')", "--deterministic",
                         "FinetuningConfig fields"],
    "electra-convert-checkpoint": ["--input", "--to <ours|huggingface|google>", "--networks"],
    "electra-export": ["--model", "--export_dir", "--max_seq_length", "model folder's, else 128"],
}


@pytest.fixture(scope="module")
def helps():
    processes = {name: subprocess.Popen([os.path.join(BIN, name), "--help"], stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True) for name in SCRIPTS}
    return {name: (process.wait(timeout=300), *process.communicate()) for name, process in processes.items()}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_every_console_script_explains_itself_and_its_flags(helps, name):
    code, out, err = helps[name]
    assert code == 0 and err == "", err[-2000:]
    assert out.startswith(f"{name}: ") and "Flags:" in out
    assert "    python -m electra_tf.tools." in out or "electra-" in out.split("Flags:")[0]  # an example command
    for expected in SCRIPTS[name]:
        assert expected in out, (expected, out[:3000])
