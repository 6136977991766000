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
pre-trainer (`PretrainingConfig`; docs/pretraining_variants.md), built from
the same pieces; `objectives` holds their losses. A two-stage run has two
phases, each its own traced step: the train function picks the phase from the
optimizer's step on the host and, at the switch-over, copies the generator
into the discriminator, so the checkpoint's weights and step are all the state
a resumed run needs.

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
from electra_tf.layers.heads import masked_lm_head
from electra_tf.models.base import as_config
from electra_tf.models.discriminator import ElectraDiscriminator
from electra_tf.models.generator import ElectraGenerator
from electra_tf.pretraining import objectives
from electra_tf.pretraining.gdes import DisentangledEmbedding, fold
from electra_tf.pretraining.masking import mask_tokens, scatter_positions
from electra_tf.pretraining.sampling import sample_replacements, sample_unigram
from electra_tf.training.flops import DISCRIMINATOR_PHASE, GENERATOR_PHASE, JOINT
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
        self.mask_token_id = int(mask_token_id)
        self.special_token_ids = tuple(sorted({int(i) for i in special_token_ids} | {self.mask_token_id}))
        self.word_continuation_ids = self._vocabulary_ids(word_continuation_ids, "word_continuation_ids",
                                                          pc.whole_word_masking)
        self.unigram_counts = self._unigram_counts(unigram_counts)
        for token_id in self.special_token_ids:
            if not 0 <= token_id < self.config.vocab_size:
                raise ValueError(f"special token id {token_id} is outside the vocabulary "
                                 f"(vocab_size={self.config.vocab_size})")
        # What the next traced step computes; a two-stage run's train function sets it per step.
        self.phase = GENERATOR_PHASE if pc.training_algorithm == "two_stage" else JOINT

        # === Networks ===
        self.is_electra = pc.objective != "mlm"
        if self.is_electra:
            self.discriminator, self.generator = self._build_networks()
        else:
            self.discriminator = None
            self.generator = ElectraGenerator(self.config, name="generator")
        if pc.objective in ("replace_mlm", "all_tokens_mlm"):  # the MLM that is kept, on the discriminator's encoder
            self.main_mlm_head = masked_lm_head(self.discriminator.backbone.embedding.word_embeddings, self.config,
                                                name="main_mlm_head")
            self.main_mlm_head.build((None, None, self.config.hidden_size))
        if pc.training_algorithm == "adversarial":
            self.reward_baseline = keras.layers.Dense(1, name="reward_baseline")
            self.reward_baseline.build((None, None, self.generator.config.hidden_size))
        # Evaluation draws its own random numbers: a counter apart from the
        # optimizer's step count, which keys the training draws.
        self.eval_counter = self.add_weight(
            shape=(), dtype="int64", initializer="zeros", trainable=False,
            aggregation="only_first_replica", name="eval_counter")

        # Replace MLM keeps a masked LM: its discriminator's RTD head is neither trained nor scored.
        self.trains_rtd = self.is_electra and pc.objective != "replace_mlm"

        # === Metrics ===
        self._pretraining_metrics = self._make_metrics()
        # Both networks are functional models, built with all their weights, so
        # this model is too: saving and restoring need no sample batch, and a
        # compiled model reloads with its optimizer state.
        self.built = True

    def _make_metrics(self):
        """The variant's trackers: loss; the generator's MLM; RTD; the kept masked LM of Replace / All-Tokens MLM."""
        self.loss_tracker = keras.metrics.Mean(name="loss")
        self.mlm_loss_tracker = keras.metrics.Mean(name="mlm_loss")
        self.mlm_accuracy = keras.metrics.SparseCategoricalAccuracy(name="mlm_accuracy")
        metrics = [self.loss_tracker]
        if self.generator is not None:
            metrics += [self.mlm_loss_tracker, self.mlm_accuracy]
        if self.trains_rtd:
            self.sampled_mlm_accuracy = keras.metrics.Accuracy(name="sampled_mlm_accuracy")
            self.rtd_loss_tracker = keras.metrics.Mean(name="rtd_loss")
            self.rtd_accuracy = keras.metrics.BinaryAccuracy(name="rtd_accuracy")
            self.rtd_precision = keras.metrics.Precision(name="rtd_precision")
            self.rtd_recall = keras.metrics.Recall(name="rtd_recall")
            self.rtd_auc = keras.metrics.AUC(name="rtd_auc")
            metrics += [self.sampled_mlm_accuracy, self.rtd_loss_tracker, self.rtd_accuracy,
                        self.rtd_precision, self.rtd_recall, self.rtd_auc]
        if self.pretraining_config.objective in ("replace_mlm", "all_tokens_mlm"):
            self.main_mlm_loss_tracker = keras.metrics.Mean(name="main_mlm_loss")
            self.main_mlm_accuracy = keras.metrics.Accuracy(name="main_mlm_accuracy")
            metrics += [self.main_mlm_loss_tracker, self.main_mlm_accuracy]
        return metrics

    def _vocabulary_ids(self, ids, name, needed):
        if ids is None:
            if needed:
                raise ValueError(f"ElectraPretrainer: whole_word_masking needs {name} (the tokenizer's "
                                 "`##` pieces: masking.continuation_token_ids(vocabulary))")
            return None
        ids = tuple(sorted({int(i) for i in ids}))
        if ids and not 0 <= ids[0] <= ids[-1] < self.config.vocab_size:
            raise ValueError(f"ElectraPretrainer: {name} holds ids outside the vocabulary "
                             f"(vocab_size={self.config.vocab_size})")
        return ids

    def _unigram_counts(self, counts):
        if self.pretraining_config.generator_type != "unigram":
            return None
        if counts is None or len(counts) != self.config.vocab_size or min(counts) < 0 or not sum(counts) > 0:
            raise ValueError(f"ElectraPretrainer: generator_type='unigram' needs unigram_counts, "
                             f"{self.config.vocab_size} non-negative token counts with a positive sum "
                             "(unigram.count_tokens)")
        # Special tokens are never drawn: they are not what the generator replaces masked words with.
        return tuple(0.0 if i in self.special_token_ids else float(c) for i, c in enumerate(counts))

    def _build_networks(self):
        """The discriminator and the generator (or `None` for a unigram one) with the configured sharing."""
        pc = self.pretraining_config
        if pc.generator_type == "unigram":
            return ElectraDiscriminator(self.config, name="discriminator"), None
        if pc.weight_sharing == "all":  # one encoder: the generator is the discriminator's with an MLM head
            discriminator = ElectraDiscriminator(self.config, name="discriminator")
            return discriminator, ElectraGenerator(self.config, backbone=discriminator.backbone, name="generator")
        if pc.weight_sharing == "gdes":
            generator = ElectraGenerator(generator_config(self.config, pc), name="generator")
            embedding = DisentangledEmbedding(generator.backbone.embedding, name="embeddings")
            return ElectraDiscriminator(self.config, embedding=embedding, name="discriminator"), generator
        discriminator = ElectraDiscriminator(self.config, name="discriminator")
        shared = None if pc.weight_sharing == "none" else discriminator.backbone.embedding
        return discriminator, ElectraGenerator(generator_config(self.config, pc), embedding=shared, name="generator")

    def export_networks(self):
        """`{"discriminator": ..., "generator": ...}` as they are saved and exported: plain networks with
        the usual weight layout (a GDES discriminator folded; a unigram run has no generator, an MLM run
        only its generator)."""
        if not self.is_electra:
            return {"generator": self.generator}
        networks = {"discriminator": (fold(self.discriminator) if self.pretraining_config.weight_sharing == "gdes"
                                      else self.discriminator)}
        if self.generator is not None:
            networks["generator"] = self.generator
        return networks

    # === Two-stage training ===
    def phase_at(self, step):
        """The phase optimizer step `step` trains in: generator-only MLM first in a two-stage run, else joint."""
        pc = self.pretraining_config
        if pc.training_algorithm != "two_stage":
            return JOINT
        return GENERATOR_PHASE if step < pc.two_stage_generator_steps else DISCRIMINATOR_PHASE

    def start_discriminator_phase(self):
        """Two-stage switch-over: the discriminator's encoder becomes a copy of the generator's (same size).
        The shared embedding block, if any, is one set of weights already; the RTD head keeps its start."""
        for target, source in zip(self.discriminator.backbone.weights, self.generator.backbone.weights):
            if target is not source:
                target.assign(source)

    def phase_variables(self):
        """What the current phase trains: the generator, then the discriminator (generator frozen), or all."""
        if self.phase == GENERATOR_PHASE:
            return self.generator.trainable_variables
        if self.phase == DISCRIMINATOR_PHASE:
            return self.discriminator.trainable_variables
        if not self.trains_rtd and self.is_electra:
            head = {id(v) for v in self.discriminator.head.trainable_variables}
            return [v for v in self.trainable_variables if id(v) not in head]
        return self.trainable_variables

    def make_train_function(self, force=False):
        """Keras's train function; a two-stage run gets one per phase and picks it before each step."""
        if self.pretraining_config.training_algorithm != "two_stage":
            return super().make_train_function(force)
        if self.train_function is not None and not force:
            return self.train_function
        if self.steps_per_execution > 1:
            raise ValueError("ElectraPretrainer: two-stage training changes phase between steps; "
                             "compile with steps_per_execution=1")
        functions = {}
        for phase in (GENERATOR_PHASE, DISCRIMINATOR_PHASE):
            super().make_train_function(force=True)  # traced at its first call, with `self.phase` set
            functions[phase] = self.train_function

        def train_function(iterator):
            micro_step = int(micro_steps(self.optimizer).numpy())
            accumulation = accumulation_steps(self.optimizer)
            self.phase = self.phase_at(micro_step // accumulation)
            if micro_step == self.pretraining_config.two_stage_generator_steps * accumulation:
                self.start_discriminator_phase()
            return functions[self.phase](iterator)

        self.train_function = train_function
        return train_function

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
        pc = self.pretraining_config
        input_ids = tf.cast(inputs["input_ids"], tf.int32)
        row_ids = rng.global_row_ids(tf.shape(input_ids)[0], micro_batch)
        return mask_tokens(
            input_ids, inputs["attention_mask"], rng.row_keys(pc.seed, counter, row_ids, rng.MASKING),
            mask_prob=pc.mask_prob, max_predictions=pc.max_predictions_per_seq,
            mask_token_id=self.mask_token_id, special_token_ids=self.special_token_ids,
            vocab_size=self.config.vocab_size, mask_token_rate=pc.mask_token_rate,
            random_token_rate=pc.random_token_rate, with_replacement=pc.mask_with_replacement,
            word_continuation=self._word_continuation_table())

    def _word_continuation_table(self):
        if self.word_continuation_ids is None:
            return None
        return tf.scatter_nd(tf.constant(self.word_continuation_ids, tf.int32)[:, None],
                             tf.ones([len(self.word_continuation_ids)], tf.bool), [self.config.vocab_size])

    def forward_masked(self, inputs, masked, counter, training, micro_batch=0):
        """Runs the generator on a masked batch, samples, runs the discriminator. A dict of tensors."""
        # A two-stage run's discriminator phase samples from the frozen generator without dropout.
        outputs = self.generate(inputs, masked, training and self.phase != DISCRIMINATOR_PHASE)
        if self.is_electra and self.phase != GENERATOR_PHASE:
            outputs.update(self.corrupt(inputs, masked, outputs.get("mlm_logits"), counter, micro_batch))
            outputs.update(self.discriminate(inputs, outputs["corrupted_ids"], training, masked.positions))
        return outputs

    def generate(self, inputs, masked, training):
        """The generator's MLM logits at the masked positions (float32; none for a unigram generator), with the
        batch's real-token mask (and, for adversarial training, the reward baseline's logits there)."""
        attention_mask = tf.cast(inputs["attention_mask"], tf.int32)
        if self.generator is None:
            return {"masked": masked, "real_tokens": tf.cast(attention_mask, tf.float32)}
        generated = self.generator({
            "input_ids": masked.input_ids, "attention_mask": attention_mask,
            "token_type_ids": tf.cast(inputs["token_type_ids"], tf.int32), "mask_positions": masked.positions,
        }, training=training)
        outputs = {"masked": masked, "mlm_logits": tf.cast(generated["logits"], tf.float32),
                   "real_tokens": tf.cast(attention_mask, tf.float32)}
        if self.pretraining_config.training_algorithm == "adversarial":
            # The baseline learns on the generator's features without training them: the reward alone does.
            hidden = tf.stop_gradient(tf.gather(generated["last_hidden_state"], masked.positions, batch_dims=1))
            outputs["baseline_logits"] = tf.cast(self.reward_baseline(hidden), tf.float32)[..., 0]
        return outputs

    def corrupt(self, inputs, masked, mlm_logits, counter, micro_batch=0):
        """Samples the replacements and writes them into the batch; the discriminator's labels.

        A unigram generator draws from the corpus counts on the same stream
        as a generator network's samples (a run has one or the other)."""
        pc = self.pretraining_config
        input_ids = tf.cast(inputs["input_ids"], tf.int32)
        row_ids = rng.global_row_ids(tf.shape(input_ids)[0], micro_batch)
        keys = rng.row_keys(pc.seed, counter, row_ids, rng.SAMPLING)
        if self.generator is None:
            sampled = sample_unigram(tf.constant(self.unigram_counts, tf.float32), masked.labels, keys)
        else:
            sampled = sample_replacements(mlm_logits, masked.labels, keys, temperature=pc.temperature,
                                          disallow_correct=pc.disallow_correct)
        corrupted = scatter_positions(input_ids, masked.positions, masked.weights, sampled)
        # Replaced AND different from the original: a lucky sample is "original".
        real_tokens = tf.cast(inputs["attention_mask"], tf.float32)
        rtd_labels = tf.cast(tf.not_equal(corrupted, input_ids), tf.float32) * real_tokens
        return {"sampled": sampled, "corrupted_ids": corrupted, "rtd_labels": rtd_labels}

    def discriminate(self, inputs, corrupted_ids, training, mask_positions=None):
        """The discriminator's per-token RTD logits (float32) on the corrupted batch; for Replace MLM and
        All-Tokens MLM also the kept model's MLM logits (at `mask_positions`, or at every position)."""
        discriminated = self.discriminator({
            "input_ids": corrupted_ids, "attention_mask": tf.cast(inputs["attention_mask"], tf.int32),
            "token_type_ids": tf.cast(inputs["token_type_ids"], tf.int32),
        }, training=training)
        outputs = {"rtd_logits": tf.cast(discriminated["logits"], tf.float32)}
        objective = self.pretraining_config.objective
        if objective in ("replace_mlm", "all_tokens_mlm"):
            if objective == "all_tokens_mlm":
                mask_positions = tf.broadcast_to(tf.range(tf.shape(corrupted_ids)[1]), tf.shape(corrupted_ids))
                outputs["main_mlm_labels"] = tf.cast(inputs["input_ids"], tf.int32)
            logits = self.main_mlm_head(discriminated["last_hidden_state"], mask_positions=mask_positions)
            outputs["main_mlm_logits"] = tf.cast(logits, tf.float32)
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
        """Per-replica shares of the global losses: they sum over replicas to the global mean."""
        if denominators is None:
            denominators = self.denominators(outputs["masked"], outputs["real_tokens"])
        pc = self.pretraining_config
        losses = {}
        if "mlm_logits" in outputs:
            losses["mlm_loss"] = self.mlm_loss(outputs, denominators)
        if "rtd_logits" in outputs and self.trains_rtd:
            losses["rtd_loss"] = (objectives.masked_rtd_loss if pc.objective == "electra_15"
                                  else self.rtd_loss)(outputs, denominators)
        if "main_mlm_logits" in outputs:
            losses["main_mlm_loss"] = (
                objectives.copy_mlm_loss(outputs, denominators) if pc.objective == "all_tokens_mlm"
                else self.mlm_loss({"masked": outputs["masked"], "mlm_logits": outputs["main_mlm_logits"]},
                                   denominators))
        if "baseline_logits" in outputs and "rtd_logits" in outputs:
            losses["policy_loss"], losses["baseline_loss"] = objectives.reinforce_losses(outputs, denominators)
        losses["loss"] = self.total_loss(losses)
        return losses

    def total_loss(self, losses):
        """The weighted sum the step minimises. The generator learns from `gen_weight ×` its MLM loss (from
        the REINFORCE and baseline losses when adversarial); the discriminator from `disc_weight ×` RTD, or
        the kept MLM from its own loss (Replace / All-Tokens MLM); a two-stage phase trains one of them."""
        pc = self.pretraining_config
        if self.phase == DISCRIMINATOR_PHASE:
            return pc.disc_weight * losses["rtd_loss"]
        generator_losses = ([losses["policy_loss"], losses["baseline_loss"]] if "policy_loss" in losses
                            else [losses["mlm_loss"]] if "mlm_loss" in losses else [])
        total = pc.gen_weight * tf.add_n(generator_losses) if generator_losses else 0.0
        if "main_mlm_loss" in losses:
            total += losses["main_mlm_loss"]
        elif "rtd_loss" in losses:
            total += pc.disc_weight * losses["rtd_loss"]
        return total

    @staticmethod
    def mlm_loss(outputs, denominators):
        """The generator's cross-entropy summed over this replica's masked slots, over the global count."""
        masked = outputs["masked"]
        per_slot = keras.losses.sparse_categorical_crossentropy(masked.labels, outputs["mlm_logits"], from_logits=True)
        return tf.reduce_sum(per_slot * masked.weights) / (denominators["predictions"] + objectives.EPSILON)

    @staticmethod
    def rtd_loss(outputs, denominators):
        """The discriminator's sigmoid cross-entropy summed over this replica's real tokens, over the global count."""
        return tf.reduce_sum(objectives.rtd_per_token(outputs) * outputs["real_tokens"]) / (
            denominators["tokens"] + objectives.EPSILON)

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
        if "rtd_loss" in losses:
            self.sampled_mlm_accuracy.update_state(masked.labels, outputs["sampled"],
                                                   sample_weight=masked.weights)
            self.rtd_loss_tracker.update_state(losses["rtd_loss"] * replicas)
            self._update_rtd_metrics(outputs)
        if "main_mlm_loss" in losses:
            self._update_main_mlm_metrics(outputs, losses["main_mlm_loss"] * replicas)
        logs = {metric.name: metric.result() for metric in self.metrics}
        if isinstance(tf.distribute.get_strategy(), tf.distribute.MultiWorkerMirroredStrategy):
            # Keras (3.15) reduces logs across workers with `reduce("MEAN", v,
            # axis=0)`, which needs a batch axis: give each value one.
            logs = {name: tf.reshape(value, [1]) for name, value in logs.items()}
        return logs

    def _update_rtd_metrics(self, outputs):
        labels, real, logits = outputs["rtd_labels"], outputs["real_tokens"], outputs["rtd_logits"]
        if self.pretraining_config.objective == "electra_15":  # scored where it is trained: the masked positions
            masked = outputs["masked"]
            labels, real, logits = (objectives.at_slots(labels, masked), masked.weights,
                                    objectives.at_slots(logits, masked))
        probabilities = tf.sigmoid(logits)
        for metric in (self.rtd_accuracy, self.rtd_precision, self.rtd_recall, self.rtd_auc):
            metric.update_state(labels, probabilities, sample_weight=real)

    def _update_main_mlm_metrics(self, outputs, loss):
        self.main_mlm_loss_tracker.update_state(loss)
        if self.pretraining_config.objective == "all_tokens_mlm":
            self.main_mlm_accuracy.update_state(outputs["main_mlm_labels"], objectives.copy_predictions(outputs),
                                                sample_weight=outputs["real_tokens"])
        else:
            masked = outputs["masked"]
            predictions = tf.argmax(outputs["main_mlm_logits"], axis=-1, output_type=tf.int32)
            self.main_mlm_accuracy.update_state(masked.labels, predictions, sample_weight=masked.weights)

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
        # Dropout masks from `counter_dropout` (faster, and the same with XLA) in the traced step.
        with counter_dropout_scope(self):
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
                "mask_token_id": self.mask_token_id,
                "special_token_ids": list(self.special_token_ids),
                "word_continuation_ids": _as_list(self.word_continuation_ids),
                "unigram_counts": _as_list(self.unigram_counts)}

    @classmethod
    def from_config(cls, config):
        return cls(**config)
