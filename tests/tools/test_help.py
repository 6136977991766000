"""`--help` of every console script: what the tool does, an example, its own flags and the config fields with
their defaults (absl alone shows only `USAGE: ... [flags]` for an installed script)."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from electra_tf.config import FINETUNING_TASKS
from electra_tf.finetuning import TASKS

BIN = os.path.dirname(sys.executable)
# Each console script, and flags its help must show with their defaults.
SCRIPTS = {
    "electra-demo": ["--output_dir", "(default: 'runs/demo')", "--train_steps", "--deterministic"],
    "electra-build-vocab": ["--input_files", "--tfds_dataset", "--runner <local|beam>", "--vocab_size",
                            "(default: 30522)"],
    "electra-build-pretraining-data": ["--vocab_file", "--num_shards", "(default: 16)", "--num_processes",
                                       "--runner <local|beam>", "--beam_options", "--dedupe", "--text_field"],
    "electra-pretrain": ["--vocab_file", "--train_files", "--strategy <default|mirrored|multi_worker|tpu>",
                         "--hidden_size", "(default: 256)", "--train_steps", "(default: 1000000)", "--learning_rate",
                         "--warmup_fraction", "--deterministic", "ElectraConfig fields",
                         "PretrainingConfig fields"],
    "electra-finetune": ["--task", "docstring_kinds", "--init_checkpoint", "--batch_size", "(default: 32)",
                         "--learning_rate", "(default: by the model's width)", "--epochs",
                         "(default: the task's)", "--head", "(default: 'huggingface')", "--deterministic",
                         "FinetuningConfig fields"],
    "electra-convert-checkpoint": ["--input", "--to <ours|huggingface|google>", "--networks"],
    "electra-export": ["--model", "--export_dir", "--max_seq_length", "positions up to 128"],
}
# What a script's --help and the README both say, so that neither drifts from the other.
AGREED_WITH_README = {"electra-finetune": ["trial_<i>/model/", "trial_<i>/results.json", "--keep_best"],
                      "electra-build-pretraining-data": ["--num_processes", "hundreds of MB"]}
README = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
# A fresh process runs a console script as its entry point does (setup.py's: the tool module's `main`), then says
# what it imported.
PARSE_ONLY = """
import json, sys, time
from importlib.metadata import entry_points
started, sys.argv = float(sys.argv[1]), sys.argv[2:]
(script,) = entry_points(group="console_scripts", name=sys.argv[0])
try:
    script.load()()
    code = 0
except SystemExit as e:
    code = e.code
print(json.dumps({"code": code, "tensorflow": "tensorflow" in sys.modules, "keras": "keras" in sys.modules,
                 "seconds": time.time() - started}))
"""


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


@pytest.mark.parametrize("name", sorted(AGREED_WITH_README))
def test_help_and_the_readme_agree(helps, name):
    help_text, readme = " ".join(helps[name][1].split()), " ".join(README.split())
    for phrase in AGREED_WITH_README[name]:
        assert phrase in help_text and phrase in readme, phrase


@pytest.fixture(scope="module")
def parsed_only():
    """`--help` and a misspelt flag of each script, each in a fresh process: (exit code, imported TensorFlow?,
    imported Keras?, stderr, seconds from the process's start to its answer)."""
    processes = {}
    for name in SCRIPTS:
        for argument in ("--help", "--epoch=3"):
            processes[name, argument] = subprocess.Popen(
                [sys.executable, "-c", PARSE_ONLY, str(time.time()), name, argument],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    results = {}
    for key, process in processes.items():
        out, err = process.communicate(timeout=120)
        report = json.loads(out.strip().splitlines()[-1])
        results[key] = (report["code"], report["tensorflow"], report["keras"], err, report["seconds"])
    return results


@pytest.mark.parametrize("argument", ["--help", "--epoch=3"])
@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_help_and_a_misspelt_flag_answer_before_tensorflow_is_imported(parsed_only, name, argument):
    code, tensorflow, keras, err, seconds = parsed_only[name, argument]
    print(f"{name} {argument}: exit {code} after {seconds:.2f} s (14 processes at once; goal on an idle machine: "
          "1.5 s each)")
    assert not tensorflow and not keras
    if argument == "--help":
        assert code == 0
    else:
        assert code == 2 and "error: Unknown command line flag 'epoch'" in err, err[-2000:]


def test_the_task_names_of_the_help_are_the_registered_tasks():
    assert list(FINETUNING_TASKS) == sorted(TASKS)
