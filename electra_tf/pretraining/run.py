"""A whole pre-training run, as `electra-pretrain` does it: plan → build → restore or init → loop → final save.

    result = run_pretraining(model, pretraining, RunOptions(model_dir="runs/small", vocab_file="vocab.txt",
                                                            train_files="data/pretrain_data.tfrecord-*"))
    result.final_dir  # 'runs/small/final', or None when a signal stopped the run first

Example (the `ElectraPretrainer` a run trains, as the benchmarks build theirs):
>>> from electra_tf.config import ElectraConfig, PretrainingConfig
>>> pretrainer = build_pretrainer(ElectraConfig(vocab_size=8, embedding_size=8, hidden_size=8, num_layers=1,
...                                             num_heads=1, intermediate_size=8, max_position_embeddings=16),
...                               PretrainingConfig(max_seq_length=16),
...                               ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "c"])
>>> pretrainer.optimizer.built, pretrainer.replica_jit.keras_jit_compile  # no XLA unless a `StepSpeed` says so
(True, False)
"""

import os

import tensorflow as tf

from electra_tf.checkpoints.ours import RUN_CONFIG
from electra_tf.config import save_run_config
from electra_tf.pretraining.init_checkpoint import load_initial_weights
from electra_tf.pretraining.loop import RunResult, final_is_current, finish, save_final, train
from electra_tf.pretraining.plan import TRAINING_DATA, RunOptions, plan_run
from electra_tf.pretraining.pretrainer import ElectraPretrainer
from electra_tf.pretraining.vocabulary_identity import recorded_vocabulary, remap_start, vocabulary_rows
from electra_tf.pretraining.variant_inputs import variant_inputs
from electra_tf.text.tokenizer import WordPieceTokenizer
from electra_tf.training.optimization import micro_steps, pretraining_optimizer
from electra_tf.training.speed import StepSpeed
from electra_tf.training.stop_signals import StopSignals
from electra_tf.util.atomic import remove_leftovers, write_json

__all__ = ["RunOptions", "RunResult", "build_pretrainer", "run_pretraining"]


def run_pretraining(model, pretraining, options, vocabulary=None):
    """Pre-trains `model` (an `ElectraConfig`) with `pretraining` (a `PretrainingConfig`) as `options`
    (`RunOptions`) say, resuming the run in `options.model_dir` if there is one; returns a `RunResult`. Bad input
    raises `ValueError` before anything is written."""
    plan = plan_run(model, pretraining, options, vocabulary)
    k = pretraining.gradient_accumulation_steps
    with plan.speed.running():
        with plan.strategy.scope():
            pretrainer = build_pretrainer(model, pretraining, plan.tokenizer, plan.train, plan.speed,
                                          counts_file=os.path.join(options.model_dir, "unigram_counts.json"))
        manager = restore_or_init(pretrainer, plan)
        done = int(micro_steps(pretrainer.optimizer).numpy())
        remove_leftovers(plan.final_dir)  # what a killed final save left: a whole model each
        if done >= plan.total_micro_steps:
            if not final_is_current(plan.final_dir, done // k):
                save_final(pretrainer, plan, done // k)
            print(f"already complete at step {done // k} of {pretraining.train_steps}; final models in "
                  f"{plan.final_dir} (raise --train_steps to train longer)", flush=True)
            return RunResult(done // k, pretraining.train_steps, plan.final_dir, {})
        # From here on Ctrl-C and SIGTERM ask to save and stop at the next step boundary.
        with StopSignals() as stop:
            done = train(pretrainer, manager, plan, done, stop)
            finished = done >= plan.total_micro_steps and not stop.requested
            if finished:  # (a signal during the save: saved, then stops)
                save_final(pretrainer, plan, done // k)
        return finish(pretrainer, plan, done // k, finished, stop)


def build_pretrainer(model, pretraining, vocabulary, shards=None, speed=None, counts_file=None):
    """A compiled `ElectraPretrainer` of the configs, its optimizer built, with the special tokens of `vocabulary`
    (a `vocab.txt` path, its tokens, or a `WordPieceTokenizer`) and what its variant needs (`variant_inputs`);
    `speed`: a `StepSpeed` (default: without XLA)."""
    tokenizer = vocabulary if isinstance(vocabulary, WordPieceTokenizer) else WordPieceTokenizer(vocabulary)
    speed = speed or StepSpeed(jit_compile=False)
    extra = variant_inputs(pretraining, tokenizer.vocabulary, shards, counts_file=counts_file)
    pretrainer = ElectraPretrainer(model, pretraining, tokenizer.mask_token_id, tokenizer.special_token_ids, **extra)
    pretrainer.compile(optimizer=pretraining_optimizer(pretraining), jit_compile=speed.jit_compile, speed=speed)
    pretrainer.optimizer.build(pretrainer.trainable_variables)
    return pretrainer


def restore_or_init(pretrainer, plan):
    """Restores the run's last checkpoint (an exact resume) or starts the weights from `--init_checkpoint`, then
    records the run in its model_dir; returns the run's `CheckpointManager`."""
    options = plan.options
    # The dropout seed states also at the root, where runs checkpointed before the pre-trainer held them have them.
    checkpoint = tf.train.Checkpoint(model=pretrainer, optimizer=pretrainer.optimizer,
                                     random_states=pretrainer.dropout_seeds.states)
    manager = tf.train.CheckpointManager(checkpoint, os.path.join(plan.own_dir, "checkpoints"),
                                         max_to_keep=options.keep_checkpoints)
    if manager.latest_checkpoint:
        checkpoint.restore(manager.latest_checkpoint).assert_consumed()
        print(f"resumed from {manager.latest_checkpoint}", flush=True)
        if plan.began_on is not None:
            warn_if_other_training_data(options.model_dir, plan.began_on, plan.training_data)
    elif options.init_checkpoint:
        recorded = recorded_vocabulary(options.init_checkpoint) if options.allow_vocabulary_change else None
        changed = recorded is not None and recorded[0] != plan.vocabulary_sha256  # meant so (plan_run checked)
        networks = [pretrainer.discriminator, *([pretrainer.generator] if pretrainer.source.trained else [])]
        rows = vocabulary_rows([n for n in networks if n is not None], plan.model.vocab_size) if changed else []
        started = load_initial_weights(pretrainer, options.init_checkpoint, options.init_generator_checkpoint)
        print(f"initialised from {started}", flush=True)
        if changed:
            print(remap_start(rows, options.init_checkpoint, plan.tokenizer.vocabulary, options.vocab_file),
                  flush=True)
    if plan.chief:  # every check passed: a refused run leaves no run config to refuse the corrected command
        save_run_config(os.path.join(options.model_dir, RUN_CONFIG), plan.model, plan.pretraining,
                        plan.vocabulary_sha256)
        if plan.began_on is None:  # a new run (or one begun before the record was kept)
            write_json(os.path.join(options.model_dir, TRAINING_DATA), plan.training_data)
    return manager


def warn_if_other_training_data(model_dir, began_on, now):
    """Says so when a run resumes on other data than it began on (`plan.describe_training_data`, both)."""
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
