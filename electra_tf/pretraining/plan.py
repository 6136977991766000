"""What a pre-training run will do, decided and checked before it writes anything: `plan_run(...)` → `RunPlan`,
every check on the input and every choice the rest of the run reads. Messages name the settings by their
`RunOptions` field names, which are the tool's flags.

Example:
>>> options = RunOptions(model_dir="runs/small", vocab_file="vocab.txt", train_files="data/pretrain_data.tfrecord-*")
>>> options.save_every, options.allow_vocabulary_change
(1000, False)
>>> plan = plan_run(model, pretraining, options)  # doctest: +SKIP
>>> plan.train.files[:1], plan.previous  # doctest: +SKIP
(('data/pretrain_data.tfrecord-00000-of-00008',), None)
"""

import dataclasses
import os

import keras
import tensorflow as tf

from electra_tf.checkpoints.ours import run_config_file
from electra_tf.config import PretrainingConfig, load_run_config
from electra_tf.data.pretraining_data import masking_unit, read_manifest, shard_words
from electra_tf.data.tfrecord import describe_corrupt_records, find_corrupt_records
from electra_tf.data.tfrecord_dataset import Shards, list_files
from electra_tf.pretraining.registry import source_class
from electra_tf.pretraining.vocabulary_identity import (
    check_same_vocabulary,
    recorded_in_run_config,
    recorded_vocabulary,
)
from electra_tf.text.tokenizer import WordPieceTokenizer
from electra_tf.text.vocabulary import load_vocabulary, vocabulary_hash
from electra_tf.training.determinism import enable_determinism
from electra_tf.training.distribute import get_strategy, is_chief, worker_dir
from electra_tf.training.optimization import learning_rate_schedule
from electra_tf.training.speed import StepSpeed
from electra_tf.util.atomic import read_json
from electra_tf.util.folder_lock import lock_folder

# What a run began training on (`describe_training_data`), in its model_dir.
TRAINING_DATA = "train_data.json"
# Fields a resumed run may change (to train longer, say); any other difference is another run.
_RESUMABLE_CHANGES = {"train_steps"}
_AT_LEAST_ONE = ("save_every", "keep_checkpoints", "eval_every", "eval_steps", "log_every")
_CHANGE_VOCABULARY = "--allow_vocabulary_change to train on with these tokens at its embedding rows"


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """What a run reads and writes and how it runs, besides its configs (the tool's flags, same names and defaults).

    >>> RunOptions(model_dir="runs/small", vocab_file="vocab.txt", train_files="shards/*").save_every
    1000
    >>> RunOptions(model_dir="m", vocab_file="v", train_files="a", train_text_files="b")
    Traceback (most recent call last):
    ValueError: give exactly one of --train_files, --train_text_files and --tfds_name
    """

    model_dir: str
    vocab_file: str
    train_files: str | None = None  # comma-separated globs of TFRecords; or one of the two streamed sources:
    train_text_files: str | None = None
    tfds_name: str | None = None
    tfds_split: str = "train"
    tfds_text_key: str = "text"
    tfds_data_dir: str | None = None
    eval_files: str | None = None
    save_every: int = 1000
    keep_checkpoints: int = 5
    eval_every: int = 1000
    eval_steps: int = 100
    log_every: int = 100
    strategy: str = "default"
    tpu: str | None = None
    mixed_precision: str | None = None  # "bfloat16" or "float16"
    jit_compile: bool | None = None  # XLA; None: where it pays (`training.speed.xla_pays`)
    graph_optimizer: bool = False  # Grappler on the step (it pays on no CPU step: `training.speed`)
    deterministic: bool = False
    skip_corrupt_records: bool = False
    init_checkpoint: str | None = None
    init_generator_checkpoint: str | None = None  # with a discriminator as init_checkpoint: its generator
    allow_vocabulary_change: bool = False  # resume or start from weights trained with other tokens, meant so

    def __post_init__(self):
        if len([s for s in (self.train_files, self.train_text_files, self.tfds_name) if s]) != 1:
            raise ValueError("give exactly one of --train_files, --train_text_files and --tfds_name")
        if self.init_generator_checkpoint and not self.init_checkpoint:
            raise ValueError("--init_generator_checkpoint is the generator of --init_checkpoint's discriminator: "
                             "give both")
        for name in _AT_LEAST_ONE:
            if getattr(self, name) < 1:
                raise ValueError(f"--{name} must be >= 1, got {getattr(self, name)}")


@dataclasses.dataclass(frozen=True)
class RunPlan:
    """A checked run: its configs and options, what it reads, how it runs, where it writes (`own_dir`: a worker's
    own under multi-worker) and what it resumes (the config the folder held, `previous`; the data it began on)."""

    model: object
    pretraining: PretrainingConfig
    options: RunOptions
    vocabulary_sha256: str
    tokenizer: WordPieceTokenizer
    casing: dict
    train: Shards | None
    eval: Shards | None
    text_files: tuple | None
    strategy: object
    speed: StepSpeed
    chief: bool
    own_dir: str
    previous: PretrainingConfig | None
    training_data: dict
    began_on: dict | None

    @property
    def total_micro_steps(self):
        return self.pretraining.train_steps * self.pretraining.gradient_accumulation_steps

    @property
    def final_dir(self):
        return os.path.join(self.own_dir, "final")

    def read_paths(self):
        """Every file the run reads while training (to name one that fails)."""
        return [*(self.train.files if self.train else ()), *(self.text_files or ()),
                *(self.eval.files if self.eval else ())]


def check_shard_vocabulary(vocab_file, vocabulary, sha256, files):
    """Refuses shards whose `manifest.json` records another vocabulary than `vocab_file`'s (of hash `sha256`);
    returns the shard build's settings."""
    settings = {}
    for folder in sorted({os.path.dirname(path) for path in files}):
        manifest = read_manifest(folder)
        if manifest is None:
            continue
        built_with = manifest["settings"].get("vocab_sha256")
        if built_with and built_with != sha256:
            size = manifest.get("vocabulary_size")
            raise ValueError(
                f"--vocab_file={vocab_file} (sha256 {sha256[:12]}, {len(vocabulary)} tokens) is not "
                f"the vocabulary the shards in {folder} were built with (sha256 {built_with[:12]}"
                f"{f', {size} tokens' if size else ''}); pass that vocab.txt, or rebuild the shards")
        settings = manifest["settings"]
    return settings


def describe_training_data(options, shards, text_files):
    """What a run reads, as `train_data.json` records it: each training file's name and size, or the TFDS split."""
    if options.tfds_name:
        return {"tfds": f"{options.tfds_name}:{options.tfds_split}"}
    files = shards.files if shards else text_files
    return {"files": [[os.path.basename(path), tf.io.gfile.stat(path).length] for path in files]}


def warn_if_still_warming_up(pretraining):
    """Says so when the schedule's warm-up does not end before the run does."""
    if pretraining.warmup_steps >= pretraining.train_steps > 0:
        final_rate = float(learning_rate_schedule(pretraining)(pretraining.train_steps))
        print(f"warning: warmup_steps={pretraining.warmup_steps} is not below train_steps={pretraining.train_steps}: "
              f"the run ends still warming up, at learning rate {final_rate:.3g} of {pretraining.learning_rate:.3g} "
              "(--warmup_fraction=0.1 warms up over a tenth of the run)", flush=True)


def check_model_dir(path, model, pretraining):
    """Refuses a model_dir that holds a run of another config; returns the `PretrainingConfig` it held (or None)."""
    config_file = run_config_file(path)  # run_config.json, or config.json in a folder of an older run
    if not os.path.exists(config_file):
        return None
    old_model, old_pretraining = load_run_config(config_file)
    differing = sorted([*model.differences(old_model),
                        *pretraining.differences(old_pretraining, ignore=_RESUMABLE_CHANGES)])
    if differing:
        raise ValueError(f"{path} holds a run of another config (differing: {differing}); "
                         "use a new --model_dir, or the same settings to resume")
    return old_pretraining


def check_run_vocabulary(options, sha256, resuming):
    """Refuses a resume or a start from `init_checkpoint` with a vocabulary (of hash `sha256`) other than the one
    those weights were trained with, unless `allow_vocabulary_change`."""
    named = f"--vocab_file={options.vocab_file}"
    if resuming:
        recorded = recorded_in_run_config(options.model_dir)
        if recorded is None and os.path.exists(run_config_file(options.model_dir)):
            print(f"warning: {run_config_file(options.model_dir)} records no vocabulary (the run began before runs "
                  f"recorded theirs): {options.vocab_file} is taken to be the one it was trained with", flush=True)
        elif not options.allow_vocabulary_change:
            check_same_vocabulary(named, sha256, recorded, f"the run in {options.model_dir}",
                                  f"pass that vocab.txt, use a new --model_dir, or {_CHANGE_VOCABULARY}")
    elif options.init_checkpoint and not options.allow_vocabulary_change:
        check_same_vocabulary(named, sha256, recorded_vocabulary(options.init_checkpoint),
                              f"--init_checkpoint {options.init_checkpoint}",
                              f"pass that vocab.txt, or {_CHANGE_VOCABULARY}")


def step_speed(options, pretraining):
    """The step's `StepSpeed` for a run with `options`, XLA decided where left to the default (`xla_pays`).

    >>> options = RunOptions(model_dir="m", vocab_file="v", train_files="t")
    >>> step_speed(options, PretrainingConfig(train_steps=100_000)).jit_compile
    True
    >>> step_speed(dataclasses.replace(options, mixed_precision="bfloat16"), PretrainingConfig()).jit_compile
    False
    """
    speed = StepSpeed(jit_compile=options.jit_compile, graph_optimizer=options.graph_optimizer)
    return speed.resolved(options.mixed_precision is not None, pretraining.train_steps)


def plan_run(model, pretraining, options, vocabulary=None):
    """Checks a run as `options` say, sets the process up for it (precision, seeds, determinism), takes the
    model_dir's lock, makes the folder and returns its `RunPlan`; bad input raises `ValueError` before anything is
    written. `vocabulary`: the tokens of `options.vocab_file` if the caller has read them."""
    vocabulary = load_vocabulary(options.vocab_file) if vocabulary is None else vocabulary
    source_class(pretraining).check_checkpoints(pretraining)  # e.g. a frozen generator's: it has an MLM head
    if model.vocab_size != len(vocabulary):
        raise ValueError(f"ElectraConfig.vocab_size={model.vocab_size} but {options.vocab_file} holds "
                         f"{len(vocabulary)} tokens")
    # Before any TensorFlow op: multi-worker collectives are configured at start-up.
    strategy = get_strategy(options.strategy, options.tpu)
    train, evaluation = (Shards.listed(patterns, pretraining.max_seq_length) if patterns else None
                         for patterns in (options.train_files, options.eval_files))
    text_files = tuple(list_files(options.train_text_files)) if options.train_text_files else None
    sha256 = vocabulary_hash(vocabulary)
    shard_settings = check_shard_vocabulary(options.vocab_file, vocabulary, sha256, [
        *train.files, *(evaluation.files if evaluation else ())]) if train else {}
    if train and options.skip_corrupt_records:
        damaged = find_corrupt_records(train.files)
        print(f"--skip_corrupt_records: {len(damaged)} damaged file(s)"
              + (f": {describe_corrupt_records(damaged)}" if damaged else ""), flush=True)
    casing = {"lowercase": shard_settings.get("lowercase", True), "strip_accents": shard_settings.get("strip_accents")}
    tokenizer = WordPieceTokenizer(vocabulary, **casing)  # the run's one: special tokens, streamed text
    warn_if_still_warming_up(pretraining)
    speed = step_speed(options, pretraining)
    if options.mixed_precision:
        keras.mixed_precision.set_global_policy(f"mixed_{options.mixed_precision}")
    keras.utils.set_random_seed(pretraining.seed)
    if options.deterministic:
        enable_determinism()  # (the generators are seeded just above)
    print(f"ELECTRA pre-training ({pretraining.objective}): {options.strategy} strategy, "
          f"{strategy.num_replicas_in_sync} replica(s), precision {keras.mixed_precision.global_policy().name}, "
          f"global batch {pretraining.batch_size} x {pretraining.gradient_accumulation_steps} accumulation, "
          f"{pretraining.train_steps} steps, step {'compiled by XLA' if speed.jit_compile else 'a TensorFlow graph'}"
          f" (Grappler {'on' if speed.graph_optimizer else 'off'})", flush=True)
    print(masking_unit(shard_words(train.files) if train else None, pretraining.whole_word_masking), flush=True)
    chief, own_dir = is_chief(strategy), worker_dir(options.model_dir, strategy)
    lock_folder(own_dir)  # one run per folder: another one is refused, naming its pid
    resuming = tf.train.latest_checkpoint(os.path.join(own_dir, "checkpoints")) is not None
    previous, began_on = None, None
    if chief:
        previous = check_model_dir(options.model_dir, model, pretraining)
        check_run_vocabulary(options, sha256, resuming)
        began_on_file = os.path.join(options.model_dir, TRAINING_DATA)
        if resuming and os.path.exists(began_on_file):
            began_on = read_json(began_on_file, expect=dict)
    os.makedirs(own_dir, exist_ok=True)  # every check passed
    return RunPlan(model, pretraining, options, sha256, tokenizer, casing, train, evaluation, text_files, strategy,
                   speed, chief, own_dir, previous, describe_training_data(options, train, text_files), began_on)
