"""docs/chinese.md runs as written: every command and Python block, in order, on the Chinese sample the tests ship.

The blocks run in a fresh folder where `tests/fixtures/chinese` is the repository's, with the console scripts on
the PATH and the Hugging Face cache at a copy of the committed fixture (offline), as a user's machine would hold
HFL's checkpoint after one download.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
PAGE = ROOT / "docs" / "chinese.md"
MARKER = "<!-- tested: tests/tools/test_chinese_walkthrough.py -->"
BLOCK = re.compile(r"(<!-- [^>]+ -->\n)?```(bash|python)\n(.*?)```", re.S)


def _run(command, cwd, env):
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, (command[:2], result.stdout[-2000:], result.stderr[-4000:])
    return result


def test_the_chinese_walkthrough_runs_as_written(tmp_path):
    blocks = BLOCK.findall(PAGE.read_text(encoding="utf-8"))
    assert blocks and all(marker.strip() == MARKER for marker, _, _ in blocks), "every block is run here"
    (tmp_path / "tests" / "fixtures").mkdir(parents=True)
    (tmp_path / "tests" / "fixtures" / "chinese").symlink_to(ROOT / "tests" / "fixtures" / "chinese")
    shutil.copytree(ROOT / "tests" / "fixtures" / "hf_cache", tmp_path / "hf_cache", symlinks=True)
    env = {**os.environ, "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]]),
           "HF_HUB_CACHE": str(tmp_path / "hf_cache" / "hub"), "HF_HUB_OFFLINE": "1"}
    env.pop("HF_HOME", None)
    printed, shell = [], []
    for _, language, code in blocks:
        if language == "bash":
            shell.append(code)
            continue
        if shell:  # the commands so far, in one shell (the first block sets ZH)
            result = _run(["bash", "-euo", "pipefail", "-c", "\n".join(shell)], tmp_path, env)
            printed.append(result.stdout + result.stderr)  # the tools' reports, on either stream
            shell = []
        printed.append(_run([sys.executable, "-c", code], tmp_path, env).stdout)  # (TensorFlow logs on stderr)
    assert not shell, "the page ends with its Python block"
    hfl, tools, served = printed

    assert re.search(r"^\(2, 2\) \d+\.\d+$", hfl, re.M), hfl[-1500:]
    assert re.search(r"\[UNK\] rate: \d+\.\d\d% of the tokens of \d+ held-out lines .*; most often unknown: ", tools)
    assert re.search(r"\[UNK\]: \d+\.\d\d% of the tokens written; most often unknown: ", tools)
    assert "examples ending mid-sentence: " in tools and "masking unit: the word (jieba for CJK text); " in tools
    manifest = json.loads((tmp_path / "runs/zh/data/manifest.json").read_text())
    assert manifest["settings"]["word_segmenter"].startswith("jieba ")
    assert manifest["settings"]["long_lines"] == "sentences" and manifest["mid_sentence_rate"] < 0.1
    runs = tmp_path / "runs" / "zh"
    assert (runs / "pretrained" / "final" / "discriminator.keras").exists()
    qa = json.loads((runs / "qa" / "results.json").read_text())
    assert {"exact_match", "f1"} <= set(qa["dev"]["dev"])
    assert json.loads((runs / "sentiment" / "results.json").read_text())["dev"]["dev"]["accuracy"]
    predicted = [line.split("\t")[1] for line in (runs / "ner" / "trial_0" / "conll2003_dev.txt")
                 .read_text(encoding="utf-8").splitlines() if line.strip()]  # character, tag, probability
    assert predicted and not any(tag.startswith(("E-", "S-")) for tag in predicted)  # BIO in, BIO out

    words_line = next(line for line in served.splitlines() if line.startswith("['江'"))
    assert words_line.count("'") == 2 * 2 * 15  # 15 characters, 15 tags: one word, one tag per character
    text = "江泽民主席在北京会见了克林顿。"
    for line in served.splitlines()[served.splitlines().index(words_line) + 1:]:
        kind, word, start, end = line.split()
        assert text[int(start):int(end)] == word and kind in ("PER", "LOC", "ORG"), line
