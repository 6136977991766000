"""The pre-training step's speed switches, chosen in one place (`training.speed.StepSpeed`)."""

import os

import tensorflow as tf

from electra_tf import ElectraModel
from electra_tf.training.speed import StepSpeed
from electra_tf.training.speed import XLA_MIN_STEPS


def test_the_block_switches_reach_every_block_and_jit_is_decided_where_left_open(tiny_config):
    encoder = ElectraModel(tiny_config)
    assert StepSpeed().apply(encoder) == 1
    assert len({id(block.call.trace) for block in encoder.transformer_layers}) == 1
    StepSpeed(shared_trace=False).apply(encoder)
    assert not any(hasattr(block.call, "trace") for block in encoder.transformer_layers)
    assert StepSpeed().resolved(False, XLA_MIN_STEPS).jit_compile
    assert not StepSpeed().resolved(True, XLA_MIN_STEPS).jit_compile
    assert not StepSpeed(jit_compile=False).resolved(False, XLA_MIN_STEPS).jit_compile


def test_the_process_wide_switches_hold_while_running_only(monkeypatch):
    monkeypatch.setenv("XLA_FLAGS", "")
    with StepSpeed(jit_compile=True, graph_optimizer=False).running():
        assert tf.config.optimizer.get_experimental_options()["disable_meta_optimizer"]
    assert not tf.config.optimizer.get_experimental_options().get("disable_meta_optimizer", False)
    assert os.environ["XLA_FLAGS"] == "--xla_cpu_use_onednn=true"  # read by XLA's first compilation
