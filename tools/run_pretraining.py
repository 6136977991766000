"""What `electra-pretrain` does: its `main`, the flags as configs and `RunOptions` for
`electra_tf.pretraining.run.run_pretraining`.

Its flags and `--help` text are in `run_pretraining_flags.py`, which the console script parses before this module
(and TensorFlow) is imported.
"""

import dataclasses
import sys

from electra_tf.config import ElectraConfig, PretrainingConfig, load_run_config
from electra_tf.pretraining.run import RunOptions, run_pretraining
from electra_tf.tools.common import config_overrides, exits_cleanly_on_bad_input, resolve_checkpoint_flags, run_tool
from electra_tf.tools.run_pretraining_flags import FLAGS
from electra_tf.vocabulary import load_vocabulary

PREEMPTED_EXIT_CODE = 75


def resolve_configs(vocabulary_size):
    """The --config file's configs with the config flags given, `vocab_size` that of --vocab_file, and
    --warmup_fraction as `warmup_steps`."""
    model, pretraining = load_run_config(FLAGS.config)
    overrides = [config_overrides(cls) for cls in (ElectraConfig, PretrainingConfig)]
    if "vocab_size" not in overrides[0]:
        overrides[0]["vocab_size"] = vocabulary_size
    elif overrides[0]["vocab_size"] != vocabulary_size:
        raise ValueError(f"--vocab_size={overrides[0]['vocab_size']} but {FLAGS.vocab_file} holds "
                         f"{vocabulary_size} tokens")
    pretraining = pretraining.replace(**overrides[1])
    if FLAGS.warmup_fraction is not None:
        if "warmup_steps" in overrides[1]:
            raise ValueError("give --warmup_steps or --warmup_fraction, not both")
        if not 0 <= FLAGS.warmup_fraction < 1:
            raise ValueError(f"--warmup_fraction must be in [0, 1), got {FLAGS.warmup_fraction}")
        pretraining = pretraining.replace(warmup_steps=int(round(FLAGS.warmup_fraction * pretraining.train_steps)))
    return model.replace(**overrides[0]), pretraining


@exits_cleanly_on_bad_input
def main(argv):
    del argv
    resolve_checkpoint_flags("init_checkpoint", "generator_checkpoint")
    options = RunOptions(**{field.name: FLAGS[field.name].value for field in dataclasses.fields(RunOptions)})
    model, pretraining = resolve_configs(len(load_vocabulary(FLAGS.vocab_file)))
    if run_pretraining(model, pretraining, options).stopped_by:
        sys.exit(PREEMPTED_EXIT_CODE)


if __name__ == "__main__":  # python -m electra_tf.tools.run_pretraining (the console script: electra_tf_cli)
    run_tool(main, "electra_tf.tools.run_pretraining_flags")
