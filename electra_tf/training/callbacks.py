"""Keras callbacks of a long pre-training run: checkpoints with preemption, scalars, a NaN guard.

Steps are optimizer updates (`optimizer.iterations`); with gradient
accumulation over k micro-batches, callbacks act only at update boundaries.
"""

import math
import time

import keras
import tensorflow as tf

from electra_tf.training.optimization import accumulation_steps, micro_steps


def optimizer_step(model):
    return int(model.optimizer.iterations.numpy())


def at_update_boundary(model):
    return int(micro_steps(model.optimizer).numpy()) % accumulation_steps(model.optimizer) == 0


class NonFiniteLossError(FloatingPointError):
    """A loss or metric became NaN or infinite."""


class NanGuard(keras.callbacks.Callback):
    """Stops the run at the first non-finite loss or metric, naming the step and the metrics.

    Put it before the checkpoint callback: the bad step is never saved, so the
    last checkpoint is the last good state.
    """

    def on_train_batch_end(self, batch, logs=None):
        bad = {k: float(v) for k, v in (logs or {}).items() if not math.isfinite(float(v))}
        if bad:
            step = optimizer_step(self.model)
            raise NonFiniteLossError(f"non-finite values at step {step}: {bad}; the last checkpoint "
                                     "holds the last good state")


class CheckpointEvery(keras.callbacks.Callback):
    """Saves with a `tf.train.CheckpointManager` every `every` steps, at the end, and when asked to stop.

    `stop` (a `training.stop_signals.StopSignals`, entered around training) records SIGTERM (a
    preemption notice) or SIGINT (Ctrl-C); at the next step boundary, or at the end of an epoch's
    evaluation, this callback saves and stops training; re-running the same command resumes from there.
    """

    def __init__(self, manager, every, stop=None):
        super().__init__()
        self.manager = manager
        self.every = every
        self.stop = stop

    @property
    def preempted(self):
        return self.stop is not None and self.stop.requested

    def _save(self):
        step = optimizer_step(self.model)
        bad = [v.path for v in self.model.trainable_variables if not bool(tf.reduce_all(tf.math.is_finite(v)))]
        if bad:
            raise NonFiniteLossError(f"non-finite weights at step {step} (e.g. {bad[:3]}); not saved: the last "
                                     "checkpoint holds the last good state")
        if self.manager.latest_checkpoint is None or not self.manager.latest_checkpoint.endswith(f"-{step}"):
            self.manager.save(checkpoint_number=step)

    def _save_and_stop_if_asked(self):
        if self.preempted:
            self._save()
            self.model.stop_training = True

    def on_train_batch_end(self, batch, logs=None):
        if not at_update_boundary(self.model):
            return  # between the micro-batches of one update
        if optimizer_step(self.model) % self.every == 0:
            self._save()
        self._save_and_stop_if_asked()

    def on_epoch_end(self, epoch, logs=None):
        self._save_and_stop_if_asked()  # a signal during the epoch's evaluation

    def on_train_end(self, logs=None):
        self._save()


class TrainingScalars(keras.callbacks.Callback):
    """Every `every` steps: TensorBoard scalars and one log line.

    Writes every training metric, the learning rate, examples/s, tokens/s and
    the training FLOPs so far (see `electra_tf.training.flops`); at each
    epoch end, the `val_*` metrics (written and printed).
    """

    def __init__(self, log_dir, every, examples_per_step, tokens_per_step, train_flops, write=True):
        super().__init__()
        self.every = every
        self.examples_per_step = examples_per_step
        self.tokens_per_step = tokens_per_step
        self.train_flops = train_flops  # a function of the step: FLOPs so far (a variant's phases cost apart)
        self.writer = tf.summary.create_file_writer(log_dir) if write else tf.summary.create_noop_writer()
        self._last = None

    def on_train_begin(self, logs=None):
        self._last = (time.perf_counter(), optimizer_step(self.model))

    def _learning_rate(self):
        optimizer = self.model.optimizer
        return float(optimizer.learning_rate.numpy() if hasattr(optimizer.learning_rate, "numpy")
                     else optimizer.learning_rate)

    def on_train_batch_end(self, batch, logs=None):
        step = optimizer_step(self.model)
        if step == self._last[1] or step % self.every or not at_update_boundary(self.model):
            return
        now = time.perf_counter()
        seconds = max(now - self._last[0], 1e-9)
        steps = step - self._last[1]
        self._last = (now, step)
        scalars = {k: float(v) for k, v in (logs or {}).items()}
        scalars.update({
            "learning_rate": self._learning_rate(),
            "examples_per_second": steps * self.examples_per_step / seconds,
            "tokens_per_second": steps * self.tokens_per_step / seconds,
            "train_flops": self.train_flops(step),
        })
        with self.writer.as_default(step=step):
            for name, value in scalars.items():
                tf.summary.scalar(name, value)
        self.writer.flush()
        shown = " - ".join(f"{k}: {v:.4g}" for k, v in scalars.items())
        print(f"step {step}: {shown}", flush=True)

    def on_epoch_end(self, epoch, logs=None):
        step = optimizer_step(self.model)
        evaluated = {name: float(value) for name, value in (logs or {}).items() if name.startswith("val_")}
        with self.writer.as_default(step=step):
            for name, value in evaluated.items():
                tf.summary.scalar(name, value)
        self.writer.flush()
        if evaluated:
            shown = " - ".join(f"{name[len('val_'):]}: {value:.4g}" for name, value in evaluated.items())
            print(f"evaluation at step {step}: {shown}", flush=True)
