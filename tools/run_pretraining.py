"""What `electra-pretrain` does: its `main`.

Its flags and `--help` text are in `run_pretraining_flags.py`, which the console script parses before this module
(and TensorFlow) is imported.
"""

import json
import os
import sys

import keras
import tensorflow as tf

from electra_tf.checkpoints.ours import write_run_folder
from electra_tf.checkpoints.tokenizer_files import write_tokenizer_files
from electra_tf.config import ElectraConfig, PretrainingConfig, load_run_config, save_run_config
from electra_tf.data.pipeline import check_record_length, list_files, pretraining_dataset
from electra_tf.data.pretraining_data import read_manifest
from electra_tf.data.streaming import streaming_dataset, text_documents, tfds_documents
from electra_tf.data.tfrecord import describe_corrupt_records, find_corrupt_records
from electra_tf.folder_lock import lock_folder
from electra_tf.pretraining.flops import training_flops
from electra_tf.pretraining.init_checkpoint import load_initial_weights
from electra_tf.pretraining.pretrainer import ElectraPretrainer
from electra_tf.pretraining.variant_inputs import variant_inputs
from electra_tf.tokenization import ElectraTokenizer
from electra_tf.tools.common import config_overrides, exits_cleanly_on_bad_input, run_tool, saying_saved
from electra_tf.tools.run_pretraining_flags import FLAGS
from electra_tf.training import callbacks as cb
from electra_tf.training.determinism import enable_determinism
from electra_tf.training.distribute import get_strategy, is_chief, worker_dir
from electra_tf.training.graph_optimizer import graph_optimizer, grappler_pays
from electra_tf.training.optimization import learning_rate_schedule, micro_steps, pretraining_optimizer
from electra_tf.training.stop_signals import StopSignals
from electra_tf.vocabulary import load_vocabulary, vocabulary_hash

# Fields a resumed run may change (to train longer, say); any other difference is another run.
_RESUMABLE_CHANGES = {"train_steps"}
PREEMPTED_EXIT_CODE = 75
# tf.io.parse_example's complaints about a record that does not fit the first one's features.
_MALFORMED_RECORD_TEXTS = ("Number of int64 values != expected", "is required but could not be found",
                           "Data types don't match", "Could not parse example input")


def resolve_configs(vocabulary_size):
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
    elif pretraining.warmup_steps >= pretraining.train_steps > 0:
        final_rate = float(learning_rate_schedule(pretraining)(pretraining.train_steps))
        print(f"warning: warmup_steps={pretraining.warmup_steps} is not below train_steps={pretraining.train_steps}: "
              f"the run ends still warming up, at learning rate {final_rate:.3g} of {pretraining.learning_rate:.3g} "
              "(--warmup_fraction=0.1 warms up over a tenth of the run)", flush=True)
    return model.replace(**overrides[0]), pretraining


def check_vocabulary(vocab_file, files):
    """Refuses, before any step, shards built with another vocabulary than `vocab_file` (their folders'
    `manifest.json` records the vocabulary's hash and size); returns the shard build's settings."""
    settings, wanted = {}, vocabulary_hash(vocab_file)
    for folder in sorted({os.path.dirname(path) for path in files}):
        manifest = read_manifest(folder)
        if manifest is None:
            continue
        built_with = manifest["settings"].get("vocab_sha256")
        if built_with and built_with != wanted:
            size = manifest.get("vocabulary_size")
            raise ValueError(
                f"--vocab_file={vocab_file} (sha256 {wanted[:12]}, {len(load_vocabulary(vocab_file))} tokens) is not "
                f"the vocabulary the shards in {folder} were built with (sha256 {built_with[:12]}"
                f"{f', {size} tokens' if size else ''}); pass that vocab.txt, or rebuild the shards")
        settings = manifest["settings"]
    return settings


def check_model_dir(path, model, pretraining):
    """Refuses a model_dir that holds a run of another config. Returns the `PretrainingConfig` the folder
    held before (None for a new run); `main` records this run's config once every check has passed."""
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


def make_dataset(strategy, pretraining, start_micro_steps, train_files):
    """The training input, positioned after `start_micro_steps` batches (exact resume)."""
    pc = pretraining

    def dataset_fn(context=None):
        if train_files:
            dataset = pretraining_dataset(train_files, pc.batch_size, pc.max_seq_length, seed=pc.seed,
                                          deterministic=True, input_context=context,
                                          skip_corrupt=FLAGS.skip_corrupt_records)
        else:
            documents = (text_documents(list_files(FLAGS.train_text_files)) if FLAGS.train_text_files
                         else tfds_documents(FLAGS.tfds_name, FLAGS.tfds_split, FLAGS.tfds_text_key,
                                             FLAGS.tfds_data_dir))
            dataset = streaming_dataset(documents, FLAGS.vocab_file, pc.batch_size, pc.max_seq_length,
                                        seed=pc.seed, input_context=context)
        local_replicas = 1 if context is None else context.num_replicas_in_sync // context.num_input_pipelines
        return dataset.skip(start_micro_steps * local_replicas)

    if strategy.num_replicas_in_sync == 1 and not isinstance(strategy, tf.distribute.TPUStrategy):
        return dataset_fn()
    return strategy.distribute_datasets_from_function(dataset_fn)


def save_final(folder, pretrainer, model, pretraining, casing):
    """The run's models as a self-describing folder, written whole: configs, networks, vocabulary and casing."""
    networks = pretrainer.export_networks()
    with saying_saved(folder, *networks.values()):
        write_run_folder(folder, networks, model, pretraining, extra_files=lambda tmp: (
            write_tokenizer_files(tmp, load_vocabulary(FLAGS.vocab_file),
                                  model_max_length=model.max_position_embeddings, **casing)))


def train(pretrainer, strategy, pretraining, done, train_files, callbacks, validation, stop):
    """Fits from micro-step `done` to the end of the run, in epochs that end at multiples of --eval_every,
    or until `stop` is requested (`CheckpointEvery` then saves); returns the micro-steps done."""
    k = pretraining.gradient_accumulation_steps
    total, epoch = pretraining.train_steps * k, min(FLAGS.eval_every, pretraining.train_steps) * k
    while done < total and not stop.requested:
        # Epochs end at multiples of --eval_every; a resumed run first reaches the next boundary.
        first = epoch - done % epoch
        steps, epochs = ((min(first, total - done), 1) if done % epoch or total - done < epoch
                         else (epoch, (total - done) // epoch))
        try:
            pretrainer.fit(make_dataset(strategy, pretraining, done, train_files), steps_per_epoch=steps,
                           epochs=epochs, callbacks=callbacks, verbose=0, **validation)
        except tf.errors.DataLossError:
            damaged = find_corrupt_records(list_files(",".join(filter(None, [train_files, FLAGS.eval_files]))))
            raise ValueError(f"damaged TFRecords: {describe_corrupt_records(damaged) or 'unknown file'}; the last "
                             "checkpoint is kept. Rebuild the shards, or re-run with --skip_corrupt_records") from None
        except tf.errors.InvalidArgumentError as error:
            if not any(text in error.message for text in _MALFORMED_RECORD_TEXTS):
                raise
            detail = error.message.split("ParallelMapV2: ")[-1].splitlines()[0][:300]
            raise ValueError(f"a TFRecord record unlike the first one read (int64 features of length "
                             f"{pretraining.max_seq_length} expected): {detail}; the last checkpoint is kept. "
                             "Rebuild the shards") from None
        done = int(micro_steps(pretrainer.optimizer).numpy())
    return done


@exits_cleanly_on_bad_input
def main(argv):
    del argv
    enabled = FLAGS.graph_optimizer
    if enabled is None:  # Grappler: ~18 s of the first step; a faster step only under mixed precision (CPU)
        enabled = grappler_pays(FLAGS.mixed_precision is not None)
    with graph_optimizer(enabled):
        run()


def run():
    sources = [s for s in (FLAGS.train_files, FLAGS.train_text_files, FLAGS.tfds_name) if s]
    if len(sources) != 1:
        raise ValueError("give exactly one of --train_files, --train_text_files and --tfds_name")
    train_files = ",".join(list_files(FLAGS.train_files)) if FLAGS.train_files else None
    shard_settings = check_vocabulary(FLAGS.vocab_file, list_files(",".join(
        filter(None, [train_files, FLAGS.eval_files])))) if train_files else {}
    if train_files and FLAGS.skip_corrupt_records:
        damaged = find_corrupt_records(train_files.split(","))
        print(f"--skip_corrupt_records: {len(damaged)} damaged file(s)"
              + (f": {describe_corrupt_records(damaged)}" if damaged else ""), flush=True)
    # Before any TensorFlow op: multi-worker collectives are configured at start-up.
    strategy = get_strategy(FLAGS.strategy, FLAGS.tpu)
    casing = {"lowercase": shard_settings.get("lowercase", True), "strip_accents": shard_settings.get("strip_accents")}
    tokenizer = ElectraTokenizer(FLAGS.vocab_file, **casing)
    model, pretraining = resolve_configs(tokenizer.vocabulary_size())
    for patterns in filter(None, [train_files, FLAGS.eval_files]):  # before anything is written
        check_record_length(list_files(patterns), pretraining.max_seq_length, patterns)
    if FLAGS.mixed_precision:
        keras.mixed_precision.set_global_policy(f"mixed_{FLAGS.mixed_precision}")
    keras.utils.set_random_seed(pretraining.seed)
    if FLAGS.deterministic:
        enable_determinism()  # (the generators are seeded just above)
    print(f"ELECTRA pre-training ({pretraining.objective}): {FLAGS.strategy} strategy, "
          f"{strategy.num_replicas_in_sync} replica(s), precision {keras.mixed_precision.global_policy().name}, "
          f"global batch {pretraining.batch_size} x {pretraining.gradient_accumulation_steps} accumulation, "
          f"{pretraining.train_steps} steps", flush=True)
    chief = is_chief(strategy)
    own_dir = worker_dir(FLAGS.model_dir, strategy)
    lock_folder(own_dir)  # one run per folder: another one is refused, naming its pid
    previous = check_model_dir(FLAGS.model_dir, model, pretraining) if chief else None
    os.makedirs(own_dir, exist_ok=True)

    k = pretraining.gradient_accumulation_steps
    extra = variant_inputs(pretraining, load_vocabulary(FLAGS.vocab_file), train_files,
                           counts_file=os.path.join(FLAGS.model_dir, "unigram_counts.json"))
    with strategy.scope():
        pretrainer = ElectraPretrainer(model, pretraining, tokenizer.mask_token_id, tokenizer.special_token_ids,
                                       **extra)
        pretrainer.compile(optimizer=pretraining_optimizer(pretraining), jit_compile=FLAGS.jit_compile)
        pretrainer.optimizer.build(pretrainer.trainable_variables)
    # Keras's dropout seed generators are not TensorFlow-trackable: their state
    # variables are listed explicitly, so a resumed run draws the same dropout.
    random_states = [v.value for v in pretrainer.non_trainable_variables if "seed_generator_state" in v.path]
    checkpoint = tf.train.Checkpoint(model=pretrainer, optimizer=pretrainer.optimizer, random_states=random_states)
    manager = tf.train.CheckpointManager(checkpoint, os.path.join(own_dir, "checkpoints"),
                                         max_to_keep=FLAGS.keep_checkpoints)
    if manager.latest_checkpoint:
        checkpoint.restore(manager.latest_checkpoint).assert_consumed()
        print(f"resumed from {manager.latest_checkpoint}", flush=True)
    elif FLAGS.init_checkpoint:
        print(f"initialised from {load_initial_weights(pretrainer, FLAGS.init_checkpoint)}", flush=True)
    if chief:  # every check passed: a refused run leaves no config.json to refuse the corrected command
        save_run_config(os.path.join(FLAGS.model_dir, "config.json"), model, pretraining)

    total = pretraining.train_steps * k  # micro-steps
    done = int(micro_steps(pretrainer.optimizer).numpy())
    final = os.path.join(own_dir, "final")
    if done >= total:
        if not os.path.exists(os.path.join(final, "config.json")):
            save_final(final, pretrainer, model, pretraining, casing)
        print(f"already complete at step {done // k} of {pretraining.train_steps}; final models in {final} "
              "(raise --train_steps to train longer)", flush=True)
        return
    if previous is not None and previous.train_steps != pretraining.train_steps and done:
        print(describe_extension(previous, pretraining, done // k), flush=True)
    tokens_per_step = pretraining.batch_size * k * pretraining.max_seq_length
    stop = StopSignals()
    saver = cb.CheckpointEvery(manager, FLAGS.save_every, stop)
    callbacks = [cb.NanGuard(), saver, cb.TrainingScalars(
        os.path.join(FLAGS.model_dir, "logs"), FLAGS.log_every, pretraining.batch_size * k, tokens_per_step,
        lambda step: training_flops(model, pretraining, step), write=chief, total_steps=pretraining.train_steps)]
    validation = {}
    if FLAGS.eval_files:
        validation = {"validation_data": pretraining_dataset(FLAGS.eval_files, pretraining.batch_size,
                                                             pretraining.max_seq_length, training=False).repeat(),
                      "validation_steps": FLAGS.eval_steps}
    # From here on Ctrl-C and SIGTERM ask to save and stop at the next step boundary (exit 75); before,
    # nothing is done yet and Ctrl-C ends the run at once (exit 130).
    with stop:
        done = train(pretrainer, strategy, pretraining, done, train_files, callbacks, validation, stop)
        finished = done >= total and not stop.requested
        if finished:
            save_final(final, pretrainer, model, pretraining, casing)  # (a signal now: saved, then exit 75)
    step = done // k
    if stop.requested:
        how = "preempted" if stop.requested_by == "SIGTERM" else "interrupted (Ctrl-C)"
        kept = f" and the final models in {final}" if finished else ""
        print(f"{how}: saved step {step}{kept}; re-run the same command to resume", flush=True)
        sys.exit(PREEMPTED_EXIT_CODE)
    metrics = {m.name: round(float(m.result()), 4) for m in pretrainer.metrics}
    print(f"done: step {step} of {pretraining.train_steps}; final models in {final}; "
          f"last metrics {json.dumps(metrics)}", flush=True)


if __name__ == "__main__":  # python -m electra_tf.tools.run_pretraining (the console script: electra_tf_cli)
    run_tool(main, "electra_tf.tools.run_pretraining_flags")
