"""The training of a planned pre-training run (`plan.RunPlan`), phase by phase, to its final models: `train`,
`save_final` (`<model_dir>/final`) and `finish` (how the run ended).

Example:
>>> unreadable_file("shards/a-1; Permission denied", ["shards/a-1"])
('shards/a-1', 'Permission denied')
"""

import dataclasses
import fnmatch
import json
import os

import tensorflow as tf

from electra_tf.checkpoints.ours import RUN_CONFIG, write_run_folder
from electra_tf.checkpoints.saving_progress import saying_saved
from electra_tf.checkpoints.tokenizer_files import write_tokenizer_files
from electra_tf.config import load_run_config
from electra_tf.data.streaming import streaming_dataset, text_documents, tfds_documents
from electra_tf.data.tfrecord import describe_corrupt_records, find_corrupt_records
from electra_tf.pretraining.flops import training_flops
from electra_tf.training import callbacks as cb
from electra_tf.training.optimization import learning_rate_schedule, micro_steps

# tf.io.parse_example's complaints about a record that does not fit the first one's features.
_MALFORMED_RECORD_TEXTS = ("Number of int64 values != expected", "is required but could not be found",
                           "Data types don't match", "Could not parse example input")
# TensorFlow's errors for a file that is missing or may not be read, as reading the shards meets them.
_FILE_ERRORS = (tf.errors.NotFoundError, tf.errors.PermissionDeniedError, tf.errors.FailedPreconditionError)


@dataclasses.dataclass(frozen=True)
class RunResult:
    """What a run ended with: the step reached, where its final models are (None if it was stopped before),
    the last metrics, and the signal that stopped it early, if one did."""

    step: int
    train_steps: int
    final_dir: str | None
    metrics: dict
    stopped_by: str | None = None


def make_dataset(plan, start_micro_steps):
    """The training input of `plan`, positioned after `start_micro_steps` batches (an exact resume)."""
    pc, options = plan.pretraining, plan.options

    def dataset_fn(context=None):
        if plan.train:
            dataset = plan.train.dataset(pc.batch_size, seed=pc.seed, deterministic=True, input_context=context,
                                         skip_corrupt=options.skip_corrupt_records)
        else:
            documents = (text_documents(list(plan.text_files)) if plan.text_files
                         else tfds_documents(options.tfds_name, options.tfds_split, options.tfds_text_key,
                                             options.tfds_data_dir))
            dataset = streaming_dataset(documents, plan.tokenizer, pc.batch_size, pc.max_seq_length,
                                        seed=pc.seed, input_context=context)
        local_replicas = 1 if context is None else context.num_replicas_in_sync // context.num_input_pipelines
        return dataset.skip(start_micro_steps * local_replicas)

    strategy = plan.strategy
    if strategy.num_replicas_in_sync == 1 and not isinstance(strategy, tf.distribute.TPUStrategy):
        return dataset_fn()
    return strategy.distribute_datasets_from_function(dataset_fn)


def save_final(pretrainer, plan, step):
    """The run's models as a self-describing folder, written whole; its run config records `step`, the step its
    models reached, as `train_steps` (`final_is_current`)."""
    networks = pretrainer.export_networks()
    with saying_saved(plan.final_dir, *networks.values()):
        write_run_folder(plan.final_dir, networks, plan.model, plan.pretraining.replace(train_steps=step),
                         plan.tokenizer.vocabulary, extra_files=lambda tmp: write_tokenizer_files(
                             tmp, plan.tokenizer.vocabulary, model_max_length=plan.model.max_position_embeddings,
                             **plan.casing))


def final_is_current(folder, step):
    """Whether the run folder `folder` is whole and holds the models of `step` (a kill during the final save of an
    extended run leaves an older one)."""
    try:
        _, recorded = load_run_config(os.path.join(folder, RUN_CONFIG))
    except (FileNotFoundError, ValueError):  # none yet, or damaged
        return False
    return recorded.train_steps == step


def describe_extension(old, new, step):
    """What the schedule does when a run is resumed with another `train_steps`."""
    old_rate, new_rate = (float(learning_rate_schedule(c)(step)) for c in (old, new))
    return (f"train_steps {old.train_steps} → {new.train_steps}: the learning-rate schedule is now "
            f"{new.train_steps} steps long, so at step {step} the rate is {new_rate:.3g} (the old schedule's was "
            f"{old_rate:.3g}) and decays linearly to 0 at step {new.train_steps}")


def unreadable_file(message, patterns):
    """`(path, reason)` of the first file a TensorFlow error `message` names as `<path>; <reason>` that is one of
    `patterns` (paths, globs or folders: what the run reads), or None.

    >>> unreadable_file("Graph execution error:\\n\\nshards/a-1; Permission denied\\n\\t [[{{node IteratorGetNext}}]]",
    ...                 ["eval/*", "shards"])
    ('shards/a-1', 'Permission denied')
    """
    for line in message.splitlines():
        path, separator, reason = line.strip().partition("; ")
        if separator and any(path == pattern or fnmatch.fnmatchcase(path, pattern)
                             or path.startswith(pattern.rstrip("/") + "/") for pattern in patterns):
            return path, reason.split("\t")[0].strip()
    return None


def callbacks(plan, manager, stop):
    """The run's callbacks: a NaN guard, checkpoints (and on `stop`), the TensorBoard scalars."""
    pc, options = plan.pretraining, plan.options
    k = pc.gradient_accumulation_steps
    return [cb.NanGuard(), cb.CheckpointEvery(manager, options.save_every, stop), cb.TrainingScalars(
        os.path.join(options.model_dir, "logs"), options.log_every, pc.batch_size * k,
        pc.batch_size * k * pc.max_seq_length, lambda step: training_flops(plan.model, pc, step), write=plan.chief,
        total_steps=pc.train_steps)]


def validation(plan):
    """`fit`'s validation arguments: the evaluation shards, dropout off, `eval_steps` batches (none without)."""
    if not plan.eval:
        return {}
    return {"validation_data": plan.eval.dataset(plan.pretraining.batch_size, training=False).repeat(),
            "validation_steps": plan.options.eval_steps}


def train(pretrainer, manager, plan, done, stop):
    """Fits from micro-step `done` to the end of the run, phase by phase, in epochs that end at multiples of
    `eval_every` or at a phase's end, or until `stop` is requested; returns the micro-steps done."""
    pc = plan.pretraining
    k = pc.gradient_accumulation_steps
    if plan.previous is not None and plan.previous.train_steps != pc.train_steps and done:
        print(describe_extension(plan.previous, pc, done // k), flush=True)
    run_callbacks, evaluate = callbacks(plan, manager, stop), validation(plan)
    total, epoch = plan.total_micro_steps, min(plan.options.eval_every, pc.train_steps) * k
    while done < total and not stop.requested:
        phase_end = pretrainer.start_phase(done // k)
        until = total if phase_end is None else min(phase_end * k, total)
        # Epochs end at multiples of eval_every; a resumed run first reaches the next boundary.
        first = epoch - done % epoch
        steps, epochs = ((min(first, until - done), 1) if done % epoch or until - done < epoch
                         else (epoch, (until - done) // epoch))
        ends = done + steps * epochs
        try:
            pretrainer.fit(make_dataset(plan, done), steps_per_epoch=steps, epochs=epochs, callbacks=run_callbacks,
                           verbose=0, **(evaluate if ends % epoch == 0 or ends == total else {}))
        except tf.errors.DataLossError:
            damaged = find_corrupt_records([*(plan.train.files if plan.train else ()),
                                            *(plan.eval.files if plan.eval else ())])
            raise ValueError(f"damaged TFRecords: {describe_corrupt_records(damaged) or 'unknown file'}; the last "
                             "checkpoint is kept. Rebuild the shards, or re-run with --skip_corrupt_records") from None
        except tf.errors.InvalidArgumentError as error:
            if not any(text in error.message for text in _MALFORMED_RECORD_TEXTS):
                raise
            detail = error.message.split("ParallelMapV2: ")[-1].splitlines()[0][:300]
            raise ValueError(f"a TFRecord record unlike the first one read (int64 features of length "
                             f"{pc.max_seq_length} expected): {detail}; the last checkpoint is kept. "
                             "Rebuild the shards") from None
        except _FILE_ERRORS as error:
            named = unreadable_file(error.message, plan.read_paths())
            if named is None:
                raise
            raise ValueError(f"{named[0]} cannot be read while training ({named[1]}); the last checkpoint is kept: "
                             "make the file readable, or leave it out, then re-run") from None
        done = int(micro_steps(pretrainer.optimizer).numpy())
    return done


def finish(pretrainer, plan, step, finished, stop):
    """Says how the run ended (done; or stopped by a signal, what was saved) and returns its `RunResult`."""
    train_steps = plan.pretraining.train_steps
    metrics = {m.name: round(float(m.result()), 4) for m in pretrainer.metrics}
    if stop.requested:
        how = "preempted" if stop.requested_by == "SIGTERM" else "interrupted (Ctrl-C)"
        kept = f" and the final models in {plan.final_dir}" if finished else ""
        print(f"{how}: saved step {step}{kept}; re-run the same command to resume", flush=True)
        return RunResult(step, train_steps, plan.final_dir if finished else None, metrics, stop.requested_by)
    print(f"done: step {step} of {train_steps}; final models in {plan.final_dir}; "
          f"last metrics {json.dumps(metrics)}", flush=True)
    return RunResult(step, train_steps, plan.final_dir, metrics)
