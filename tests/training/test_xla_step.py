"""XLA's default for the pre-training step, and oneDNN's matmuls in XLA:CPU."""

from electra_tf.training.speed import XLA_MIN_STEPS, use_onednn_in_xla, xla_pays


def test_xla_only_in_fp32_and_only_for_runs_long_enough():
    assert xla_pays(False, XLA_MIN_STEPS) and not xla_pays(False, XLA_MIN_STEPS - 1)
    assert not xla_pays(True, 10 * XLA_MIN_STEPS)


def test_onednn_is_added_to_xla_flags_and_a_users_own_setting_is_kept():
    environ = {}
    use_onednn_in_xla(environ)
    assert environ == {"XLA_FLAGS": "--xla_cpu_use_onednn=true"}
    environ = {"XLA_FLAGS": "--xla_cpu_use_onednn=false"}
    use_onednn_in_xla(environ)
    assert environ == {"XLA_FLAGS": "--xla_cpu_use_onednn=false"}
