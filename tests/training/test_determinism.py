"""`--deterministic` (`training.determinism`): two runs of the same fine-tuning give the same weights, bit for bit."""

import json

import numpy as np
import pytest
from tensorflow.python.framework import config as tf_config

from electra_tf.config import FinetuningConfig
from electra_tf.finetuning import finetune, make_task
from electra_tf.checkpoints.tokenizer_files import load_tokenizer
from electra_tf.training.determinism import enable_determinism

WORDS = ["red", "blue", "green", "cat", "dog", "house", "tree", "car", "book", "river"]


@pytest.fixture
def determinism():
    """Op determinism for one test, then back as it was (it is a process-wide switch)."""
    was = tf_config.is_op_determinism_enabled()
    yield enable_determinism
    if not was:
        tf_config.disable_op_determinism()


def test_two_deterministic_runs_give_identical_weights(tmp_path, tiny_pretrained_dir, determinism):
    rng = np.random.default_rng(0)
    rows = [json.dumps({"text": " ".join(rng.choice(WORDS, 5)), "label": str(i % 2)}) for i in range(32)]
    (tmp_path / "train.jsonl").write_text("\n".join(rows))
    config = FinetuningConfig(task="text_classification", epochs=1.0, max_seq_length=16, batch_size=8,
                              learning_rate=1e-3)
    weights = []
    for _ in range(2):
        determinism(seed=0)
        task = make_task(config, load_tokenizer(tiny_pretrained_dir),
                         files={"train": str(tmp_path / "train.jsonl")})
        model = finetune(task, tiny_pretrained_dir, task.load("train"), report=None).model
        weights.append(model.get_weights())
    assert tf_config.is_op_determinism_enabled()
    assert all(np.array_equal(a, b) for a, b in zip(*weights))
    assert not np.array_equal(weights[0][-1], np.zeros_like(weights[0][-1]))  # (trained: the head moved)
