"""`ElectraPretrainer`: generator + discriminator trained jointly by replaced token detection.

One step (Clark et al., 2020, and `run_pretraining.py::PretrainingModel`):
mask the batch in-graph → generator MLM loss at the masked positions → sample
replacements from the generator (Gumbel-max, no gradient through the sample) →
the discriminator labels every real token original (0) or replaced (1), a
sample equal to the original counting as original → loss
`gen_weight * MLM + disc_weight * RTD`, one optimizer over both networks.

Losses are normalised by the *global* number of predictions and real tokens
(one small all-reduce), so a step on R replicas has exactly the gradient of a
step on one device with the whole batch. When every replica holds the same
counts this is the usual per-replica mean divided by `num_replicas_in_sync`.
"""

import keras
import tensorflow as tf

from electra_tf import rng
from electra_tf.config import PretrainingConfig, generator_config
from electra_tf.layers.counter_dropout import counter_dropout_scope
from electra_tf.models.base import as_config
from electra_tf.models.discriminator import ElectraDiscriminator
from electra_tf.models.generator import ElectraGenerator
from electra_tf.pretraining.masking import mask_tokens, scatter_positions
from electra_tf.pretraining.sampling import sample_replacements
from electra_tf.training.optimization import accumulation_steps, micro_steps

_EPSILON = 1e-6  # As the original's `sum(w * loss) / (sum(w) + 1e-6)`.


def _global_sum(value):
    """Sum over all replicas in sync (the value itself on one replica)."""
    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync == 1:
        return value
    return context.all_reduce(tf.distribute.ReduceOp.SUM, value)


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

    Feed it batches of `{"input_ids", "attention_mask", "token_type_ids"}`
    (int `[batch, max_seq_length]`); it needs no labels. After training,
    `pretrainer.discriminator` (or `pretrainer.backbone`, the bare encoder)
    is the model to keep; `pretrainer.generator` is a usable masked LM.

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

    def __init__(self, config, pretraining_config, mask_token_id, special_token_ids, **kwargs):
        super().__init__(**kwargs)
        self.config = as_config(config)
        if not isinstance(pretraining_config, PretrainingConfig):
            pretraining_config = PretrainingConfig.from_dict(pretraining_config)
        self.pretraining_config = pretraining_config
        self.mask_token_id = int(mask_token_id)
        self.special_token_ids = tuple(sorted({int(i) for i in special_token_ids} | {self.mask_token_id}))
        for token_id in self.special_token_ids:
            if not 0 <= token_id < self.config.vocab_size:
                raise ValueError(f"special token id {token_id} is outside the vocabulary "
                                 f"(vocab_size={self.config.vocab_size})")

        # === Networks ===
        self.is_electra = pretraining_config.objective == "electra"
        if self.is_electra:
            self.discriminator = ElectraDiscriminator(self.config, name="discriminator")
            shared = (None if pretraining_config.untied_generator_embeddings
                      else self.discriminator.backbone.embedding)
            self.generator = ElectraGenerator(generator_config(self.config, pretraining_config),
                                              embedding=shared, name="generator")
        else:
            self.discriminator = None
            self.generator = ElectraGenerator(self.config, name="generator")
        # Evaluation draws its own random numbers: a counter apart from the
        # optimizer's step count, which keys the training draws.
        self.eval_counter = self.add_weight(
            shape=(), dtype="int64", initializer="zeros", trainable=False,
            aggregation="only_first_replica", name="eval_counter")

        # === Metrics ===
        self.loss_tracker = keras.metrics.Mean(name="loss")
        self.mlm_loss_tracker = keras.metrics.Mean(name="mlm_loss")
        self.mlm_accuracy = keras.metrics.SparseCategoricalAccuracy(name="mlm_accuracy")
        self._pretraining_metrics = [self.loss_tracker, self.mlm_loss_tracker, self.mlm_accuracy]
        if self.is_electra:
            self.sampled_mlm_accuracy = keras.metrics.Accuracy(name="sampled_mlm_accuracy")
            self.rtd_loss_tracker = keras.metrics.Mean(name="rtd_loss")
            self.rtd_accuracy = keras.metrics.BinaryAccuracy(name="rtd_accuracy")
            self.rtd_precision = keras.metrics.Precision(name="rtd_precision")
            self.rtd_recall = keras.metrics.Recall(name="rtd_recall")
            self.rtd_auc = keras.metrics.AUC(name="rtd_auc")
            self._pretraining_metrics += [self.sampled_mlm_accuracy, self.rtd_loss_tracker, self.rtd_accuracy,
                                          self.rtd_precision, self.rtd_recall, self.rtd_auc]
        # Both networks are functional models, built with all their weights, so
        # this model is too: saving and restoring need no sample batch, and a
        # compiled model reloads with its optimizer state.
        self.built = True

    @property
    def backbone(self):
        """The `ElectraModel` encoder to fine-tune (the generator's for `objective="mlm"`)."""
        return (self.discriminator if self.is_electra else self.generator).backbone

    def checkpoint_networks(self):
        """The networks a checkpoint of this pre-trainer holds: `"model"`, the one to fine-tune (the
        discriminator, or the generator of an MLM run), and the ELECTRA `"generator"`."""
        if self.is_electra:
            return {"model": self.discriminator, "generator": self.generator}
        return {"model": self.generator}

    @property
    def metrics(self):
        # Only our trackers: Keras's own "loss" tracker would duplicate ours.
        return self._pretraining_metrics

    # === Forward: the step's named pieces (public, so tests and benchmarks run the same code) ===
    def mask_batch(self, inputs, counter, micro_batch=0):
        """The batch masked in-graph (a `MaskedBatch`), with the draws of step `counter`."""
        pc = self.pretraining_config
        input_ids = tf.cast(inputs["input_ids"], tf.int32)
        row_ids = rng.global_row_ids(tf.shape(input_ids)[0], micro_batch)
        return mask_tokens(
            input_ids, inputs["attention_mask"], rng.row_keys(pc.seed, counter, row_ids, rng.MASKING),
            mask_prob=pc.mask_prob, max_predictions=pc.max_predictions_per_seq,
            mask_token_id=self.mask_token_id, special_token_ids=self.special_token_ids,
            vocab_size=self.config.vocab_size, mask_token_rate=pc.mask_token_rate,
            random_token_rate=pc.random_token_rate, with_replacement=pc.mask_with_replacement)

    def forward_masked(self, inputs, masked, counter, training, micro_batch=0):
        """Runs the generator on a masked batch, samples, runs the discriminator. A dict of tensors."""
        outputs = self.generate(inputs, masked, training)
        if self.is_electra:
            outputs.update(self.corrupt(inputs, masked, outputs["mlm_logits"], counter, micro_batch))
            outputs.update(self.discriminate(inputs, outputs["corrupted_ids"], training))
        return outputs

    def generate(self, inputs, masked, training):
        """The generator's MLM logits at the masked positions (float32), with the batch's real-token mask."""
        attention_mask = tf.cast(inputs["attention_mask"], tf.int32)
        generated = self.generator({
            "input_ids": masked.input_ids, "attention_mask": attention_mask,
            "token_type_ids": tf.cast(inputs["token_type_ids"], tf.int32), "mask_positions": masked.positions,
        }, training=training)
        return {"masked": masked, "mlm_logits": tf.cast(generated["logits"], tf.float32),
                "real_tokens": tf.cast(attention_mask, tf.float32)}

    def corrupt(self, inputs, masked, mlm_logits, counter, micro_batch=0):
        """Samples the replacements and writes them into the batch; the discriminator's labels."""
        pc = self.pretraining_config
        input_ids = tf.cast(inputs["input_ids"], tf.int32)
        row_ids = rng.global_row_ids(tf.shape(input_ids)[0], micro_batch)
        sampled = sample_replacements(
            mlm_logits, masked.labels, rng.row_keys(pc.seed, counter, row_ids, rng.SAMPLING),
            temperature=pc.temperature, disallow_correct=pc.disallow_correct)
        corrupted = scatter_positions(input_ids, masked.positions, masked.weights, sampled)
        # Replaced AND different from the original: a lucky sample is "original".
        real_tokens = tf.cast(inputs["attention_mask"], tf.float32)
        rtd_labels = tf.cast(tf.not_equal(corrupted, input_ids), tf.float32) * real_tokens
        return {"sampled": sampled, "corrupted_ids": corrupted, "rtd_labels": rtd_labels}

    def discriminate(self, inputs, corrupted_ids, training):
        """The discriminator's per-token RTD logits (float32) on the corrupted batch."""
        discriminated = self.discriminator({
            "input_ids": corrupted_ids, "attention_mask": tf.cast(inputs["attention_mask"], tf.int32),
            "token_type_ids": tf.cast(inputs["token_type_ids"], tf.int32),
        }, training=training)
        return {"rtd_logits": tf.cast(discriminated["logits"], tf.float32)}

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
        """Per-replica shares of the global losses: they sum over replicas to the global mean."""
        if denominators is None:
            denominators = self.denominators(outputs["masked"], outputs["real_tokens"])
        losses = {"mlm_loss": self.mlm_loss(outputs, denominators)}
        total = self.pretraining_config.gen_weight * losses["mlm_loss"]
        if self.is_electra:
            losses["rtd_loss"] = self.rtd_loss(outputs, denominators)
            total += self.pretraining_config.disc_weight * losses["rtd_loss"]
        losses["loss"] = total
        return losses

    @staticmethod
    def mlm_loss(outputs, denominators):
        """The generator's cross-entropy summed over this replica's masked slots, over the global count."""
        masked = outputs["masked"]
        per_slot = keras.losses.sparse_categorical_crossentropy(masked.labels, outputs["mlm_logits"], from_logits=True)
        return tf.reduce_sum(per_slot * masked.weights) / (denominators["predictions"] + _EPSILON)

    @staticmethod
    def rtd_loss(outputs, denominators):
        """The discriminator's sigmoid cross-entropy summed over this replica's real tokens, over the global count."""
        per_token = tf.nn.sigmoid_cross_entropy_with_logits(labels=outputs["rtd_labels"], logits=outputs["rtd_logits"])
        return tf.reduce_sum(per_token * outputs["real_tokens"]) / (denominators["tokens"] + _EPSILON)

    def _losses_and_gradients(self, inputs, masked, counter, micro_batch, denominators):
        """Forward and backward on one replica: no cross-replica op, so it can be XLA-compiled."""
        variables = self.trainable_variables
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
        self.mlm_loss_tracker.update_state(losses["mlm_loss"] * replicas)
        masked = outputs["masked"]
        self.mlm_accuracy.update_state(masked.labels, outputs["mlm_logits"], sample_weight=masked.weights)
        if self.is_electra:
            self.sampled_mlm_accuracy.update_state(masked.labels, outputs["sampled"],
                                                   sample_weight=masked.weights)
            self.rtd_loss_tracker.update_state(losses["rtd_loss"] * replicas)
            labels, real = outputs["rtd_labels"], outputs["real_tokens"]
            probabilities = tf.sigmoid(outputs["rtd_logits"])
            for metric in (self.rtd_accuracy, self.rtd_precision, self.rtd_recall, self.rtd_auc):
                metric.update_state(labels, probabilities, sample_weight=real)
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
            self._compiled_losses_and_gradients = tf.function(self._losses_and_gradients, jit_compile=True)
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
        step = (self._compiled_losses_and_gradients if getattr(self, "replica_jit_compile", False)
                else self._losses_and_gradients)
        # Dropout masks from `counter_dropout` (faster, and the same with XLA) in the traced step.
        with counter_dropout_scope(self):
            outputs, losses, gradients = step(inputs, masked, counter, micro_batch, denominators)
        self.optimizer.apply(gradients, self.trainable_variables)
        return self._update_metrics(outputs, losses)

    def test_step(self, data):
        inputs, _, _ = keras.utils.unpack_x_y_sample_weight(data)
        counter = -2 - self.eval_counter.assign_add(1)  # apart from training's (>= 0) and call's (-1)
        outputs = self.forward(inputs, counter, training=False)
        return self._update_metrics(outputs, self.pretraining_losses(outputs))

    # === Config ===
    def get_config(self):
        return {"name": self.name, "trainable": self.trainable,
                "config": self.config.to_dict(),
                "pretraining_config": self.pretraining_config.to_dict(),
                "mask_token_id": self.mask_token_id,
                "special_token_ids": list(self.special_token_ids)}

    @classmethod
    def from_config(cls, config):
        return cls(**config)
