"""docs/migrating_from_transformers.md runs as written: its Python blocks, in order, in one fresh process.

The hub ids resolve offline in a copy of the committed Hugging Face cache (`tests/fixtures/hf_cache`: tiny random
models under those ids, made by tools/make_hf_hub_fixtures.py), as they would on a machine that downloaded them.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]
PAGE = ROOT / "docs" / "migrating_from_transformers.md"
MARKER = "<!-- tested: tests/test_migration_doc.py -->"
BLOCK = re.compile(r"(<!-- [^>]+ -->\n)?```(bash|sh|python)\n(.*?)```", re.S)


def test_the_migration_page_runs_as_written(tmp_path):
    blocks = BLOCK.findall(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) == 5 and all(marker.strip() == MARKER for marker, _, _ in blocks), "every block is run"
    fixtures = tmp_path / "tests" / "fixtures"
    fixtures.mkdir(parents=True)
    (fixtures / "hf_tf_h5").symlink_to(ROOT / "tests" / "fixtures" / "hf_tf_h5")
    shutil.copytree(ROOT / "tests" / "fixtures" / "hf_cache", tmp_path / "hf_cache", symlinks=True)
    script = "\n".join(f"print('=== block {i}')\n{code}" for i, (_, _, code) in enumerate(blocks))
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hf_cache" / "hub"), "HF_HUB_OFFLINE": "1"}
    env.pop("HF_HOME", None)
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    snippet, keras_training, heads, data, own = re.split(r"=== block \d\n", result.stdout)[1:]
    assert re.match(r"\(1, \d+, 32\)\ntf\.Tensor\(\[\[[-\d. ]+\]\], shape=\(1, 2\)", snippet), snippet
    labels, joy = keras_training.splitlines()[0].split()
    assert labels == "6" and joy == "joy" and re.match(r"[\d.]+ \(1, 6\)$", keras_training.splitlines()[1])
    lines = heads.splitlines()
    tags = eval(next(line for line in lines if line.startswith("['")))  # noqa: S307 -- our own printed list
    assert tags and all(tag == "O" or tag[:2] in ("B-", "I-") for tag in tags)
    assert re.match(r"[\d.]+ ", lines[-1])
    assert data.splitlines()[-1] == "2 POSITIVE 1.9999999494757503e-05"  # 2 batches, the labels, init_lr
    assert own.strip() == "['config.json', 'electra_tf.json', 'model.safetensors', 'tokenizer_config.json']"
