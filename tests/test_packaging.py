"""The package as a user installs it: the wheel built from the checkout, installed into a fresh venv.

The wheel holds the library, the tools and the configs (not the developer scripts that write the fixtures or serve
the loopback hub), its licence and version; installed without its dependencies into a new venv that borrows the
test venv's (`--no-deps` and a `.pth` line: nothing is downloaded), each console script answers `--help` and
`electra-build-vocab` runs end to end from there, far from the checkout.
"""

import email
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

import electra_tf

ROOT = Path(__file__).parents[1]
SCRIPTS = ("electra-demo", "electra-build-vocab", "electra-build-pretraining-data", "electra-pretrain",
           "electra-finetune", "electra-convert-checkpoint", "electra-export")
DEV_TOOLS = ("local_hub.py", "make_hf_fixtures.py", "make_hf_hub_fixtures.py", "make_tokenizer_fixtures.py")
SOURCES = ("setup.py", "README.md", "LICENSE", "NOTICE", "electra_tf", "tools", "configs")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel `pip wheel .` builds from a copy of the checkout (the build leaves nothing in the checkout)."""
    source, dist = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("dist")
    for name in SOURCES:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy2
        copy(ROOT / name, source / name, **({"ignore": shutil.ignore_patterns("__pycache__")}
                                            if (ROOT / name).is_dir() else {}))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "-w", str(dist), str(source)], check=True, capture_output=True, timeout=300)
    (path,) = dist.glob("electra_tf-*.whl")
    return path


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    """A fresh venv with the wheel installed (`--no-deps`); its dependencies are the test venv's."""
    folder = tmp_path_factory.mktemp("venv")
    venv.create(folder, with_pip=True)
    site = Path(subprocess.run([folder / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_path("
                                "'purelib'))"], check=True, capture_output=True, text=True).stdout.strip())
    (site / "borrowed_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    subprocess.run([folder / "bin" / "python", "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                    str(wheel)], check=True, capture_output=True, timeout=300)
    return folder


def run(installed, *command, cwd):
    environment = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    environment["PATH"] = f"{installed / 'bin'}:/usr/bin:/bin"
    return subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True, timeout=300)


def test_the_wheel_holds_the_library_the_tools_and_the_configs_not_the_dev_scripts(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = email.message_from_bytes(archive.read(next(n for n in names if n.endswith("/METADATA"))))
    assert {"electra_tf/__init__.py", "electra_tf/py.typed", "electra_tf/tools/run_finetuning.py",
            "electra_tf/configs/electra_small.json", "electra_tf/checkpoints/publish.py"} <= names
    assert not [name for name in names if name.rsplit("/", 1)[-1] in DEV_TOOLS or "make_" in name]
    assert any(name.endswith("/LICENSE") for name in names) and any(name.endswith("/NOTICE") for name in names)
    assert metadata["Version"] == electra_tf.__version__ and wheel.name.startswith(f"electra_tf-{electra_tf.__version__}")
    assert metadata["License"] == "Apache-2.0" or "Apache" in metadata.get("License-Expression", "") + \
        " ".join(metadata.get_all("Classifier"))
    assert "Typing :: Typed" in metadata.get_all("Classifier")


def test_the_installed_wheel_runs_its_console_scripts_far_from_the_checkout(installed, tmp_path):
    where = run(installed, "python", "-c", "import electra_tf, electra_tf.tools.run_finetuning; "
                "print(electra_tf.__file__, electra_tf.__version__)", cwd=tmp_path)
    assert where.returncode == 0, where.stderr[-2000:]
    assert where.stdout.startswith(str(installed)) and where.stdout.split()[-1] == electra_tf.__version__
    missing = run(installed, "python", "-c", "import electra_tf.tools.local_hub", cwd=tmp_path)
    assert "No module named 'electra_tf.tools.local_hub'" in missing.stderr  # a dev script: not installed
    for script in SCRIPTS:
        result = run(installed, script, "--help", cwd=tmp_path)
        assert result.returncode == 0 and "--" in result.stdout, (script, result.stderr[-2000:])
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(f"the quick brown fox {i} jumps over the lazy dog\n" for i in range(200)))
    result = run(installed, "electra-build-vocab", f"--input_files={corpus}", "--vocab_size=120",
                 f"--output={tmp_path / 'vocab.txt'}", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    vocabulary = (tmp_path / "vocab.txt").read_text(encoding="utf-8").split("\n")
    assert vocabulary[:1] == ["[PAD]"] and "[CLS]" in vocabulary and "fox" in vocabulary
