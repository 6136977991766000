"""`electra_tf.pretraining.run` as a library: `RunOptions` mirrors the tool's flags, bad input is refused first.

The runs themselves (resume, preemption, logs, ...) are tested through the tool, `tests/tools/test_run_pretraining.py`.
"""

import ast
import dataclasses
from pathlib import Path

import pytest

from electra_tf.config import load_run_config
from electra_tf.pretraining.plan import step_speed
from electra_tf.pretraining.run import RunOptions, run_pretraining

FLAGS_MODULE = Path(__file__).parents[2] / "tools" / "run_pretraining.py"
# The tool's flags that are no run option: they make the configs.
CONFIG_FLAGS = {"config", "warmup_fraction"}


def tool_flag_defaults():
    """{name: default} of each flag `tools/run_pretraining.py` defines itself (read with `ast`)."""
    calls = [node for node in ast.walk(ast.parse(FLAGS_MODULE.read_text(encoding="utf-8")))
             if isinstance(node, ast.Call) and getattr(node.func, "attr", "").startswith("DEFINE_")]
    return {ast.literal_eval(call.args[0]): ast.literal_eval(call.args[1]) for call in calls}


def test_each_run_option_is_the_flag_of_that_name_with_its_default():
    flags = {name: default for name, default in tool_flag_defaults().items() if name not in CONFIG_FLAGS}
    fields = {field.name: None if field.default is dataclasses.MISSING else field.default
              for field in dataclasses.fields(RunOptions)}
    assert fields == flags


@pytest.mark.parametrize("name", ["save_every", "keep_checkpoints", "eval_every", "eval_steps", "log_every"])
def test_a_count_below_one_is_refused(name):
    with pytest.raises(ValueError, match=f"--{name} must be >= 1, got 0"):
        RunOptions(model_dir="m", vocab_file="v", train_files="t", **{name: 0})


def test_a_model_config_of_another_vocabulary_size_is_refused_before_anything_is_written(tmp_path, fixture_vocab):
    model, pretraining = load_run_config("electra_tiny")
    options = RunOptions(model_dir=str(tmp_path / "run"), vocab_file=fixture_vocab, train_text_files=fixture_vocab)
    with pytest.raises(ValueError, match=f"ElectraConfig.vocab_size=999 but {fixture_vocab} holds 1418 tokens"):
        run_pretraining(model.replace(vocab_size=999), pretraining, options)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("mixed_precision, train_steps, jit", [
    (None, 1_000_000, True),  # fp32, a long run: XLA (with oneDNN's matmuls)
    (None, 999, False),  # too short to earn XLA's compilation back
    ("bfloat16", 1_000_000, False),  # XLA's CPU step is slower in bf16
])
def test_the_step_is_compiled_per_precision_by_default(mixed_precision, train_steps, jit):
    _, pretraining = load_run_config("electra_tiny")
    options = RunOptions(model_dir="m", vocab_file="v", train_files="t", mixed_precision=mixed_precision)
    chosen = step_speed(options, pretraining.replace(train_steps=train_steps))
    assert (chosen.jit_compile, chosen.graph_optimizer) == (jit, False)  # no Grappler on any step by default
    forced = step_speed(dataclasses.replace(options, jit_compile=not jit, graph_optimizer=True),
                        pretraining.replace(train_steps=train_steps))
    assert (forced.jit_compile, forced.graph_optimizer) == (not jit, True)
