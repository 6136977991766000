"""What each task's serving signatures take and give (`docs/serving.md`, "Signatures"): one class per model kind,
whose graph functions use TF and tf-text ops only, so a SavedModel needs no Python at serving time.

Example:
>>> import numpy as np
>>> from electra_tf import ElectraConfig, ElectraForSequenceClassification
>>> from electra_tf.text.tokenizer import WordPieceTokenizer
>>> tokenizer = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "good", "bad", "film"])
>>> config = ElectraConfig(vocab_size=8, embedding_size=8, hidden_size=8, num_layers=1, num_heads=1,
...                        intermediate_size=8)
>>> task = make_serving_task(ElectraForSequenceClassification(config, num_labels=2), tokenizer, max_seq_length=8,
...                          label_names=["neg", "pos"])
>>> outputs = task.serve_text(text=tf.constant(["Good film", "bad"]))
>>> sorted(outputs), outputs["probabilities"].shape
(['label', 'label_id', 'logits', 'probabilities'], TensorShape([2, 2]))
"""

import tensorflow as tf

from electra_tf.data.tasks import tagging
from electra_tf.text import answer_spans
from electra_tf.text import featurize
from electra_tf.export.compiled import CompiledCall
from electra_tf.export.constants import constant_weights
from electra_tf.models.base import INPUT_NAMES

SERVING_KINDS = ("discriminator", "classification", "regression", "tagging", "question_answering", "multiple_choice")


class ServingTask:
    """The shared part: signatures' input specs, the model call, label names."""

    task = None
    text_inputs = ("text",)
    pad_to_max_length = False  # True: every request padded to max_seq_length (fixed shapes, as for XLA)
    sequence_axes = {}  # model output → its sequence axis (for `CompiledCall`)

    def __init__(self, model, tokenizer, max_seq_length, label_names=None):
        self.model, self.tokenizer, self.max_seq_length = model, tokenizer, int(max_seq_length)
        # The raw-text path runs the model through this: `serve_ids` itself, or (in an export) its
        # traced function, so the model is traced once and both signatures give the same numbers.
        self.run_ids = self.serve_ids
        self.compiled = None  # a `CompiledCall` when the model call is compiled with XLA (`compile_model`)
        self.constants = None  # a `ConstantWeights` when the weights are graph constants (`use_constant_weights`)
        self.label_names = None if label_names is None else [str(name) for name in label_names]
        self.cls_id, self.sep_id, self.pad_id = tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id
        positions = model.config.max_position_embeddings
        if not 3 <= self.max_seq_length <= positions:
            raise ValueError(f"max_seq_length must be in 3..{positions} (the model's position embeddings), "
                             f"got {max_seq_length}")

    def text_signature(self):
        return [tf.TensorSpec([None], tf.string, name=name) for name in self.text_inputs]

    def ids_signature(self):
        return [tf.TensorSpec([None, None], tf.int32, name=name) for name in INPUT_NAMES]

    def example_features(self):
        return {name: tf.io.FixedLenFeature([], tf.string) for name in self.text_inputs}

    def call_model(self, input_ids, attention_mask, token_type_ids):
        inputs = {"input_ids": input_ids, "attention_mask": attention_mask, "token_type_ids": token_type_ids}
        if self.compiled is not None:
            return self.compiled(inputs)
        return self.model(inputs, training=False) if self.constants is None else self.constants(inputs)

    def use_constant_weights(self):
        """The weights as constants of every signature's graph (before `compile_model`)."""
        self.constants = constant_weights(self.model)

    def compile_model(self):
        """Every signature's model call compiled with XLA over padded shapes (`electra_tf.export.compiled`)."""
        self.compiled = CompiledCall(self.model, self.sequence_axes, self.model.config.max_position_embeddings,
                                     call=self.constants)

    def with_labels(self, outputs, label_id, mask=None):
        """Adds `label` (strings, "" where `mask` is False) beside `label_id` when label names were given."""
        if self.label_names is not None:
            names = tf.gather(tf.constant(self.label_names), tf.maximum(label_id, 0))
            outputs["label"] = names if mask is None else tf.where(mask, names, "")
        return outputs

    def encode(self, texts, pairs=None):
        """Texts (and pairs, of as many rows) truncated at `max_seq_length` and padded to the request's longest text."""
        if pairs is not None:
            tf.debugging.assert_equal(tf.shape(texts)[0], tf.shape(pairs)[0],
                                      message="text and text_pair need the same number of rows (one pair per row)")
        return featurize.encode(self.tokenizer, self.max_seq_length, texts, pairs, self.pad_to_max_length)

    def to_max_length(self, values, fill):
        """Per-token outputs of a request padded to its longest text, padded on to `max_seq_length` (the
        documented shape)."""
        missing = self.max_seq_length - tf.shape(values)[-1]
        return tf.ensure_shape(tf.pad(values, [[0, 0], [0, missing]], constant_values=fill),
                               [None, self.max_seq_length])


class DiscriminatorServing(ServingTask):
    """Per-token replaced-token probabilities of a pre-trained discriminator, with each token's characters."""

    task = "discriminator"
    sequence_axes = {"logits": 1}

    def serve_ids(self, input_ids, attention_mask, token_type_ids):
        logits = tf.cast(self.call_model(input_ids, attention_mask, token_type_ids)["logits"], tf.float32)
        return {"logits": logits, "replaced_probability": tf.sigmoid(logits) * tf.cast(attention_mask, tf.float32)}

    def serve_text(self, text):
        # Words split where BERT splits them: the ids equal `tokenizer.encode(text)`'s.
        pieces = featurize.word_pieces(self.tokenizer, featurize.split_words(text, featurize.BERT_WHITESPACE))
        keep = featurize.fit_single(pieces.ids.row_lengths(), self.max_seq_length - 2)
        inputs = featurize.pack([featurize.keep_first(pieces.ids, keep)], self.max_seq_length, self.cls_id,
                                self.sep_id, self.pad_id, pad_to_max_length=self.pad_to_max_length)
        length = tf.shape(inputs["input_ids"])[1]
        outputs = dict(self.run_ids(**inputs))
        real = inputs["attention_mask"] > 0
        outputs["logits"] = tf.where(real, outputs["logits"], 0.0)
        tokens = tf.gather(tf.constant(self.tokenizer.get_vocabulary()), inputs["input_ids"])
        outputs["tokens"] = tf.where(real, tokens, "")
        outputs["token_start"] = featurize.pack_side([featurize.keep_first(pieces.start, keep)], length)
        outputs["token_end"] = featurize.pack_side([featurize.keep_first(pieces.end, keep)], length)
        fills = {"tokens": "", "token_start": -1, "token_end": -1}
        return {name: self.to_max_length(value, fills.get(name, 0.0)) for name, value in outputs.items()}


class LabelServing(ServingTask):
    """Tasks whose logits' last axis is the labels (per text or per token): logits, probabilities, the best
    `label_id` and, with label names, its `label`."""

    def __init__(self, model, tokenizer, max_seq_length, label_names=None):
        super().__init__(model, tokenizer, max_seq_length, label_names)
        num_labels = model.output["logits"].shape[-1]
        if label_names is not None and len(label_names) != num_labels:
            raise ValueError(f"{len(label_names)} label names for a model with {num_labels} labels")

    def serve_ids(self, input_ids, attention_mask, token_type_ids):
        logits = tf.cast(self.call_model(input_ids, attention_mask, token_type_ids)["logits"], tf.float32)
        label_id = tf.argmax(logits, axis=-1, output_type=tf.int32)
        return self.with_labels({"logits": logits, "probabilities": tf.nn.softmax(logits), "label_id": label_id},
                                label_id)


class ClassificationServing(LabelServing):
    """Sentence (pair) classification: logits, probabilities and the best label."""

    task = "classification"

    def __init__(self, model, tokenizer, max_seq_length, label_names=None, text_pair=False):
        super().__init__(model, tokenizer, max_seq_length, label_names)
        self.text_inputs = ("text", "text_pair") if text_pair else ("text",)

    def serve_text(self, text, text_pair=None):
        return self.run_ids(**self.encode(text, text_pair))


class RegressionServing(ClassificationServing):
    """Sentence (pair) regression (`num_labels=1`, e.g. STS-B): one score."""

    task = "regression"

    def serve_ids(self, input_ids, attention_mask, token_type_ids):
        logits = self.call_model(input_ids, attention_mask, token_type_ids)["logits"]
        return {"score": tf.cast(logits, tf.float32)[:, 0]}


class TaggingServing(LabelServing):
    """One label per word, read at its first piece; raw text cut into words of the model's `word_unit`."""

    task = "tagging"
    sequence_axes = {"logits": 1}

    def __init__(self, model, tokenizer, max_seq_length, label_names=None, word_unit=featurize.DEFAULT_WORD_UNIT):
        super().__init__(model, tokenizer, max_seq_length, label_names)
        self.own_words = featurize.unit_pattern(word_unit)

    def features(self, text):
        """`(inputs, words, first_piece)` of raw texts (`featurize.tagging_features`, words of `word_unit`)."""
        return featurize.tagging_features(self.tokenizer, self.max_seq_length, text, self.pad_to_max_length,
                                          self.own_words)

    def serve_tokens(self, text):
        """Per token, what transformers' token-classification pipeline reads: `input_ids`, `probabilities`, and each
        token's characters `token_start`, `token_end` (-1 for [CLS], [SEP], padding)."""
        inputs, words, _ = self.features(text)
        pieces = featurize.word_pieces(self.tokenizer, words, empty_word_id=self.tokenizer.token_to_id(
            self.tokenizer.oov_token))
        length = tf.shape(inputs["input_ids"])[1]
        kept = [featurize.keep_first(part, tf.reduce_sum(inputs["attention_mask"], axis=1) - 2)
                for part in (pieces.start, pieces.end)]
        return {"input_ids": inputs["input_ids"], "probabilities": self.run_ids(**inputs)["probabilities"],
                "token_start": featurize.pack_side([kept[0]], length),
                "token_end": featurize.pack_side([kept[1]], length)}

    def serve_text(self, text):
        inputs, words, first_piece = self.features(text)
        tokens = self.run_ids(**inputs)
        position = first_piece.to_tensor(-1)
        word_kept = position >= 0
        probabilities = tf.gather(tokens["probabilities"], tf.maximum(position, 0), batch_dims=1)
        label_id = tf.where(word_kept, tf.argmax(probabilities, axis=-1, output_type=tf.int32), -1)
        outputs = {"words": featurize.raw_words(text, words), "word_start": words.start.to_tensor(-1),
                   "word_end": words.end.to_tensor(-1), "label_id": label_id,
                   "probability": tf.where(word_kept, tf.reduce_max(probabilities, axis=-1), 0.0),
                   "num_words": tf.cast(words.words.row_lengths(), tf.int32)}
        return self.with_labels(outputs, label_id, word_kept)


class QuestionAnsweringServing(ServingTask):
    """Extractive QA on one window: the best span's text and characters, its score, and the answer decision."""

    task = "question_answering"
    text_inputs = ("question", "context")
    sequence_axes = {"start_logits": 1, "end_logits": -1}  # end_logits: [batch, (beam,) sequence]

    def __init__(self, model, tokenizer, max_seq_length, label_names=None, max_query_length=64,
                 max_answer_length=30, n_best_size=20, version_2=None, null_threshold=None):
        super().__init__(model, tokenizer, max_seq_length)
        if not 1 <= max_query_length <= self.max_seq_length - 4:
            raise ValueError(f"max_query_length must be in 1..max_seq_length - 4 = {self.max_seq_length - 4} "
                             f"(room for the context), got {max_query_length}")
        self.max_query_length, self.max_answer_length = max_query_length, max_answer_length
        self.n_best_size = n_best_size
        self.version_2 = "answerable_logits" in model.output if version_2 is None else bool(version_2)
        self.null_threshold = null_threshold

    def serve_ids(self, input_ids, attention_mask, token_type_ids):
        outputs = self.call_model(input_ids, attention_mask, token_type_ids)
        # The context's tokens: segment 1 without its [SEP] (the raw-text path's tokens with characters).
        context = (token_type_ids == 1) & (attention_mask == 1) & (input_ids != self.sep_id)
        span = answer_spans.best_span(outputs["start_logits"], outputs["end_logits"], context,
                               start_candidates=outputs.get("start_candidates"),
                               answerable_logits=outputs.get("answerable_logits"),
                               max_answer_length=self.max_answer_length, n_best_size=self.n_best_size)
        result = {name: tf.cast(value, tf.float32 if value.dtype.is_floating else tf.int32)
                  for name, value in outputs.items()}
        result.update(start_position=span.start, end_position=span.end, score=span.score, null_odds=span.null_odds,
                      has_answer=answer_spans.answer_decision(span, self.version_2, self.null_threshold))
        return result

    def serve_text(self, question, context):
        inputs, char_start, char_end = featurize.squad_window(self.tokenizer, self.max_seq_length,
                                                              self.max_query_length, question, context,
                                                              pad_to_max_length=self.pad_to_max_length)
        span = self.run_ids(**inputs)
        found = span["start_position"] >= 0
        answer_start = tf.where(found, tf.gather(char_start, tf.maximum(span["start_position"], 0), batch_dims=1), -1)
        answer_end = tf.where(found, tf.gather(char_end, tf.maximum(span["end_position"], 0), batch_dims=1), -1)
        answer = tf.strings.substr(context, tf.maximum(answer_start, 0), answer_end - tf.maximum(answer_start, 0),
                                   unit="UTF8_CHAR")
        return {"answer": tf.where(found, answer, ""), "answer_start": answer_start, "answer_end": answer_end,
                "score": span["score"], "has_answer": span["has_answer"], "null_odds": span["null_odds"]}


class MultipleChoiceServing(ServingTask):
    """Multiple choice: each `(context, choice)` pair scored, as `choice_dataset` packs them."""

    task = "multiple_choice"
    text_inputs = ("context", "choices")

    def __init__(self, model, tokenizer, max_seq_length, label_names=None):
        super().__init__(model, tokenizer, max_seq_length)
        self.num_choices = model.input["input_ids"].shape[1]

    def text_signature(self):
        return [tf.TensorSpec([None], tf.string, name="context"),
                tf.TensorSpec([None, self.num_choices], tf.string, name="choices")]

    def ids_signature(self):
        return [tf.TensorSpec([None, self.num_choices, None], tf.int32, name=name) for name in INPUT_NAMES]

    def example_features(self):
        return {"context": tf.io.FixedLenFeature([], tf.string),
                "choices": tf.io.FixedLenFeature([self.num_choices], tf.string)}

    def serve_ids(self, input_ids, attention_mask, token_type_ids):
        logits = tf.cast(self.call_model(input_ids, attention_mask, token_type_ids)["logits"], tf.float32)
        return {"logits": logits, "probabilities": tf.nn.softmax(logits),
                "choice": tf.argmax(logits, axis=-1, output_type=tf.int32)}

    def serve_text(self, context, choices):
        contexts = tf.reshape(tf.repeat(context[:, None], self.num_choices, axis=1), [-1])
        flat = self.encode(contexts, tf.reshape(choices, [-1]))
        return self.run_ids(**{name: tf.reshape(value, [-1, self.num_choices, tf.shape(value)[-1]])
                               for name, value in flat.items()})


def task_of(model):
    """The serving task a model is exported as: what its class declares (`serving_task`)."""
    task = getattr(model, "serving_task", None)
    if task is None:
        raise ValueError(f"cannot serve a {type(model).__name__}: export an ElectraDiscriminator or a task model "
                         f"(ElectraForSequenceClassification, ...ForTokenClassification, ...ForQuestionAnswering, "
                         f"...ForMultipleChoice)")
    return task


_CLASSES = {cls.task: cls for cls in (DiscriminatorServing, ClassificationServing, RegressionServing,
                                      TaggingServing, QuestionAnsweringServing, MultipleChoiceServing)}


def make_serving_task(model, tokenizer=None, max_seq_length=None, label_names=None, pad_to_max_length=False,
                      compile=False, constant_weights=False, **options):
    """The `ServingTask` of `model`; `options` go to that task (`text_pair=True`, `max_query_length`, ...). `tokenizer`
    and `max_seq_length` default to the model's preprocessor's (else 128 tokens, or fewer positions)."""
    task = task_of(model)
    preprocessor = getattr(model, "preprocessor", None)
    if tokenizer is None:
        if preprocessor is None:
            raise ValueError(f"no tokenizer: pass the one the {type(model).__name__} was trained with, or export "
                             "a model that has a preprocessor")
        tokenizer = preprocessor.tokenizer
    if max_seq_length is None:  # a model of fewer positions is served at its length
        max_seq_length = (preprocessor.sequence_length if preprocessor is not None
                          else min(128, model.config.max_position_embeddings))
    if label_names is not None and task not in ("classification", "tagging"):
        raise ValueError(f"label names are for classification and tagging, not {task}")
    serving = _CLASSES[task](model, tokenizer, max_seq_length, label_names=label_names, **options)
    serving.pad_to_max_length = bool(pad_to_max_length)
    if constant_weights:
        serving.use_constant_weights()
    if compile:
        serving.compile_model()
    return serving
