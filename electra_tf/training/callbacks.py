"""Keras callbacks of a long pre-training run: checkpoints with preemption, scalars, a NaN guard. Steps are
optimizer updates: with gradient accumulation the callbacks act at update boundaries only."""

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
    """Stops the run at the first non-finite loss or metric, naming the step and the metrics (put it before the
    checkpoint callback: the bad step is never saved)."""

    def on_train_batch_end(self, batch, logs=None):
        bad = {k: float(v) for k, v in (logs or {}).items() if not math.isfinite(float(v))}
        if bad:
            step = optimizer_step(self.model)
            raise NonFiniteLossError(f"non-finite values at step {step}: {bad}; the last checkpoint "
                                     "holds the last good state")


class CheckpointEvery(keras.callbacks.Callback):
    """Saves with a `tf.train.CheckpointManager` every `every` steps, at the end, and, when `stop` (a
    `StopSignals`) records a signal, at the next step boundary or evaluation's end, then stops training."""

    def __init__(self, manager, every, stop=None):
        super().__init__()
        self.manager = manager
        self.every = every
        self.stop = stop

    def _save(self):
        step = optimizer_step(self.model)
        bad = [v.path for v in self.model.trainable_variables if not bool(tf.reduce_all(tf.math.is_finite(v)))]
        if bad:
            raise NonFiniteLossError(f"non-finite weights at step {step} (e.g. {bad[:3]}); not saved: the last "
                                     "checkpoint holds the last good state")
        if self.manager.latest_checkpoint is None or not self.manager.latest_checkpoint.endswith(f"-{step}"):
            self.manager.save(checkpoint_number=step)

    def _save_and_stop_if_asked(self):
        if self.stop is not None and self.stop.requested:
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


def duration(seconds):
    """`m:ss`, or `h:mm:ss` from an hour on.

    >>> duration(95), duration(3725)
    ('1:35', '1:02:05')
    """
    minutes, seconds = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


class TrainingScalars(keras.callbacks.Callback):
    """Every `every` steps: TensorBoard scalars (the metrics since the last line, learning rate, examples/s,
    tokens/s, `train_flops(step)`) and one line, `step N/M (p%): <metrics> · <time> left`; `val_*` at epoch ends."""

    def __init__(self, log_dir, every, examples_per_step, tokens_per_step, train_flops, write=True,
                 total_steps=None):
        super().__init__()
        self.every = every
        self.examples_per_step = examples_per_step
        self.tokens_per_step = tokens_per_step
        self.train_flops = train_flops
        self.total_steps = total_steps
        self.writer = tf.summary.create_file_writer(log_dir) if write else tf.summary.create_noop_writer()
        self._last = None
        self._first_step = None  # the first step this process trains, until it is done
        self._reset_pending = False

    def on_train_begin(self, logs=None):
        self._last = (time.perf_counter(), optimizer_step(self.model))
        if self._first_step is None:  # the first `fit` of the run: the step is compiled now
            self._first_step = self._last[1] + 1
            print("compiling the training step (the first step traces the graph)…", flush=True)

    def _position(self, step):
        return f"step {step}/{self.total_steps} ({100 * step // self.total_steps}%)" if self.total_steps \
            else f"step {step}"

    def on_train_batch_begin(self, batch, logs=None):
        # Reset when the next step starts, not when the line is printed: at the end of a `fit` the metrics still
        # hold the last window's values (the run's last line reads them).
        if self._reset_pending:
            self._reset_pending = False
            self.model.reset_metrics()

    def on_train_batch_end(self, batch, logs=None):
        step = optimizer_step(self.model)
        if step == self._first_step and at_update_boundary(self.model):
            self._first_step = 0  # done
            print(f"{self._position(step)}: compiled and ran the first step in "
                  f"{time.perf_counter() - self._last[0]:.1f} s; a line every {self.every} steps", flush=True)
            self._last = (time.perf_counter(), step)
            self._reset_pending = True
            return
        if step == self._last[1] or step % self.every or not at_update_boundary(self.model):
            return
        now = time.perf_counter()
        seconds = max(now - self._last[0], 1e-9)
        steps = step - self._last[1]
        self._last = (now, step)
        scalars = {k: float(v) for k, v in (logs or {}).items()}
        self._reset_pending = True  # the next line's metrics cover the steps after this one
        scalars.update({
            "learning_rate": float(keras.ops.convert_to_numpy(self.model.optimizer.learning_rate)),
            "examples_per_second": steps * self.examples_per_step / seconds,
            "tokens_per_second": steps * self.tokens_per_step / seconds,
            "train_flops": self.train_flops(step),
        })
        self._write(step, scalars)
        shown = " - ".join(f"{k}: {v:.4g}" for k, v in scalars.items())
        left = f" · {duration((self.total_steps - step) * seconds / steps)} left" if self.total_steps else ""
        print(f"{self._position(step)}: {shown}{left}", flush=True)

    def on_epoch_end(self, epoch, logs=None):
        step = optimizer_step(self.model)
        evaluated = {name: float(value) for name, value in (logs or {}).items() if name.startswith("val_")}
        self._write(step, evaluated)
        if evaluated:
            shown = " - ".join(f"{name[len('val_'):]}: {value:.4g}" for name, value in evaluated.items())
            print(f"evaluation at step {step}: {shown}", flush=True)

    def _write(self, step, scalars):
        with self.writer.as_default(step=step):
            for name, value in scalars.items():
                tf.summary.scalar(name, value)
        self.writer.flush()
