"""Watching a fine-tuning run: `Progress` (lines with an ETA, TensorBoard scalars) and `DevEvaluation` (dev scores
during training, the best model kept, a warning when the model learned one class or finds no entity); the two
Keras callbacks `finetune` adds. docs/finetuning.md shows what a run prints.

Example (what a run prints):
>>> print(progress_line(step=40, total=120, loss=0.5123, examples_per_second=85.3, seconds_left=95))
step 40/120 (33%) · loss 0.5123 · 85.3 examples/s · 1:35 left
>>> majority_baseline(np.array([0, 1, 1]), np.array([1, 0, 0, 1]))
0.5
>>> line = one_class_warning(np.array([2, 2, 2, 2, 0]), ("neg", "neu", "pos"), learning_rate=3e-4, share=0.8)
>>> print(line)  # doctest: +NORMALIZE_WHITESPACE
warning: 4 of 5 dev predictions (80%) are 'pos': the model learned little beyond one class;
try a higher --learning_rate (this run: 0.0003) or more --epochs
>>> print(entity_warning({"precision": 0.1, "recall": 0.02, "f1": 0.0333}, learning_rate=3e-4))
... # doctest: +NORMALIZE_WHITESPACE
warning: dev entity F1 is 0.0333 (precision 0.1000, recall 0.0200): the model finds almost no entity;
try a higher --learning_rate (this run: 0.0003), more --epochs or a smaller --batch_size (more steps)
"""

import collections
import time

import keras
import numpy as np
import tensorflow as tf

from electra_tf.training.callbacks import duration


def progress_line(step, total, loss, examples_per_second, seconds_left):
    return (f"step {step}/{total} ({100 * step // total}%) · loss {loss:.4f} · {examples_per_second:.1f} examples/s"
            f" · {duration(seconds_left)} left")


def _writer(log_dir):
    return tf.summary.create_file_writer(log_dir) if log_dir else tf.summary.create_noop_writer()


# Steps that always get a line, whatever `every` is: the first (its time includes compiling the step) and an
# early one whose rate is already the steady one.
EARLY_STEPS = (1, 10)


class Progress(keras.callbacks.Callback):
    """A line while the step compiles, progress lines at `EARLY_STEPS`, every `every` steps and at the last;
    loss and learning rate to TensorBoard."""

    def __init__(self, total_steps, examples_per_step, every=50, log_dir=None, report=print):
        super().__init__()
        self.total_steps, self.examples_per_step, self.every = total_steps, examples_per_step, every
        self.writer, self.report = _writer(log_dir), report
        self._start = self._last = None

    def on_train_begin(self, logs=None):
        self._start = time.perf_counter()
        self.report("compiling the training step (the first step traces the model's graph)…")

    def on_train_batch_end(self, batch, logs=None):
        step = batch + 1
        if step == 1:
            self._last = (time.perf_counter(), 1)  # the first step also traces the graph: rates start after it
        if step % self.every and step != self.total_steps and step not in EARLY_STEPS:
            return
        now = time.perf_counter()
        loss = float((logs or {}).get("loss", np.nan))
        since, done = self._last
        if step > done:
            rate = (step - done) / max(now - since, 1e-9)
            self.report(progress_line(step, self.total_steps, loss, rate * self.examples_per_step,
                                      (self.total_steps - step) / rate))
        else:
            self.report(f"step 1/{self.total_steps} · loss {loss:.4f} · compiled and ran the first step in "
                        f"{now - self._start:.1f} s")
        learning_rate = self.model.optimizer.learning_rate
        with self.writer.as_default(step=step):
            tf.summary.scalar("loss", loss)
            tf.summary.scalar("learning_rate", float(learning_rate.numpy() if hasattr(learning_rate, "numpy")
                                                     else learning_rate))
        self.writer.flush()


# The share of dev predictions in one class above which a run says it learned little else.
ONE_CLASS_SHARE = 0.95


def majority_baseline(train_labels, dev_labels):
    """The dev accuracy of always answering the training split's most common class."""
    majority = collections.Counter(np.asarray(train_labels).tolist()).most_common(1)[0][0]
    return float(np.mean(np.asarray(dev_labels) == majority))


# The dev entity F1 under which a tagging run says it found almost no entity.
NEAR_ZERO_ENTITY_F1 = 0.05


def entity_warning(scores, learning_rate):
    """One line when `scores` are a tagging task's entity scores with F1 under `NEAR_ZERO_ENTITY_F1`, else None."""
    if not {"precision", "recall", "f1"} <= set(scores) or scores["f1"] >= NEAR_ZERO_ENTITY_F1:
        return None
    return (f"warning: dev entity F1 is {scores['f1']:.4f} (precision {scores['precision']:.4f}, recall "
            f"{scores['recall']:.4f}): the model finds almost no entity; try a higher --learning_rate (this run: "
            f"{learning_rate:g}), more --epochs or a smaller --batch_size (more steps)")


def one_class_warning(predicted, label_names, learning_rate, share=ONE_CLASS_SHARE):
    """One line when at least `share` of the `predicted` class ids are one class, else None."""
    top, count = collections.Counter(np.asarray(predicted).tolist()).most_common(1)[0]
    if count < share * len(predicted):
        return None
    name = repr(label_names[top]) if label_names else f"class {top}"
    return (f"warning: {count} of {len(predicted)} dev predictions ({100 * count / len(predicted):.0f}%) are "
            f"{name}: the model learned little beyond one class; try a higher --learning_rate "
            f"(this run: {learning_rate:g}) or more --epochs")


class DevEvaluation(keras.callbacks.Callback):
    """Scores `examples` every `every` steps and at the last step into `history` (`best`: the best by
    `task.main_metric`, whose weights the model ends with under `keep_best`); `baseline` is printed beside."""

    def __init__(self, task, examples, every, total_steps, steps_per_epoch, log_dir=None, keep_best=False,
                 report=print, baseline=None):
        super().__init__()
        self.task, self.examples, self.every, self.total_steps = task, examples, every, total_steps
        self.steps_per_epoch, self.keep_best, self.report = steps_per_epoch, keep_best, report
        self.writer, self.baseline = _writer(log_dir), baseline
        self.history, self.best, self._best_weights = [], None, None
        self._classes = {}  # step → the class ids predicted there (tasks with one class per example)

    def on_train_batch_end(self, batch, logs=None):
        step = batch + 1
        if step % self.every == 0 or step == self.total_steps:
            self.evaluate(step)

    def evaluate(self, step):
        predictions = self.task.predict(self.model, self.examples)
        scores = self.task.score(self.examples, predictions)
        classes = self.task.predicted_classes(predictions)
        if classes is not None:
            self._classes[step] = classes
        metric = self.task.main_metric(scores)
        record = {"step": step, "epoch": round(step / self.steps_per_epoch, 2), **scores}
        self.history.append(record)
        is_best = self.best is None or scores[metric] > self.best[metric]
        if is_best:
            self.best = record
            if self.keep_best:
                self._best_weights = [np.array(w) for w in self.model.get_weights()]
        shown = " · ".join(f"{name} {value:.4f}" for name, value in scores.items() if isinstance(value, float))
        baseline = "" if self.baseline is None else f" (majority class {self.baseline:.4f})"
        self.report(f"dev at step {step} (epoch {record['epoch']:g}): {shown}{baseline}"
                    + (" (best)" if is_best else ""))
        with self.writer.as_default(step=step):
            for name, value in scores.items():
                tf.summary.scalar(f"dev/{name}", float(value))
        self.writer.flush()

    def on_train_end(self, logs=None):
        kept = self.history[-1] if self.history else None
        if self.keep_best and self._best_weights is not None and self.best is not self.history[-1]:
            self.model.set_weights(self._best_weights)
            self.report(f"kept the best dev model: step {self.best['step']} (epoch {self.best['epoch']:g})")
            kept = self.best
        if kept is not None and kept["step"] in self._classes:
            warning = one_class_warning(self._classes[kept["step"]], self.task.label_names,
                                        self.task.config.learning_rate)
            if warning:
                self.report(warning)
        warning = kept is not None and entity_warning(kept, self.task.config.learning_rate)
        if warning:
            self.report(warning)
