"""A re-run keeps a finished trial only if it comes from the same settings (finetuning.run.kept_trial)."""

import json

import pytest

from electra_tf.config import FinetuningConfig
from electra_tf.finetuning.run import RunOptions, kept_trial, run_settings


def _trial(tmp_path, config, options):
    path = tmp_path / "trial_0" / "results.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"scores": {"dev": {"f1": 0.5}}, "run": run_settings(config, options)}))
    return str(path)


def test_a_trial_that_recorded_the_default_it_trained_with_is_kept_and_another_flag_is_refused(tmp_path):
    options = RunOptions(init_checkpoint="ckpt", output_dir=str(tmp_path), train_file="train.csv")
    unset = FinetuningConfig.for_task("text_classification")  # learning rate, decay, epochs: chosen when training
    assert unset.learning_rate is None
    # An older version wrote the values it chose into the trial's settings: the same command keeps it.
    path = _trial(tmp_path, unset.replace(learning_rate=3e-4, layerwise_lr_decay=0.8, epochs=3), options)
    assert kept_trial(path, unset, options)["scores"]["dev"]["f1"] == 0.5
    # A flag the user gives must match.
    with pytest.raises(ValueError, match=r"trial_0 holds a trial of another run \(differing: \['learning_rate'\]\)"):
        kept_trial(path, unset.replace(learning_rate=1e-4), options)
    with pytest.raises(ValueError, match=r"differing: \['train_file'\]"):
        kept_trial(path, unset, RunOptions(init_checkpoint="ckpt", output_dir=str(tmp_path), train_file="other.csv"))
