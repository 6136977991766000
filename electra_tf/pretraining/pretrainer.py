"""`ElectraPretrainer`: generator + discriminator trained jointly by replaced token detection (Clark et al., 2020).

One step: mask the batch in-graph → generate → corrupt (sampled replacements, no gradient through them) →
discriminate, each piece filling in a `PretrainingOutputs`, then `step_losses`. The variants are the parts the
config names (`registry`; docs/pretraining_variants.md).
"""

import keras
import tensorflow as tf

from electra_tf.util import rng
from electra_tf.config import PretrainingConfig
from electra_tf.util.library_internals import BuiltAtConstruction
from electra_tf.models.base import as_config
from electra_tf.pretraining.batch_masking import BatchMasker
from electra_tf.pretraining.gdes import exported
from electra_tf.pretraining.masking import scatter_positions
from electra_tf.pretraining.outputs import PretrainingOutputs
from electra_tf.pretraining.registry import variant_parts
from electra_tf.pretraining.replica_jit import ReplicaJit
from electra_tf.pretraining.replicas import denominators
from electra_tf.pretraining.step_losses import step_losses
from electra_tf.pretraining.step_metrics import StepMetrics
from electra_tf.pretraining.training_algorithms import (
    JOINT_PHASE,
    PHASES,
    phase_at,
    phase_span,
    phase_variables,
    start_discriminator_phase,
)
from electra_tf.training.optimization import update_step_and_micro_batch
from electra_tf.training.speed import StepSpeed


def _network_inputs(inputs, input_ids, **extra):
    """A network's int32 inputs: `input_ids` with the batch's attention mask and token types."""
    return {"input_ids": input_ids, "attention_mask": tf.cast(inputs["attention_mask"], tf.int32),
            "token_type_ids": tf.cast(inputs["token_type_ids"], tf.int32), **extra}


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraPretrainer(BuiltAtConstruction, keras.Model):
    """Pre-trains an ELECTRA discriminator (or, with `objective="mlm"`, a BERT-style MLM) on batches of
    `{"input_ids", "attention_mask", "token_type_ids"}`, no labels. `word_continuation_ids` and `unigram_counts`:
    what the variant needs (`variant_inputs`). Keep `export_networks()["discriminator"]`.

    Example:
    >>> import numpy as np, keras
    >>> from electra_tf import ElectraConfig, ElectraPretrainer, PretrainingConfig
    >>> config = ElectraConfig(vocab_size=50, embedding_size=16, hidden_size=32, num_layers=1, num_heads=2,
    ...                        intermediate_size=64)
    >>> pretrainer = ElectraPretrainer(config, PretrainingConfig(max_seq_length=8), mask_token_id=4,
    ...                                special_token_ids=[0, 2, 3, 4])
    >>> ids = np.random.default_rng(0).integers(5, 50, size=(4, 8)).astype("int32")
    >>> ids[:, 0], ids[:, -1] = 2, 3
    >>> batch = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    >>> pretrainer.compile(optimizer=keras.optimizers.AdamW(1e-3))
    >>> history = pretrainer.fit(batch, batch_size=2, epochs=1, verbose=0)
    >>> sorted(history.history)[:3]
    ['loss', 'mlm_accuracy', 'mlm_loss']
    """

    def __init__(self, config, pretraining_config, mask_token_id, special_token_ids, word_continuation_ids=None,
                 unigram_counts=None, **kwargs):
        super().__init__(**kwargs)
        self.config = as_config(config)
        self.pretraining_config = pc = (pretraining_config if isinstance(pretraining_config, PretrainingConfig)
                                        else PretrainingConfig.from_dict(pretraining_config))
        self.masker = BatchMasker(pc, self.config.vocab_size, mask_token_id, special_token_ids, word_continuation_ids)
        self.parts = parts = variant_parts(pc, self.config, self.masker.special_token_ids, unigram_counts)
        self.objective, self.source, self.algorithm = parts.objective, parts.source, parts.algorithm
        self.phase = phase_at(self.algorithm, 0)

        networks = self.objective.networks(self.config, self.source)
        self.discriminator, self.generator = networks.discriminator, networks.generator
        for name, layer in {**networks.heads, **self.algorithm.heads(self.generator)}.items():
            setattr(self, name, layer)
        self.untrained_variable_ids = frozenset(id(variable) for variable in networks.untrained)
        self.unigram_counts = unigram_counts
        # Evaluation draws its own random numbers: a counter apart from the optimizer's, which keys training's.
        self.eval_counter = self.add_weight(shape=(), dtype="int64", initializer="zeros", trainable=False,
                                            aggregation="only_first_replica", name="eval_counter")
        self.step_metrics = StepMetrics(self.objective.reports, has_generator=self.generator is not None)
        # Dropout's seed states, which a `tf.train.Checkpoint` of the layers would miss, held in a `tf.Module`
        # (no weight of the `.keras` layout; `--init_checkpoint` takes the networks' weights only).
        self.dropout_seeds = tf.Module(name="dropout_seeds")
        self.dropout_seeds.states = [variable.value for variable in self.non_trainable_variables
                                     if "seed_generator_state" in variable.path]
        self.build()

    def build(self, input_shape=None):
        """Nothing left to build: a saved model reloads with no sample batch."""

    @property
    def is_electra(self):
        """Whether the objective discriminates (every objective but `mlm`)."""
        return self.discriminator is not None

    def export_networks(self):
        """`{"discriminator": ..., "generator": ...}` as saved and exported (a GDES discriminator folded; a network
        the variant lacks is left out)."""
        networks = {"discriminator": exported(self.discriminator) if self.is_electra else None,
                    "generator": self.generator}
        return {name: network for name, network in networks.items() if network is not None}

    phase_variables = phase_variables

    def start_phase(self, step):
        """Readies the next `fit` to train from update step `step` on, in that step's phase (a new phase drops the
        traced step); returns the step that phase ends at (None: the run's end)."""
        phase, first, end = phase_span(self.algorithm, step)
        if phase != self.phase:
            self.phase, self.train_function = phase, None
        if step == first and PHASES[phase].starts_from_generator:
            start_discriminator_phase(self)
        return end

    @property
    def backbone(self):
        """The `ElectraModel` encoder to fine-tune (the generator's for `objective="mlm"`)."""
        return (self.discriminator if self.is_electra else self.generator).backbone

    def checkpoint_networks(self):
        """A checkpoint's networks: `"model"` to fine-tune (the discriminator; MLM: the generator), `"generator"`."""
        networks = self.export_networks()
        return {"model": networks.pop("discriminator" if self.is_electra else "generator"), **networks}

    @property
    def metrics(self):  # only our trackers: Keras's own "loss" tracker would duplicate ours
        return self.step_metrics.metrics

    def mask_batch(self, inputs, counter, micro_batch=0):
        """The batch masked in-graph (a `MaskedBatch`) with step `counter`'s draws."""
        return self.masker(inputs, counter, micro_batch)

    def forward_masked(self, inputs, masked, counter, training, micro_batch=0):
        """Runs the generator on a masked batch, samples, runs the discriminator: a `PretrainingOutputs`."""
        phase = PHASES[self.phase]
        # A frozen generator (a two-stage run's discriminator phase, Fast-ELECTRA's) samples without dropout.
        outputs = self.generate(inputs, masked, training and phase.trains_generator and self.source.trained)
        if self.is_electra and phase.trains_discriminator:
            outputs = self.corrupt(outputs, counter, micro_batch)
            outputs = self.discriminate(inputs, outputs, training)
        return outputs

    def generate(self, inputs, masked, training):
        """The outputs with the generator's float32 MLM logits at the masked positions and its last hidden state."""
        outputs = PretrainingOutputs(masked, tf.cast(inputs["input_ids"], tf.int32),
                                     tf.cast(inputs["attention_mask"], tf.float32))
        if self.generator is None:
            return outputs
        generated = self.generator(_network_inputs(inputs, masked.input_ids, mask_positions=masked.positions),
                                   training=training)
        return outputs._replace(mlm_logits=tf.cast(generated["logits"], tf.float32),
                                generator_hidden=generated["last_hidden_state"])

    def corrupt(self, outputs, counter, micro_batch=0):
        """Samples the replacements (from the generator source), writes them into the batch; the RTD labels."""
        masked, input_ids = outputs.masked, outputs.input_ids
        row_ids = rng.global_row_ids(tf.shape(input_ids)[0], micro_batch)
        keys = rng.row_keys(self.pretraining_config.seed, counter, row_ids, rng.SAMPLING)
        sampled = self.source.sample(outputs.mlm_logits, masked, keys, counter)
        corrupted = scatter_positions(input_ids, masked.positions, masked.weights, sampled)
        # Replaced AND different from the original: a lucky sample is "original".
        replaced = tf.cast(tf.not_equal(corrupted, input_ids), tf.float32)
        return outputs._replace(sampled=sampled, corrupted_ids=corrupted, rtd_labels=replaced * outputs.real_tokens)

    def discriminate(self, inputs, outputs, training):
        """The outputs with the discriminator's float32 RTD logits on the corrupted batch and its last hidden
        state."""
        discriminated = self.discriminator(_network_inputs(inputs, outputs.corrupted_ids), training=training)
        return outputs._replace(rtd_logits=tf.cast(discriminated["logits"], tf.float32),
                                discriminator_hidden=discriminated["last_hidden_state"])

    def forward(self, inputs, counter, training):
        """Masks, generates, samples and discriminates with the draws of step `counter`: a `PretrainingOutputs`."""
        return self.forward_masked(inputs, self.mask_batch(inputs, counter), counter, training)

    def call(self, inputs, training=False):
        """The forward pass with fixed draws, as a dict of its computed fields."""
        outputs = self.forward(inputs, tf.constant(-1, tf.int64), training)
        masked = outputs.masked
        return {**{name: value for name, value in outputs._asdict().items()
                   if value is not None and name not in ("masked", "input_ids")},
                "masked_input_ids": masked.input_ids, "mask_positions": masked.positions,
                "mask_weights": masked.weights, "mask_labels": masked.labels}

    denominators = staticmethod(denominators)

    def pretraining_losses(self, outputs, denominators=None):
        """This replica's shares of the global losses, and under `"loss"` the sum the step minimises."""
        return self._losses_and_scored(outputs, denominators)[0]

    def _losses_and_scored(self, outputs, denominators=None):
        if denominators is None:
            denominators = self.denominators(outputs.masked, outputs.real_tokens)
        return step_losses(self.parts, self.phase, self.pretraining_config, outputs, denominators)

    def _losses_and_gradients(self, inputs, masked, counter, micro_batch, denominators):
        """Forward and backward on one replica: no cross-replica op, so it can be XLA-compiled."""
        variables = self.phase_variables()
        with tf.GradientTape() as tape:
            outputs = self.forward_masked(inputs, masked, counter, training=True, micro_batch=micro_batch)
            losses, scored = self._losses_and_scored(outputs, denominators)
            scaled = self.optimizer.scale_loss(losses["loss"])
        return outputs, losses, scored, tape.gradient(scaled, variables)

    def compile(self, optimizer="adamw", jit_compile="auto", speed=None, **kwargs):
        """Keras's `compile`, with `jit_compile=True` working under a multi-replica strategy too; `speed`: the
        block switches (`StepSpeed`)."""
        self.replica_jit = ReplicaJit(jit_compile)
        super().compile(optimizer=optimizer, jit_compile=self.replica_jit.keras_jit_compile, **kwargs)
        (speed or StepSpeed()).apply(self)

    def compile_from_config(self, config):
        # Keras skips this for a model that overrides `compile` and asks for this public override: its steps.
        self.compile(**keras.saving.deserialize_keras_object(config))
        self.optimizer.build(self.trainable_variables)

    def train_step(self, data):
        inputs, _, _ = keras.utils.unpack_x_y_sample_weight(data)
        # Draws are keyed by the update step; an accumulated update's micro-batches take successive rows.
        counter, micro_batch = update_step_and_micro_batch(self.optimizer)
        masked = self.mask_batch(inputs, counter, micro_batch)
        denominators = self.denominators(masked, inputs["attention_mask"])
        step = self.replica_jit.step(self._losses_and_gradients, self.phase)
        outputs, losses, scored, gradients = step(inputs, masked, counter, micro_batch, denominators)
        self.optimizer.apply(gradients, self.phase_variables())
        return self.step_metrics.update(outputs, losses, scored)

    def test_step(self, data):
        inputs, _, _ = keras.utils.unpack_x_y_sample_weight(data)
        counter = -2 - self.eval_counter.assign_add(1)  # apart from training's (>= 0) and call's (-1)
        phase, self.phase = self.phase, JOINT_PHASE  # evaluation runs (and reports) both networks in every phase
        try:
            outputs = self.forward(inputs, counter, training=False)
            return self.step_metrics.update(outputs, *self._losses_and_scored(outputs))
        finally:
            self.phase = phase

    def get_config(self):
        return {"name": self.name, "trainable": self.trainable, "config": self.config.to_dict(),
                "pretraining_config": self.pretraining_config.to_dict(), "mask_token_id": self.masker.mask_token_id,
                "special_token_ids": list(self.masker.special_token_ids),
                **{name: None if values is None else list(values) for name, values in (
                    ("word_continuation_ids", self.masker.word_continuation_ids),
                    ("unigram_counts", self.unigram_counts))}}
