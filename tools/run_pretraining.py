"""What `electra-pretrain` does: its `main`, the flags as configs and `RunOptions` for
`electra_tf.pretraining.run.run_pretraining`.

Its flags and `--help` text are in `run_pretraining_flags.py`, which the console script parses before this module
(and TensorFlow) is imported.
"""

import dataclasses
import sys

import tensorflow as tf

from electra_tf.config import ElectraConfig, PretrainingConfig, load_run_config
from electra_tf.export import precision
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


def warn_if_bf16_is_emulated(options):
    """Says so when `--mixed_precision=bfloat16` would train on a CPU that emulates bfloat16 (no AVX512-BF16 nor AMX:
    the same check as `electra-export --precision=bf16`, which refuses there); GPUs and TPUs run it natively."""
    native = precision.CPU_FLAGS["bf16"]
    if (options.mixed_precision != "bfloat16" or options.strategy == "tpu" or tf.config.list_physical_devices("GPU")
            or set(native) & precision.cpu_flags()):
        return
    print(f"warning: --mixed_precision=bfloat16 on a CPU without {' or '.join(native)}, which emulates bfloat16: "
          "the steps will be many times slower than in float32 (leave --mixed_precision unset)", flush=True)


@exits_cleanly_on_bad_input
def main(argv):
    del argv
    resolve_checkpoint_flags("init_checkpoint", "generator_checkpoint")
    options = RunOptions(**{field.name: FLAGS[field.name].value for field in dataclasses.fields(RunOptions)})
    warn_if_bf16_is_emulated(options)
    model, pretraining = resolve_configs(len(load_vocabulary(FLAGS.vocab_file)))
    if run_pretraining(model, pretraining, options).stopped_by:
        sys.exit(PREEMPTED_EXIT_CODE)


if __name__ == "__main__":  # python -m electra_tf.tools.run_pretraining (the console script: electra_tf_cli)
    run_tool(main, "electra_tf.tools.run_pretraining_flags")
