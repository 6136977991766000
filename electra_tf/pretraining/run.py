"""A whole pre-training run, as `electra-pretrain` does it: `run_pretraining(model, pretraining, RunOptions(...))`.

Checks the input before anything is written (the shards' vocabulary and record length, a model_dir of another
config), checkpoints every `save_every` steps and resumes exactly from the last checkpoint, stops at the next step
boundary on SIGTERM or Ctrl-C (having saved), and writes `<model_dir>/final` at the end. It prints its progress;
its messages name the settings by their `RunOptions` field names, which are the tool's flags.

    result = run_pretraining(model, pretraining, RunOptions(model_dir="runs/small", vocab_file="vocab.txt",
                                                            train_files="data/pretrain_data.tfrecord-*"))
    result.final_dir  # 'runs/small/final', or None when a signal stopped the run first
"""

import dataclasses
import fnmatch
import json
import os

import keras
import tensorflow as tf

from electra_tf.util.atomic import read_json, remove_leftovers, write_json
from electra_tf.checkpoints.ours import RUN_CONFIG, write_run_folder
from electra_tf.checkpoints.saving_progress import saying_saved
from electra_tf.checkpoints.tokenizer_files import write_tokenizer_files
from electra_tf.config import load_run_config, save_run_config
from electra_tf.data.tfrecord_dataset import check_record_length, list_files, list_shards, pretraining_dataset
from electra_tf.data.pretraining_data import read_manifest
from electra_tf.data.streaming import streaming_dataset, text_documents, tfds_documents
from electra_tf.data.tfrecord import describe_corrupt_records, find_corrupt_records
from electra_tf.util.folder_lock import lock_folder
from electra_tf.pretraining.flops import training_flops
from electra_tf.pretraining.init_checkpoint import load_initial_weights
from electra_tf.pretraining.pretrainer import ElectraPretrainer
from electra_tf.pretraining.registry import source_class
from electra_tf.pretraining.variant_inputs import variant_inputs
from electra_tf.text.tokenizer import WordPieceTokenizer
from electra_tf.training import callbacks as cb
from electra_tf.training.determinism import enable_determinism
from electra_tf.training.distribute import get_strategy, is_chief, worker_dir
from electra_tf.training.optimization import learning_rate_schedule, micro_steps, pretraining_optimizer
from electra_tf.training.speed import StepSpeed
from electra_tf.training.stop_signals import StopSignals
from electra_tf.text.vocabulary import load_vocabulary, vocabulary_hash

# What a run began training on (`describe_training_data`), in its model_dir.
TRAINING_DATA = "train_data.json"
# Fields a resumed run may change (to train longer, say); any other difference is another run.
_RESUMABLE_CHANGES = {"train_steps"}
# tf.io.parse_example's complaints about a record that does not fit the first one's features.
_MALFORMED_RECORD_TEXTS = ("Number of int64 values != expected", "is required but could not be found",
                           "Data types don't match", "Could not parse example input")
# TensorFlow's errors for a file that is missing or may not be read, as reading the shards meets them.
_FILE_ERRORS = (tf.errors.NotFoundError, tf.errors.PermissionDeniedError, tf.errors.FailedPreconditionError)
_AT_LEAST_ONE = ("save_every", "keep_checkpoints", "eval_every", "eval_steps", "log_every")


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """What a run reads and writes and how it runs, besides its configs (each field is the tool's flag of
    that name, with its default).

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
    jit_compile: bool | None = None  # XLA; None: where it pays (`training.xla_step`)
    graph_optimizer: bool = False  # Grappler on the step (it pays on no CPU step: `training.graph_optimizer`)
    deterministic: bool = False
    skip_corrupt_records: bool = False
    init_checkpoint: str | None = None
    init_generator_checkpoint: str | None = None  # with a discriminator as init_checkpoint: its generator

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
class RunResult:
    """What a run ended with: the step reached, where its final models are (None if it was stopped before),
    the last metrics, and what stopped it early (`"SIGTERM"`, `"SIGINT"`, or None)."""

    step: int
    train_steps: int
    final_dir: str | None
    metrics: dict
    stopped_by: str | None = None


def check_shard_vocabulary(vocab_file, vocabulary, files):
    """Refuses, before any step, shards built with another vocabulary than `vocab_file`, whose tokens are
    `vocabulary` (their folders' `manifest.json` records the vocabulary's hash and size); returns the shard
    build's settings."""
    settings, wanted = {}, vocabulary_hash(vocabulary)
    for folder in sorted({os.path.dirname(path) for path in files}):
        manifest = read_manifest(folder)
        if manifest is None:
            continue
        built_with = manifest["settings"].get("vocab_sha256")
        if built_with and built_with != wanted:
            size = manifest.get("vocabulary_size")
            raise ValueError(
                f"--vocab_file={vocab_file} (sha256 {wanted[:12]}, {len(vocabulary)} tokens) is not "
                f"the vocabulary the shards in {folder} were built with (sha256 {built_with[:12]}"
                f"{f', {size} tokens' if size else ''}); pass that vocab.txt, or rebuild the shards")
        settings = manifest["settings"]
    return settings


def describe_training_data(options, train_files):
    """What a run reads, as `train_data.json` records it: each training file's name and size (TFRecord shards
    or text files; the same files moved elsewhere are the same data), or the TFDS split."""
    if options.tfds_name:
        return {"tfds": f"{options.tfds_name}:{options.tfds_split}"}
    files = train_files.split(",") if train_files else list_files(options.train_text_files)
    return {"files": [[os.path.basename(path), tf.io.gfile.stat(path).length] for path in files]}


def warn_if_other_training_data(model_dir, began_on, now):
    """Says so when a run resumes on other data than it began on (`describe_training_data`, both): it goes on
    (nothing is lost), but the data order is no longer the one it began with."""
    if began_on == now:
        return
    began, read = ({tuple(entry) for entry in described.get("files", [])} for described in (began_on, now))
    gone, new = sorted(began - read), sorted(read - began)
    if gone or new:
        what = ", ".join(f"{len(files)} {'of its files ' if files is gone else ''}{'is' if len(files) == 1 else 'are'} "
                         f"{state}" + (f" (e.g. {files[0][0]})" if files else "")
                         for files, state in ((gone, "not read now"), (new, "new")))
    else:
        what = "its files in another order" if began else f"{began_on} then, {now} now"
    print(f"warning: {model_dir} began on other training data ({TRAINING_DATA}): {what}; the run goes on with "
          "these, so its data order is not the one it began with", flush=True)


def warn_if_still_warming_up(pretraining):
    """Says so when the schedule's warm-up does not end before the run does."""
    if pretraining.warmup_steps >= pretraining.train_steps > 0:
        final_rate = float(learning_rate_schedule(pretraining)(pretraining.train_steps))
        print(f"warning: warmup_steps={pretraining.warmup_steps} is not below train_steps={pretraining.train_steps}: "
              f"the run ends still warming up, at learning rate {final_rate:.3g} of {pretraining.learning_rate:.3g} "
              "(--warmup_fraction=0.1 warms up over a tenth of the run)", flush=True)


def check_model_dir(path, model, pretraining):
    """Refuses a model_dir that holds a run of another config. Returns the `PretrainingConfig` the folder
    held before (None for a new run); the run records its config once every check has passed."""
    config_file = os.path.join(path, "config.json")
    old_pretraining = None
    if os.path.exists(config_file):
        old_model, old_pretraining = load_run_config(config_file)
        differing = sorted([*model.differences(old_model),
                            *pretraining.differences(old_pretraining, ignore=_RESUMABLE_CHANGES)])
        if differing:
            raise ValueError(f"{path} holds a run of another config (differing: {differing}); "
                             "use a new --model_dir, or the same settings to resume")
    return old_pretraining


def describe_extension(old, new, step):
    """What the schedule does when a run is resumed with another `train_steps`."""
    old_rate, new_rate = (float(learning_rate_schedule(c)(step)) for c in (old, new))
    return (f"train_steps {old.train_steps} → {new.train_steps}: the learning-rate schedule is now "
            f"{new.train_steps} steps long, so at step {step} the rate is {new_rate:.3g} (the old schedule's was "
            f"{old_rate:.3g}) and decays linearly to 0 at step {new.train_steps}")


def build_pretrainer(model, pretraining, vocabulary, train_files=None, jit_compile=False, counts_file=None):
    """A compiled `ElectraPretrainer` of the configs, with the special tokens of `vocabulary` (a `vocab.txt`
    path, its tokens, or an `WordPieceTokenizer`) and what its variant needs (a unigram generator's token counts
    from `train_files`, kept in `counts_file`), in the current distribution strategy's scope."""
    tokenizer = vocabulary if isinstance(vocabulary, WordPieceTokenizer) else WordPieceTokenizer(vocabulary)
    extra = variant_inputs(pretraining, tokenizer.vocabulary, train_files, counts_file=counts_file)
    pretrainer = ElectraPretrainer(model, pretraining, tokenizer.mask_token_id, tokenizer.special_token_ids, **extra)
    pretrainer.compile(optimizer=pretraining_optimizer(pretraining), jit_compile=jit_compile)
    return pretrainer


def make_dataset(strategy, pretraining, options, start_micro_steps, train_files, tokenizer):
    """The training input, positioned after `start_micro_steps` batches (exact resume); streamed text is
    tokenized by `tokenizer`."""
    pc = pretraining

    def dataset_fn(context=None):
        if train_files:
            dataset = pretraining_dataset(train_files, pc.batch_size, pc.max_seq_length, seed=pc.seed,
                                          deterministic=True, input_context=context,
                                          skip_corrupt=options.skip_corrupt_records)
        else:
            documents = (text_documents(list_files(options.train_text_files)) if options.train_text_files
                         else tfds_documents(options.tfds_name, options.tfds_split, options.tfds_text_key,
                                             options.tfds_data_dir))
            dataset = streaming_dataset(documents, tokenizer, pc.batch_size, pc.max_seq_length,
                                        seed=pc.seed, input_context=context)
        local_replicas = 1 if context is None else context.num_replicas_in_sync // context.num_input_pipelines
        return dataset.skip(start_micro_steps * local_replicas)

    if strategy.num_replicas_in_sync == 1 and not isinstance(strategy, tf.distribute.TPUStrategy):
        return dataset_fn()
    return strategy.distribute_datasets_from_function(dataset_fn)


def save_final(folder, pretrainer, model, pretraining, vocabulary, casing, step):
    """The run's models as a self-describing folder, written whole: configs, networks, `vocabulary` (tokens) and
    casing. Its `config.json` records `step`, the step its models reached, as `train_steps` (`final_is_current`)."""
    networks = pretrainer.export_networks()
    with saying_saved(folder, *networks.values()):
        write_run_folder(folder, networks, model, pretraining.replace(train_steps=step), extra_files=lambda tmp: (
            write_tokenizer_files(tmp, vocabulary,
                                  model_max_length=model.max_position_embeddings, **casing)))


def final_is_current(folder, step):
    """Whether the run folder `folder` is whole and holds the models of `step`: its `config.json` records the
    step they reached as `train_steps` (a kill during the final save of an extended run leaves an older one)."""
    try:
        _, recorded = load_run_config(os.path.join(folder, RUN_CONFIG))
    except (FileNotFoundError, ValueError):  # none yet, or damaged
        return False
    return recorded.train_steps == step


def unreadable_file(message, patterns):
    """`(path, reason)` of the first file a TensorFlow error `message` names as `<path>; <reason>` (how its file
    errors read, under "Graph execution error:" when raised in a step) that is one of `patterns` (paths, globs
    or folders: what the run reads), or None.

    >>> unreadable_file("Graph execution error:\\n\\nshards/a-1; Permission denied\\n\\t [[{{node IteratorGetNext}}]]",
    ...                 ["eval/*", "shards"])
    ('shards/a-1', 'Permission denied')
    """
    for line in message.splitlines():
        path, separator, reason = line.strip().partition("; ")
        if separator and any(fnmatch.fnmatchcase(path, pattern) or path.startswith(pattern.rstrip("/") + "/")
                             for pattern in patterns):
            return path, reason.split("\t")[0].strip()
    return None


def train(pretrainer, strategy, pretraining, options, done, train_files, tokenizer, callbacks, validation, stop):
    """Fits from micro-step `done` to the end of the run, phase by phase (`ElectraPretrainer.start_phase`: a
    two-stage run has two, each its own traced step), in epochs that end at multiples of `eval_every` or at a
    phase's end, or until `stop` is requested (`CheckpointEvery` then saves); returns the micro-steps done."""
    k = pretraining.gradient_accumulation_steps
    total, epoch = pretraining.train_steps * k, min(options.eval_every, pretraining.train_steps) * k
    while done < total and not stop.requested:
        phase_end = pretrainer.start_phase(done // k)
        until = total if phase_end is None else min(phase_end * k, total)
        # Epochs end at multiples of eval_every; a resumed run first reaches the next boundary.
        first = epoch - done % epoch
        steps, epochs = ((min(first, until - done), 1) if done % epoch or until - done < epoch
                         else (epoch, (until - done) // epoch))
        ends = done + steps * epochs
        try:
            pretrainer.fit(make_dataset(strategy, pretraining, options, done, train_files, tokenizer),
                           steps_per_epoch=steps, epochs=epochs, callbacks=callbacks, verbose=0,
                           **(validation if ends % epoch == 0 or ends == total else {}))
        except tf.errors.DataLossError:
            damaged = find_corrupt_records(list_files(",".join(filter(None, [train_files, options.eval_files]))))
            raise ValueError(f"damaged TFRecords: {describe_corrupt_records(damaged) or 'unknown file'}; the last "
                             "checkpoint is kept. Rebuild the shards, or re-run with --skip_corrupt_records") from None
        except tf.errors.InvalidArgumentError as error:
            if not any(text in error.message for text in _MALFORMED_RECORD_TEXTS):
                raise
            detail = error.message.split("ParallelMapV2: ")[-1].splitlines()[0][:300]
            raise ValueError(f"a TFRecord record unlike the first one read (int64 features of length "
                             f"{pretraining.max_seq_length} expected): {detail}; the last checkpoint is kept. "
                             "Rebuild the shards") from None
        except _FILE_ERRORS as error:  # the file named in the message under TensorFlow's "Graph execution error:"
            named = unreadable_file(error.message, ",".join(filter(None, [
                train_files, options.train_text_files, options.eval_files])).split(","))
            if named is None:
                raise
            raise ValueError(f"{named[0]} cannot be read while training ({named[1]}); the last checkpoint is kept: "
                             "make the file readable, or leave it out, then re-run") from None
        done = int(micro_steps(pretrainer.optimizer).numpy())
    return done


def step_speed(options, pretraining):
    """The step's speed switches (`training.speed.StepSpeed`) for a run with `options`, `jit_compile` decided
    where it was left to the default (None): XLA in fp32 for a run long enough to earn its compilation back (CPU).

    >>> from electra_tf.config import PretrainingConfig
    >>> options = RunOptions(model_dir="m", vocab_file="v", train_files="t")
    >>> step_speed(options, PretrainingConfig(train_steps=100_000)).jit_compile
    True
    >>> step_speed(dataclasses.replace(options, mixed_precision="bfloat16"), PretrainingConfig()).jit_compile
    False
    """
    speed = StepSpeed(jit_compile=options.jit_compile, graph_optimizer=options.graph_optimizer)
    return speed.resolved(options.mixed_precision is not None, pretraining.train_steps)


def run_pretraining(model, pretraining, options, vocabulary=None):
    """Pre-trains `model` (an `ElectraConfig`, its `vocab_size` that of `options.vocab_file`) with `pretraining`
    (a `PretrainingConfig`) as `options` (`RunOptions`) say, resuming the run in `options.model_dir` if there
    is one; returns a `RunResult`. Bad input raises `ValueError` before anything is written.

    `vocabulary`: the tokens of `options.vocab_file` (`load_vocabulary`) when the caller has read them already,
    to size `model` say; the run reads the file itself otherwise, once."""
    speed = step_speed(options, pretraining)
    with speed.running():
        return _run(model, pretraining, dataclasses.replace(options, jit_compile=speed.jit_compile),
                    load_vocabulary(options.vocab_file) if vocabulary is None else vocabulary)


def _run(model, pretraining, options, vocabulary):
    source_class(pretraining).check_checkpoints(pretraining)  # e.g. a frozen generator's: it has an MLM head
    train_files = ",".join(list_shards(options.train_files)) if options.train_files else None
    shard_settings = check_shard_vocabulary(options.vocab_file, vocabulary, list_shards(",".join(
        filter(None, [train_files, options.eval_files])))) if train_files else {}
    if train_files and options.skip_corrupt_records:
        damaged = find_corrupt_records(train_files.split(","))
        print(f"--skip_corrupt_records: {len(damaged)} damaged file(s)"
              + (f": {describe_corrupt_records(damaged)}" if damaged else ""), flush=True)
    # Before any TensorFlow op: multi-worker collectives are configured at start-up.
    strategy = get_strategy(options.strategy, options.tpu)
    casing = {"lowercase": shard_settings.get("lowercase", True), "strip_accents": shard_settings.get("strip_accents")}
    if model.vocab_size != len(vocabulary):
        raise ValueError(f"ElectraConfig.vocab_size={model.vocab_size} but {options.vocab_file} holds "
                         f"{len(vocabulary)} tokens")
    tokenizer = WordPieceTokenizer(vocabulary, **casing)  # the run's one: special tokens, streamed text
    warn_if_still_warming_up(pretraining)
    for patterns in filter(None, [train_files, options.eval_files]):  # before anything is written
        check_record_length(list_files(patterns), pretraining.max_seq_length, patterns)
    if options.mixed_precision:
        keras.mixed_precision.set_global_policy(f"mixed_{options.mixed_precision}")
    keras.utils.set_random_seed(pretraining.seed)
    if options.deterministic:
        enable_determinism()  # (the generators are seeded just above)
    print(f"ELECTRA pre-training ({pretraining.objective}): {options.strategy} strategy, "
          f"{strategy.num_replicas_in_sync} replica(s), precision {keras.mixed_precision.global_policy().name}, "
          f"global batch {pretraining.batch_size} x {pretraining.gradient_accumulation_steps} accumulation, "
          f"{pretraining.train_steps} steps, step {'compiled by XLA' if options.jit_compile else 'a TensorFlow graph'}"
          f" (Grappler {'on' if options.graph_optimizer else 'off'})", flush=True)
    chief = is_chief(strategy)
    own_dir = worker_dir(options.model_dir, strategy)
    lock_folder(own_dir)  # one run per folder: another one is refused, naming its pid
    previous = check_model_dir(options.model_dir, model, pretraining) if chief else None
    os.makedirs(own_dir, exist_ok=True)

    k = pretraining.gradient_accumulation_steps
    with strategy.scope():
        pretrainer = build_pretrainer(model, pretraining, tokenizer, train_files, options.jit_compile,
                                      counts_file=os.path.join(options.model_dir, "unigram_counts.json"))
        pretrainer.optimizer.build(pretrainer.trainable_variables)
    # The dropout seed states are in the pre-trainer's checkpoint (`pretrainer.dropout_seeds`); they are also
    # listed at the root, where the runs checkpointed before the pre-trainer held them have them, so that
    # those resume too (one variable under two names is saved once).
    random_states = pretrainer.dropout_seeds.states
    checkpoint = tf.train.Checkpoint(model=pretrainer, optimizer=pretrainer.optimizer, random_states=random_states)
    manager = tf.train.CheckpointManager(checkpoint, os.path.join(own_dir, "checkpoints"),
                                         max_to_keep=options.keep_checkpoints)
    training_data, began_on = describe_training_data(options, train_files), None
    if manager.latest_checkpoint:
        checkpoint.restore(manager.latest_checkpoint).assert_consumed()
        print(f"resumed from {manager.latest_checkpoint}", flush=True)
        began_on = read_json(os.path.join(options.model_dir, TRAINING_DATA), expect=dict) if chief and os.path.exists(
            os.path.join(options.model_dir, TRAINING_DATA)) else None
        if began_on is not None:
            warn_if_other_training_data(options.model_dir, began_on, training_data)
    elif options.init_checkpoint:
        started = load_initial_weights(pretrainer, options.init_checkpoint, options.init_generator_checkpoint)
        print(f"initialised from {started}", flush=True)
    if chief:  # every check passed: a refused run leaves no config.json to refuse the corrected command
        save_run_config(os.path.join(options.model_dir, "config.json"), model, pretraining)
        if began_on is None:  # a new run (or one begun before the record was kept)
            write_json(os.path.join(options.model_dir, TRAINING_DATA), training_data)

    total = pretraining.train_steps * k  # micro-steps
    done = int(micro_steps(pretrainer.optimizer).numpy())
    final = os.path.join(own_dir, "final")
    remove_leftovers(final)  # what a killed final save left: a whole model each
    if done >= total:
        if not final_is_current(final, done // k):
            save_final(final, pretrainer, model, pretraining, vocabulary, casing, done // k)
        print(f"already complete at step {done // k} of {pretraining.train_steps}; final models in {final} "
              "(raise --train_steps to train longer)", flush=True)
        return RunResult(done // k, pretraining.train_steps, final, {})
    if previous is not None and previous.train_steps != pretraining.train_steps and done:
        print(describe_extension(previous, pretraining, done // k), flush=True)
    tokens_per_step = pretraining.batch_size * k * pretraining.max_seq_length
    stop = StopSignals()
    saver = cb.CheckpointEvery(manager, options.save_every, stop)
    callbacks = [cb.NanGuard(), saver, cb.TrainingScalars(
        os.path.join(options.model_dir, "logs"), options.log_every, pretraining.batch_size * k, tokens_per_step,
        lambda step: training_flops(model, pretraining, step), write=chief, total_steps=pretraining.train_steps)]
    validation = {}
    if options.eval_files:
        validation = {"validation_data": pretraining_dataset(options.eval_files, pretraining.batch_size,
                                                             pretraining.max_seq_length, training=False).repeat(),
                      "validation_steps": options.eval_steps}
    # From here on Ctrl-C and SIGTERM ask to save and stop at the next step boundary; before, nothing is
    # done yet and Ctrl-C raises KeyboardInterrupt at once.
    with stop:
        done = train(pretrainer, strategy, pretraining, options, done, train_files, tokenizer, callbacks, validation,
                     stop)
        finished = done >= total and not stop.requested
        if finished:  # (a signal during the save: saved, then stops)
            save_final(final, pretrainer, model, pretraining, vocabulary, casing, done // k)
    step = done // k
    metrics = {m.name: round(float(m.result()), 4) for m in pretrainer.metrics}
    if stop.requested:
        how = "preempted" if stop.requested_by == "SIGTERM" else "interrupted (Ctrl-C)"
        kept = f" and the final models in {final}" if finished else ""
        print(f"{how}: saved step {step}{kept}; re-run the same command to resume", flush=True)
        return RunResult(step, pretraining.train_steps, final if finished else None, metrics, stop.requested_by)
    print(f"done: step {step} of {pretraining.train_steps}; final models in {final}; "
          f"last metrics {json.dumps(metrics)}", flush=True)
    return RunResult(step, pretraining.train_steps, final, metrics)
