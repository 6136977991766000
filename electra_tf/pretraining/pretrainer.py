"""`ElectraPretrainer`: generator + discriminator trained jointly by replaced token detection.

One step (Clark et al., 2020, and `run_pretraining.py::PretrainingModel`):
mask the batch in-graph → generator MLM loss at the masked positions → sample
replacements from the generator (Gumbel-max, no gradient through the sample) →
the discriminator labels every real token original (0) or replaced (1), a
sample equal to the original counting as original → loss
`gen_weight * MLM + disc_weight * RTD`, one optimizer over both networks.

The paper's variants (weight sharing, unigram generator, two-stage and
adversarial training, ELECTRA 15 %, Replace MLM, All-Tokens MLM) and
DeBERTa-V3's gradient-disentangled embedding sharing are options of the same
pre-trainer (`PretrainingConfig`; docs/pretraining_variants.md). It asks three
parts the config names (`registry`): the objective (its heads, losses, metrics,
FLOPs), the generator source (the networks and where replacements come from)
and the training algorithm (a schedule of phases, each its own traced step).

Losses are normalised by the *global* number of predictions and real tokens
(one small all-reduce), so a step on R replicas has exactly the gradient of a
step on one device with the whole batch. When every replica holds the same
counts this is the usual per-replica mean divided by `num_replicas_in_sync`.
"""

import keras
import tensorflow as tf

from electra_tf import rng
from electra_tf.config import PretrainingConfig
from electra_tf.models.base import as_config
from electra_tf.pretraining.batch_masking import BatchMasker
from electra_tf.pretraining.masking import scatter_positions
from electra_tf.pretraining.registry import GENERATOR_SOURCES, variant_parts
from electra_tf.pretraining.training_algorithms import PHASES, start_discriminator_phase
from electra_tf.training.flops import JOINT
from electra_tf.training.optimization import accumulation_steps, micro_steps


def _global_sum(value):
    """Sum over all replicas in sync (the value itself on one replica)."""
    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync == 1:
        return value
    return context.all_reduce(tf.distribute.ReduceOp.SUM, value)


def _as_list(values):
    return None if values is None else list(values)


def _num_replicas():
    context = tf.distribute.get_replica_context()
    return 1 if context is None else context.num_replicas_in_sync


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraPretrainer(keras.Model):
    """Pre-trains an ELECTRA discriminator (or, with `objective="mlm"`, a BERT-style MLM).

    Args:
        config: the discriminator's `ElectraConfig` (or its dict).
        pretraining_config: a `PretrainingConfig` (or its dict).
        mask_token_id: the id of [MASK] in the vocabulary.
        special_token_ids: ids never selected for masking ([PAD], [CLS],
            [SEP], [MASK]; the tokenizer's `special_token_ids`).
        word_continuation_ids: the `##` pieces' ids, for
            `whole_word_masking` (`masking.continuation_token_ids`).
        unigram_counts: `[vocab_size]` token counts of the corpus, for
            `generator_type="unigram"` (`unigram.count_tokens`).

    Feed it batches of `{"input_ids", "attention_mask", "token_type_ids"}`
    (int `[batch, max_seq_length]`); it needs no labels. After training,
    `pretrainer.discriminator` (or `pretrainer.backbone`, the bare encoder)
    is the model to keep; `pretrainer.generator` is a usable masked LM
    (`None` for a unigram generator). `export_networks()` gives both as they
    are saved and exported (with `weight_sharing="gdes"`, the discriminator
    with its embedding residuals folded in).

    Example:
    >>> import numpy as np, keras
    >>> from electra_tf import ElectraConfig, ElectraPretrainer, PretrainingConfig
    >>> config = ElectraConfig(vocab_size=50, embedding_size=16, hidden_size=32,
    ...                        num_layers=1, num_heads=2, intermediate_size=64)
    >>> pretrainer = ElectraPretrainer(config, PretrainingConfig(max_seq_length=8),
    ...                                mask_token_id=4, special_token_ids=[0, 2, 3, 4])
    >>> ids = np.random.default_rng(0).integers(5, 50, size=(4, 8)).astype("int32")
    >>> ids[:, 0], ids[:, -1] = 2, 3
    >>> batch = {"input_ids": ids, "attention_mask": np.ones_like(ids),
    ...          "token_type_ids": np.zeros_like(ids)}
    >>> pretrainer.compile(optimizer=keras.optimizers.AdamW(1e-3))
    >>> history = pretrainer.fit(batch, batch_size=2, epochs=1, verbose=0)
    >>> sorted(history.history)[:3]
    ['loss', 'mlm_accuracy', 'mlm_loss']
    """

    def __init__(self, config, pretraining_config, mask_token_id, special_token_ids, word_continuation_ids=None,
                 unigram_counts=None, **kwargs):
        super().__init__(**kwargs)
        self.config = as_config(config)
        if not isinstance(pretraining_config, PretrainingConfig):
            pretraining_config = PretrainingConfig.from_dict(pretraining_config)
        self.pretraining_config = pc = pretraining_config
        self.masker = BatchMasker(pc, self.config.vocab_size, mask_token_id, special_token_ids,
                                  word_continuation_ids)
        parts = variant_parts(pc)
        self.objective, self.algorithm = parts.objective, parts.algorithm
        self.source = GENERATOR_SOURCES[pc.generator_type](self.config, pc, self.masker.special_token_ids,
                                                           unigram_counts=unigram_counts)
        # What the next traced step computes; a two-stage run's train function sets it per step.
        self.phase = self.algorithm.phase_at(0)

        # === Networks, and the parts' heads (pre-trainer attributes: checkpoints keep them by these names) ===
        self.discriminator, self.generator = self.objective.networks(self.config, self.source)
        heads = {**(self.objective.heads(self.discriminator, self.config) if self.is_electra else {}),
                 **self.algorithm.heads(self.generator)}
        for name, layer in heads.items():
            setattr(self, name, layer)
        # Evaluation draws its own random numbers: a counter apart from the
        # optimizer's step count, which keys the training draws.
        self.eval_counter = self.add_weight(
            shape=(), dtype="int64", initializer="zeros", trainable=False,
            aggregation="only_first_replica", name="eval_counter")

        # === Metrics ===
        self.loss_tracker = keras.metrics.Mean(name="loss")
        self.mlm_loss_tracker = keras.metrics.Mean(name="mlm_loss")
        self.mlm_accuracy = keras.metrics.SparseCategoricalAccuracy(name="mlm_accuracy")
        generator_metrics = [self.mlm_loss_tracker, self.mlm_accuracy] if self.generator is not None else []
        self._pretraining_metrics = [self.loss_tracker, *generator_metrics, *self.objective.make_metrics()]
        # Both networks are functional models, built with all their weights, so
        # this model is too: saving and restoring need no sample batch, and a
        # compiled model reloads with its optimizer state.
        self.built = True

    @property
    def is_electra(self):
        """Whether the objective discriminates (every objective but `mlm`)."""
        return self.objective.discriminates

    @property
    def trains_rtd(self):
        """Whether the discriminator's RTD head is trained and scored (Replace MLM keeps a masked LM instead)."""
        return self.objective.trains_rtd

    @property
    def unigram_counts(self):
        return self.source.unigram_counts

    def export_networks(self):
        """`{"discriminator": ..., "generator": ...}` as they are saved and exported: plain networks with
        the usual weight layout (a GDES discriminator folded; a unigram run has no generator, an MLM run
        only its generator)."""
        networks = {}
        if self.is_electra:
            networks["discriminator"] = self.source.exported_discriminator(self.discriminator)
        if self.generator is not None:
            networks["generator"] = self.generator
        return networks

    # === Training algorithm ===
    def phase_at(self, step):
        """The phase optimizer step `step` trains in: generator-only MLM first in a two-stage run, else joint."""
        return self.algorithm.phase_at(step)

    def start_discriminator_phase(self):
        """Two-stage switch-over: the discriminator's encoder becomes a copy of the generator's."""
        start_discriminator_phase(self)

    def phase_variables(self):
        """What the current phase trains: the generator, then the discriminator (generator frozen), or all."""
        phase = PHASES[self.phase]
        if not phase.trains_discriminator:
            return self.generator.trainable_variables
        if not phase.trains_generator:
            return self.discriminator.trainable_variables
        untrained = {id(v) for v in self.objective.untrained_variables(self.discriminator)}
        return [v for v in self.trainable_variables if id(v) not in untrained]

    def make_train_function(self, force=False):
        """Keras's train function, or the training algorithm's schedule of them (two-stage: one per phase).
        Kept as an override: a phase changes which variables the step trains, so each is its own trace."""
        return self.algorithm.train_function(self, super().make_train_function, force)

    @property
    def backbone(self):
        """The `ElectraModel` encoder to fine-tune (the generator's for `objective="mlm"`)."""
        return (self.discriminator if self.is_electra else self.generator).backbone

    def checkpoint_networks(self):
        """The networks a checkpoint of this pre-trainer holds: `"model"`, the one to fine-tune (the
        discriminator, or the generator of an MLM run), and the ELECTRA `"generator"`."""
        networks = self.export_networks()
        return {"model": networks.pop("discriminator" if self.is_electra else "generator"), **networks}

    @property
    def metrics(self):
        # Only our trackers: Keras's own "loss" tracker would duplicate ours.
        return self._pretraining_metrics

    # === Forward: the step's named pieces (public, so tests and benchmarks run the same code) ===
    def mask_batch(self, inputs, counter, micro_batch=0):
        """The batch masked in-graph (a `MaskedBatch`), with the draws of step `counter`."""
        return self.masker(inputs, counter, micro_batch)

    def forward_masked(self, inputs, masked, counter, training, micro_batch=0):
        """Runs the generator on a masked batch, samples, runs the discriminator. A dict of tensors."""
        phase = PHASES[self.phase]
        # A frozen generator (a two-stage run's discriminator phase, Fast-ELECTRA's) samples without dropout.
        outputs = self.generate(inputs, masked, training and phase.trains_generator and self.source.trained)
        if self.is_electra and phase.trains_discriminator:
            outputs.update(self.corrupt(inputs, masked, outputs.get("mlm_logits"), counter, micro_batch))
            outputs.update(self.discriminate(inputs, outputs["corrupted_ids"], training, masked.positions))
        return outputs

    def generate(self, inputs, masked, training):
        """The generator's MLM logits at the masked positions (float32; none for a unigram generator), with the
        batch's real-token mask (and what the training algorithm reads there: adversarial's baseline logits)."""
        attention_mask = tf.cast(inputs["attention_mask"], tf.int32)
        outputs = {"masked": masked, "real_tokens": tf.cast(attention_mask, tf.float32)}
        if self.generator is None:
            return outputs
        generated = self.generator({
            "input_ids": masked.input_ids, "attention_mask": attention_mask,
            "token_type_ids": tf.cast(inputs["token_type_ids"], tf.int32), "mask_positions": masked.positions,
        }, training=training)
        outputs["mlm_logits"] = tf.cast(generated["logits"], tf.float32)
        outputs.update(self.algorithm.generated_outputs(generated, masked))
        return outputs

    def corrupt(self, inputs, masked, mlm_logits, counter, micro_batch=0):
        """Samples the replacements (from the generator source) and writes them into the batch; the
        discriminator's labels."""
        input_ids = tf.cast(inputs["input_ids"], tf.int32)
        row_ids = rng.global_row_ids(tf.shape(input_ids)[0], micro_batch)
        keys = rng.row_keys(self.pretraining_config.seed, counter, row_ids, rng.SAMPLING)
        sampled = self.source.sample(mlm_logits, masked, keys, counter)
        corrupted = scatter_positions(input_ids, masked.positions, masked.weights, sampled)
        # Replaced AND different from the original: a lucky sample is "original".
        real_tokens = tf.cast(inputs["attention_mask"], tf.float32)
        rtd_labels = tf.cast(tf.not_equal(corrupted, input_ids), tf.float32) * real_tokens
        return {"sampled": sampled, "corrupted_ids": corrupted, "rtd_labels": rtd_labels}

    def discriminate(self, inputs, corrupted_ids, training, mask_positions=None):
        """The discriminator's per-token RTD logits (float32) on the corrupted batch, with what the objective
        reads off it (Replace / All-Tokens MLM: the kept model's MLM logits)."""
        discriminated = self.discriminator({
            "input_ids": corrupted_ids, "attention_mask": tf.cast(inputs["attention_mask"], tf.int32),
            "token_type_ids": tf.cast(inputs["token_type_ids"], tf.int32),
        }, training=training)
        outputs = {"rtd_logits": tf.cast(discriminated["logits"], tf.float32)}
        outputs.update(self.objective.discriminated_outputs(discriminated, inputs, corrupted_ids, mask_positions))
        return outputs

    def forward(self, inputs, counter, training):
        """Masks, generates, samples and discriminates with the draws of step `counter`: a dict of tensors."""
        return self.forward_masked(inputs, self.mask_batch(inputs, counter), counter, training)

    def call(self, inputs, training=False):
        """The forward pass with fixed draws: masked batch, logits, samples and labels."""
        outputs = self.forward(inputs, tf.constant(-1, tf.int64), training)
        masked = outputs.pop("masked")
        outputs.update(masked_input_ids=masked.input_ids, mask_positions=masked.positions,
                       mask_weights=masked.weights, mask_labels=masked.labels)
        return outputs

    # === Losses and metrics ===
    @staticmethod
    def denominators(masked, attention_mask):
        """Global counts of predictions and real tokens.

        One all-reduce for both: two independent collectives may run in a
        different order on each replica and deadlock.
        """
        counts = _global_sum(tf.stack([tf.reduce_sum(masked.weights),
                                       tf.reduce_sum(tf.cast(attention_mask, tf.float32))]))
        return {"predictions": counts[0], "tokens": counts[1]}

    def pretraining_losses(self, outputs, denominators=None):
        """Per-replica shares of the global losses (they sum over replicas to the global mean), each part's."""
        if denominators is None:
            denominators = self.denominators(outputs["masked"], outputs["real_tokens"])
        losses = {**self.source.losses(outputs, denominators), **self.objective.losses(outputs, denominators),
                  **self.algorithm.losses(outputs, denominators)}
        losses["loss"] = self.total_loss(losses)
        return losses

    def total_loss(self, losses):
        """The weighted sum the step minimises: `gen_weight ×` the generator's losses (its MLM; REINFORCE and
        baseline when adversarial; none when it is not trained) plus the objective's part (`disc_weight ×`
        RTD, or the kept MLM's loss); a two-stage phase trains one of them."""
        pc = self.pretraining_config
        generator_losses = self.algorithm.generator_losses(losses) if self.source.trained else []
        trains_generator = PHASES[self.phase].trains_generator and generator_losses
        total = pc.gen_weight * tf.add_n(generator_losses) if trains_generator else 0.0
        return total + self.objective.main_loss(losses, pc)

    def _losses_and_gradients(self, inputs, masked, counter, micro_batch, denominators):
        """Forward and backward on one replica: no cross-replica op, so it can be XLA-compiled."""
        variables = self.phase_variables()
        with tf.GradientTape() as tape:
            outputs = self.forward_masked(inputs, masked, counter, training=True, micro_batch=micro_batch)
            losses = self.pretraining_losses(outputs, denominators)
            scaled = self.optimizer.scale_loss(losses["loss"])
        return outputs, losses, tape.gradient(scaled, variables)

    def _update_metrics(self, outputs, losses):
        # Mean trackers average over replicas; each replica holds its share of
        # the global loss, so R × share averages to the global value.
        replicas = tf.cast(_num_replicas(), tf.float32)
        self.loss_tracker.update_state(losses["loss"] * replicas)
        masked = outputs["masked"]
        if "mlm_loss" in losses:
            self.mlm_loss_tracker.update_state(losses["mlm_loss"] * replicas)
            self.mlm_accuracy.update_state(masked.labels, outputs["mlm_logits"], sample_weight=masked.weights)
        self.objective.update_metrics(outputs, losses, replicas)
        logs = {metric.name: metric.result() for metric in self.metrics}
        if isinstance(tf.distribute.get_strategy(), tf.distribute.MultiWorkerMirroredStrategy):
            # Keras (3.15) reduces logs across workers with `reduce("MEAN", v,
            # axis=0)`, which needs a batch axis: give each value one.
            logs = {name: tf.reshape(value, [1]) for name, value in logs.items()}
        return logs

    # === Steps ===
    def compile(self, optimizer="adamw", jit_compile="auto", **kwargs):
        """Keras's `compile`; `jit_compile=True` also works under a multi-replica strategy.

        Keras's whole-step XLA fails under `MirroredStrategy` (replica
        variables accessed from another device). There, each replica's
        forward and backward pass is compiled with
        `tf.function(jit_compile=True)` inside `train_step`, and the
        cross-replica sums and the optimizer update stay outside.
        """
        strategy = tf.distribute.get_strategy()
        self.replica_jit_compile = jit_compile is True and strategy.num_replicas_in_sync > 1
        if self.replica_jit_compile:
            jit_compile = False
            self._compiled_steps = {}
        super().compile(optimizer=optimizer, jit_compile=jit_compile, **kwargs)

    def _maybe_symbolic_build(self, iterator=None, data_batch=None):
        # Keras peeks at a first batch to build what is unbuilt, and under
        # MultiWorkerMirroredStrategy fails reducing a dict of per-replica
        # values (keras 3.15). The networks and metrics are built at
        # construction; only the optimizer may be left.
        if self.optimizer is not None and not self.optimizer.built:
            with self.distribute_strategy.scope():
                self.optimizer.build(self.trainable_variables)

    def compile_from_config(self, config):
        # Keras skips this for models that override `compile`; these are its steps.
        self.compile(**keras.saving.deserialize_keras_object(config))
        self.optimizer.build(self.trainable_variables)

    def train_step(self, data):
        inputs, _, _ = keras.utils.unpack_x_y_sample_weight(data)
        # Draws are keyed by the update step; micro-batches of an accumulated
        # update take successive rows (see `rng.global_row_ids`).
        micro_step = tf.convert_to_tensor(micro_steps(self.optimizer))  # a tensor, not the Keras variable
        accumulation = accumulation_steps(self.optimizer)
        counter, micro_batch = micro_step // accumulation, micro_step % accumulation
        masked = self.mask_batch(inputs, counter, micro_batch)
        denominators = self.denominators(masked, inputs["attention_mask"])
        step = self._losses_and_gradients
        if getattr(self, "replica_jit_compile", False):  # one compiled function per phase
            step = self._compiled_steps.setdefault(self.phase, tf.function(step, jit_compile=True))
        outputs, losses, gradients = step(inputs, masked, counter, micro_batch, denominators)
        self.optimizer.apply(gradients, self.phase_variables())
        return self._update_metrics(outputs, losses)

    def test_step(self, data):
        inputs, _, _ = keras.utils.unpack_x_y_sample_weight(data)
        counter = -2 - self.eval_counter.assign_add(1)  # apart from training's (>= 0) and call's (-1)
        phase, self.phase = self.phase, JOINT  # evaluation runs (and reports) both networks in every phase
        try:
            outputs = self.forward(inputs, counter, training=False)
            return self._update_metrics(outputs, self.pretraining_losses(outputs))
        finally:
            self.phase = phase

    # === Config ===
    def get_config(self):
        return {"name": self.name, "trainable": self.trainable,
                "config": self.config.to_dict(),
                "pretraining_config": self.pretraining_config.to_dict(),
                "mask_token_id": self.masker.mask_token_id,
                "special_token_ids": list(self.masker.special_token_ids),
                "word_continuation_ids": _as_list(self.masker.word_continuation_ids),
                "unigram_counts": _as_list(self.unigram_counts)}

    @classmethod
    def from_config(cls, config):
        return cls(**config)
