"""Pre-training's progress lines: a line while the step compiles, `step N/M` with the time left, and metrics of the
last window, not a running mean since the (re)start."""

import keras
import numpy as np
import tensorflow as tf

from electra_tf.training.callbacks import TrainingScalars


class StepCounter(keras.Model):
    """A model whose one metric, `step_value`, is the number of the step that computed it."""

    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(1)
        self.step_value = keras.metrics.Mean(name="step_value")

    def call(self, inputs):
        return self.dense(inputs)

    def train_step(self, data):
        self(data)
        self.optimizer.apply([tf.zeros_like(v) for v in self.trainable_variables], self.trainable_variables)
        self.step_value.update_state(tf.cast(self.optimizer.iterations, tf.float32))
        return {"step_value": self.step_value.result()}

    @property
    def metrics(self):
        return [self.step_value]


def lines_of_a_run(capsys, tmp_path, steps, fits=1):
    model = StepCounter()
    model.compile(optimizer=keras.optimizers.SGD(0.1))
    progress = TrainingScalars(str(tmp_path), 4, 2, 8, lambda step: 0.0, write=False, total_steps=steps * fits)
    data = tf.data.Dataset.from_tensors(np.ones((2, 3), np.float32)).repeat()
    for _ in range(fits):  # the run tool fits once per evaluation period, with the same callbacks
        model.fit(data, steps_per_epoch=steps, epochs=1, verbose=0, callbacks=[progress])
    return capsys.readouterr().out.splitlines(), model


def test_a_line_while_compiling_then_step_n_of_m_with_the_time_left(capsys, tmp_path):
    lines, _ = lines_of_a_run(capsys, tmp_path, 8)
    assert lines[0].startswith("compiling the training step")
    assert lines[1].startswith("step 1/8 (12%): compiled and ran the first step in ")
    assert lines[2].startswith("step 4/8 (50%): step_value: ") and lines[2].endswith(" left")
    assert lines[3].startswith("step 8/8 (100%): ") and lines[3].endswith("0:00 left")
    assert len(lines) == 4


def test_the_metrics_cover_the_steps_since_the_last_line(capsys, tmp_path):
    lines, model = lines_of_a_run(capsys, tmp_path, 8, fits=2)
    values = [float(line.split("step_value: ")[1].split(" ")[0]) for line in lines if "step_value" in line]
    # steps 2-4, 5-8 | 9-12, 13-16 (a running mean would give 3, 4.5 | 10.5, 12.5)
    assert values == [3.0, 6.5, 10.5, 14.5]
    assert sum(line.startswith("compiling") for line in lines) == 1
    assert float(model.step_value.result()) == 14.5  # after the run, the last window's (the run's last line)
