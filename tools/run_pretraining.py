"""Pre-trains ELECTRA (or an MLM baseline) on TFRecord shards or streamed text, under any tf.distribute strategy.

    python -m electra_tf.tools.run_pretraining --config=electra_small --vocab_file=vocab.txt \\
        --train_files='data/pretrain_data.tfrecord-*' --model_dir=runs/small --strategy=mirrored

Every config field is also a flag (`--mask_prob=0.25`, `--hidden_size=128`,
`--batch_size=256` (global), `--train_steps`, `--learning_rate`,
`--warmup_steps`, `--gradient_accumulation_steps`, `--optimizer=lamb`, ...).

- Checkpoints every --save_every steps (keeping --keep_checkpoints); re-running
  the same command resumes at the last one with the optimizer state, the same
  random draws and the same data order. SIGTERM (preemption) or Ctrl-C saves
  at the next step boundary and exits with code 75; re-run to continue. One
  run per --model_dir: a second one is refused, naming the first one's pid.
- The run records its vocabulary's sha256 (<model_dir>/run_config.json): a
  resume or an --init_checkpoint with other tokens is refused, naming both
  files, unless --allow_vocabulary_change says it is meant.
- --init_checkpoint starts a new run from the discriminator and generator
  weights of another run, of a converted or released model (our folder, a
  Google TF1 checkpoint, or a Hugging Face discriminator with its generator
  as --init_generator_checkpoint), with a fresh optimizer and schedule
  (continued pre-training).
- TensorBoard scalars in <model_dir>/logs every --log_every steps: metrics,
  learning rate, examples/s, tokens/s, training FLOPs so far; evaluation on
  --eval_files every --eval_every steps (dropout off).
- At the end: <model_dir>/final/{discriminator,generator}.keras, run_config.json
  and vocab.txt, ready for fine-tuning and export.
- The paper's variants are config fields, hence flags (docs/pretraining_variants.md):
  --weight_sharing, --generator_type=unigram (its token counts are taken from
  --train_files once and kept in <model_dir>/unigram_counts.json),
  --training_algorithm=two_stage|adversarial, --objective=electra_15|
  replace_mlm|all_tokens_mlm|clm, --whole_word_masking (the vocabulary's `##`
  pieces). The FLOPs scalar counts what the variant computes.
"""

import dataclasses
import sys

from absl import flags

from electra_tf.config import ElectraConfig, PretrainingConfig, load_run_config
from electra_tf.tools.common import (
    PREEMPTED_EXIT_CODE,
    config_overrides,
    define_config_flags,
    exits_cleanly_on_bad_input,
    resolve_checkpoint_flags,
    run_tool,
)
from electra_tf.text.vocabulary import load_vocabulary

FLAGS = flags.FLAGS
flags.DEFINE_string("config", "electra_small", "A run config: JSON path or a name in configs/.")
flags.DEFINE_string("vocab_file", None, "The WordPiece vocab.txt.", required=True)
flags.DEFINE_string("model_dir", None, "Checkpoints, logs and final models.", required=True)
flags.DEFINE_string("train_files", None, "Comma-separated globs of pre-training TFRecords.")
flags.DEFINE_string("eval_files", None, "Comma-separated globs of evaluation TFRecords.")
flags.DEFINE_string("train_text_files", None, "Or: text files packed on the fly (no TFRecord dump).")
flags.DEFINE_string("tfds_name", None, "Or: a TFDS text dataset packed on the fly, e.g. wikipedia/20230601.en.")
flags.DEFINE_string("tfds_split", "train", "TFDS split.")
flags.DEFINE_string("tfds_text_key", "text", "TFDS feature holding the text.")
flags.DEFINE_string("tfds_data_dir", None, "TFDS data directory.")
flags.DEFINE_integer("save_every", 1000, "Checkpoint every N steps.")
flags.DEFINE_integer("keep_checkpoints", 5, "Checkpoints kept.")
flags.DEFINE_integer("eval_every", 1000, "Evaluate every N steps (needs --eval_files).")
flags.DEFINE_integer("eval_steps", 100, "Evaluation batches.")
flags.DEFINE_integer("log_every", 100, "Log and write scalars every N steps.")
for _name in ("save_every", "keep_checkpoints", "eval_every", "eval_steps", "log_every"):
    flags.register_validator(_name, lambda n: n >= 1, f"--{_name} must be >= 1")
flags.DEFINE_enum("strategy", "default", ["default", "mirrored", "multi_worker", "tpu"], "Distribution.")
flags.DEFINE_string("tpu", None, "TPU address for --strategy=tpu.")
flags.DEFINE_enum("mixed_precision", None, ["bfloat16", "float16"], "Mixed precision compute dtype.")
flags.DEFINE_bool("jit_compile", None,
                  "XLA-compile the step (per replica under multi-replica strategies; on CPU with oneDNN's matmuls); "
                  "default: fp32 runs of >= 1000 steps (~10 % faster steps on CPU, ~11 s more for the first), "
                  "never under --mixed_precision (slower).")
flags.DEFINE_bool("graph_optimizer", False,
                  "Run TensorFlow's graph optimizer (Grappler) on the step (on CPU it adds 5-18 s to the first "
                  "step and makes no step measurably faster, fp32 or bf16).")
flags.DEFINE_bool("deterministic", False, "TensorFlow's op determinism: a re-run gives the same weights (slower).")
flags.DEFINE_bool("skip_corrupt_records", False,
                  "Read past damaged TFRecords (each damaged file is read up to its damage; they are listed "
                  "and counted first). Without it a damaged file stops the run, naming it.")
flags.DEFINE_float("warmup_fraction", None,
                   "Warm up over this share of --train_steps (sets warmup_steps; for short runs of a long config).")
flags.DEFINE_string("init_checkpoint", None,
                    "Start from these weights: another run's model_dir, our saved/converted model folder, or a "
                    "Google ELECTRA checkpoint (discriminator and generator both restored), or a discriminator "
                    "(e.g. a Hugging Face folder or hub id) with --init_generator_checkpoint.")
flags.DEFINE_string("init_generator_checkpoint", None,
                    "With a discriminator as --init_checkpoint: its generator (a Hugging Face ElectraForMaskedLM "
                    "folder or hub id, e.g. hfl/chinese-electra-180g-small-generator).")
flags.DEFINE_bool("allow_vocabulary_change", False,
                  "Resume --model_dir, or start from --init_checkpoint, with a --vocab_file other than the one those "
                  "weights were trained with (same size, other tokens). From --init_checkpoint each token both hold "
                  "keeps its trained embedding row (matched by token), the others are initialised anew; a resume "
                  "keeps each id's row (a run records its vocabulary's hash, not its tokens). Without it such a run "
                  "is refused, naming both files.")

define_config_flags(ElectraConfig, PretrainingConfig, defaults=lambda: load_run_config(FLAGS["config"].default))


def resolve_configs(vocabulary_size):
    """The --config file's configs with the config flags given, `vocab_size` that of --vocab_file, and
    --warmup_fraction as `warmup_steps`."""
    model, pretraining = load_run_config(FLAGS.config)
    if FLAGS.init_generator_checkpoint and not FLAGS["config"].present:  # the pair's own architecture
        from electra_tf.pretraining.init_checkpoint import pair_configs

        model, generator = pair_configs(FLAGS.init_checkpoint, FLAGS.init_generator_checkpoint)
        pretraining = pretraining.replace(**generator)
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
    import tensorflow as tf  # (this and the import below load TensorFlow: not for --help)

    from electra_tf.export import precision

    native = precision.CPU_FLAGS["bf16"]
    if (options.mixed_precision != "bfloat16" or options.strategy == "tpu" or tf.config.list_physical_devices("GPU")
            or set(native) & precision.cpu_flags()):
        return
    print(f"warning: --mixed_precision=bfloat16 on a CPU without {' or '.join(native)}, which emulates bfloat16: "
          "the steps will be many times slower than in float32 (leave --mixed_precision unset)", flush=True)


@exits_cleanly_on_bad_input
def run(argv):
    del argv
    from electra_tf.pretraining.run import RunOptions, run_pretraining

    resolve_checkpoint_flags("init_checkpoint", "init_generator_checkpoint", "generator_checkpoint")
    options = RunOptions(**{field.name: FLAGS[field.name].value for field in dataclasses.fields(RunOptions)})
    warn_if_bf16_is_emulated(options)
    vocabulary = load_vocabulary(FLAGS.vocab_file)  # read once: the run takes the tokens
    model, pretraining = resolve_configs(len(vocabulary))
    if run_pretraining(model, pretraining, options, vocabulary).stopped_by:
        sys.exit(PREEMPTED_EXIT_CODE)


def main():
    """The console script `electra-pretrain`."""
    run_tool(run, __name__)


if __name__ == "__main__":  # python -m electra_tf.tools.run_pretraining
    main()
