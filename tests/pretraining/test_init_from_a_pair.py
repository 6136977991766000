"""`electra-pretrain --init_checkpoint=<discriminator> --init_generator_checkpoint=<generator>`: continued
pre-training from a released pair (HFL's Chinese ELECTRA, by hub id) in one command, each checkpoint checked for
its role before any step."""

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from electra_tf import ElectraDiscriminator
from electra_tf.checkpoints.safetensors_io import read_safetensors

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DISCRIMINATOR = "hfl/chinese-electra-180g-small-discriminator"
GENERATOR = "hfl/chinese-electra-180g-small-generator"


@pytest.fixture
def hub_cache(tmp_path, monkeypatch):
    """HF_HUB_CACHE at a copy of the fixture cache, offline; `(cache, snapshot(repo_id))`."""
    cache = shutil.copytree(FIXTURES / "hf_cache" / "hub", tmp_path / "hub", symlinks=True)
    for name in ("HF_HOME", "HUGGINGFACE_HUB_CACHE", "HF_ENDPOINT", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    def snapshot(repo_id):
        folder = Path(cache) / f"models--{repo_id.replace('/', '--')}"
        return folder / "snapshots" / (folder / "refs" / "main").read_text()

    return snapshot


def pretrain(run_tool, tmp_path, snapshot, *init_flags):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join("江泽民主席在北京会见了克林顿。今天天气很好！\n我们去公园吧。\n\n" for _ in range(30)),
                      encoding="utf-8")
    return run_tool(
        "run_pretraining", f"--vocab_file={snapshot(DISCRIMINATOR) / 'vocab.txt'}", f"--train_text_files={corpus}",
        f"--model_dir={tmp_path / 'run'}", *init_flags, "--max_seq_length=16", "--batch_size=4", "--train_steps=2",
        "--warmup_steps=1", "--save_every=2", "--log_every=1", "--eval_every=2")


def test_a_released_pair_continues_pretraining_in_one_command(hub_cache, tmp_path, run_tool):
    code, out, err = pretrain(run_tool, tmp_path, hub_cache, f"--init_checkpoint={DISCRIMINATOR}",
                              f"--init_generator_checkpoint={GENERATOR}")
    assert code == 0, err[-3000:]
    assert "initialised from " in out and "done: step 2 of 2" in out, out
    discriminator = ElectraDiscriminator.from_pretrained(str(tmp_path / "run"))
    start = read_safetensors(str(hub_cache(DISCRIMINATOR)))["electra.embeddings.word_embeddings.weight"]
    table = np.asarray(discriminator.backbone.embedding.word_embeddings.embeddings)
    assert table.shape == start.shape and 0 < np.max(np.abs(table - start)) < 0.1  # started there, trained on


def test_each_checkpoint_is_checked_for_its_role_before_any_step(hub_cache, tmp_path, run_tool):
    code, _, err = pretrain(run_tool, tmp_path, hub_cache, f"--init_checkpoint={DISCRIMINATOR}")
    assert code == 2 and "has no generator to initialise this pre-training's generator from" in err, err[-2000:]
    code, _, err = pretrain(run_tool, tmp_path, hub_cache, f"--init_checkpoint={DISCRIMINATOR}",
                            f"--init_generator_checkpoint={DISCRIMINATOR}")  # a discriminator as the generator
    assert code == 2 and len(err.strip().splitlines()) == 1 and "masked-LM head" in err, err[-2000:]
    code, _, err = pretrain(run_tool, tmp_path, hub_cache, f"--init_generator_checkpoint={GENERATOR}")
    assert code == 2 and "--init_generator_checkpoint is the generator of --init_checkpoint's discriminator: give " \
        "both" in err, err[-2000:]
    assert not os.path.exists(tmp_path / "run" / "checkpoints")
