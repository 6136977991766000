"""`pipeline`: raw text in, masks filled, features, labels, entities or answers out, as transformers 4.x's pipelines
(their calls, records, defaults and options; docs/migrating_from_transformers.md lists where results differ).
Text classification and tagging run the serving graph, so they give what an export of the model gives.

Example:
>>> import tempfile
>>> from electra_tf import ElectraConfig, ElectraForSequenceClassification, ElectraTokenizer
>>> tokenizer = ElectraTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "good", "bad", "film"])
>>> config = ElectraConfig(vocab_size=8, embedding_size=8, hidden_size=8, num_layers=1, num_heads=1,
...                        intermediate_size=8)
>>> folder = tempfile.mkdtemp()
>>> ElectraForSequenceClassification(config, num_labels=2).save_pretrained(
...     folder, tokenizer=tokenizer, label_names=["negative", "positive"])
>>> classifier = pipeline("text-classification", folder)
>>> result = classifier("a good film")
>>> len(result), sorted(result[0]), result[0]["label"] in ("negative", "positive")
(1, ['label', 'score'], True)
>>> [len(scores) for scores in classifier(["good", "bad film"], top_k=None)]
[2, 2]
"""

import functools
import os
import reprlib
from collections.abc import Iterable, Mapping

import numpy as np
import tensorflow as tf
from scipy.special import softmax

from electra_tf.checkpoints.convert import load_model
from electra_tf.checkpoints.hub import HUB_OPTIONS, resolve
from electra_tf.export.signatures import make_serving_task
from electra_tf.models.base import DEFAULT_SEQUENCE_LENGTH
from electra_tf.text import featurize
from electra_tf.transformers.tokenizer import ElectraTokenizer, tokens_to_string
from electra_tf.util.atomic import read_json

PIPELINE_TASKS = {"text-classification": "classification", "sentiment-analysis": "classification",
                  "token-classification": "tagging", "ner": "tagging", "question-answering": "question_answering",
                  "fill-mask": "fill_mask", "feature-extraction": "features"}
AGGREGATION_STRATEGIES = ("none", "simple", "first", "average", "max")
CLASSIFICATION_FUNCTIONS = ("softmax", "sigmoid", "none")
# Span-tag prefixes by role: B- begins a group, I- goes on, an end (E-, L-) goes on and closes, a single (S-, U-)
# begins and closes.
_GROUP_ROLES = {"B": "B", "I": "I", "E": "E", "L": "E", "S": "S", "U": "S"}
_NOT_GIVEN = object()


def _described(value):
    return "None" if value is None else f"{type(value).__name__} {reprlib.repr(value)}"


def _text(value, where, takes):
    """`value` when it is a text (str, not bytes, as transformers); else a TypeError naming `where` it is."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        raise TypeError(f"{where} is bytes, not a text: decode it first (e.g. value.decode('utf-8')); {takes}")
    raise TypeError(f"{where} is {_described(value)}, not a text; {takes}")


def _listed(inputs, takes):
    """The items of a batch `inputs` (any iterable but a text or a dict); else a TypeError."""
    if isinstance(inputs, (str, bytes, bytearray, Mapping)) or not isinstance(inputs, Iterable):
        raise TypeError(f"{takes}; got {_described(inputs)}")
    return list(inputs)


def _texts(inputs, takes):
    """`(single, texts)` of a text or a list of texts."""
    if isinstance(inputs, str):
        return True, [inputs]
    return False, [_text(text, f"inputs[{i}]", takes) for i, text in enumerate(_listed(inputs, takes))]


def _fields(item, where, required, optional, takes):
    """The `required` and `optional` texts of a dict input `item` (None for a missing optional one), checked."""
    missing = [key for key in required if key not in item]
    unknown = sorted(set(item) - set(required) - set(optional), key=str)
    if missing or unknown:
        raise ValueError(f"{where} has {f'no {missing[0]!r}' if missing else f'the unknown key {unknown[0]!r}'}; "
                         f"{takes}")
    return [_text(item[key], f"{where}[{key!r}]", takes) if key in item else None for key in (*required, *optional)]


def _choice(value, name, choices):
    """`value` lower-cased when it is one of `choices` (as transformers reads its enums); a ValueError otherwise."""
    if not isinstance(value, str) or value.lower() not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value.lower()


class Pipeline:
    """What the pipelines share: the model, its tokenizer and labels, the length inputs are cut to."""

    def __init__(self, model, tokenizer, max_seq_length, label_names=None):
        self.model, self.tokenizer, self.max_seq_length = model, tokenizer, int(max_seq_length)
        self.label_names = list(label_names) if label_names else None
        self.functions = []  # the graph functions it runs (for `traces`)

    @property
    def traces(self):
        """How many times its graphs were traced: once each, whatever the requests' sizes."""
        return sum(function.experimental_get_tracing_count() for function in self.functions)

    def function(self, run, signature):
        function = tf.function(run, input_signature=signature)
        self.functions.append(function)
        return function

    def label(self, label_id):
        return self.label_names[label_id] if self.label_names else f"LABEL_{label_id}"


class ServedPipeline(Pipeline):
    """A pipeline on the model's serving graph: `run(method, *texts)` runs one of its methods, traced once."""

    def __init__(self, model, tokenizer, max_seq_length, label_names=None, **options):
        super().__init__(model, tokenizer, max_seq_length, label_names)
        self.serving_options = options
        self.serving = make_serving_task(model, tokenizer, max_seq_length, label_names=self.label_names, **options)
        self._runs = {}

    def run(self, method, *texts, serving=None):
        serving = serving or self.serving
        key = (method, id(serving))
        if key not in self._runs:
            self._runs[key] = self.function(getattr(serving, method), serving.text_signature())
        outputs = self._runs[key](*(tf.constant(text, tf.string) for text in texts))
        return {name: value.numpy() for name, value in outputs.items()}


class TextClassificationPipeline(ServedPipeline):
    """`{"label", "score"}` for each text."""

    TAKES = ("a text-classification pipeline takes a text (str), {'text': ..., 'text_pair': ...}, or a list of "
             "either")

    def __init__(self, *args, problem_type=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.problem_type = problem_type

    @functools.cached_property
    def pair_serving(self):
        """The serving graph of a model of single texts given pairs, as transformers takes them."""
        return make_serving_task(self.model, self.tokenizer, self.max_seq_length, label_names=self.label_names,
                                 **{**self.serving_options, "text_pair": True})

    def default_function(self, num_labels):
        """transformers' choice: none for regression, sigmoid for multi-label or one label, else softmax."""
        if self.problem_type == "regression" or self.serving.task == "regression":
            return "none"
        return "sigmoid" if self.problem_type == "multi_label_classification" or num_labels == 1 else "softmax"

    def __call__(self, inputs, top_k=_NOT_GIVEN, function_to_apply=None, return_all_scores=None):
        legacy = top_k is _NOT_GIVEN
        if legacy:
            top_k = None if return_all_scores else 1
        elif top_k is not None and (not isinstance(top_k, int) or top_k < 1):
            raise ValueError(f"top_k must be a positive int or None (every label), got {top_k!r}")
        if function_to_apply is not None:
            function_to_apply = _choice(function_to_apply, "function_to_apply", CLASSIFICATION_FUNCTIONS)
        single = isinstance(inputs, (str, Mapping))
        texts = self._texts([inputs] if single else _listed(inputs, self.TAKES), single)
        if not texts[0]:
            return []
        logits = self._logits(texts)
        function = function_to_apply or self.default_function(logits.shape[-1])
        scores = {"softmax": lambda x: softmax(x, axis=-1), "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
                  "none": lambda x: x}[function](logits)
        results = []
        for row in scores:
            if legacy and top_k == 1:
                results.append({"label": self.label(int(row.argmax())), "score": float(row.max())})
                continue
            records = [{"label": self.label(i), "score": float(score)} for i, score in enumerate(row)]
            if not legacy:
                records = sorted(records, key=lambda record: record["score"], reverse=True)[:top_k]
            results.append(records)
        if not single:
            return results
        return [results[0]] if legacy and isinstance(inputs, str) else results[0]

    def _texts(self, items, single):
        """The text columns (one, or text and text_pair) of the inputs, checked."""
        pairs = [isinstance(item, Mapping) for item in items]
        if any(pairs) and not all(pairs):
            raise ValueError("give every input as a text, or every one as {'text': ..., 'text_pair': ...}")
        where = [("inputs" if single else f"inputs[{i}]") for i in range(len(items))]
        if all(pairs) and items:
            fields = [_fields(item, at, ("text",), ("text_pair",), self.TAKES) for item, at in zip(items, where)]
            has_pair = [pair is not None for _, pair in fields]
            if any(has_pair) != all(has_pair) or (not any(has_pair) and len(self.serving.text_inputs) == 2):
                at = where[has_pair.index(False)]
                raise ValueError(f"{at} has no 'text_pair'; this model reads text and text_pair: give "
                                 "{'text': ..., 'text_pair': ...}")
            texts = tuple(list(column) for column in zip(*fields)) if any(has_pair) else ([t for t, _ in fields],)
        else:
            texts = ([_text(item, at, self.TAKES) for item, at in zip(items, where)],)
        if len(texts) < len(self.serving.text_inputs):
            raise ValueError("this model reads text and text_pair: give {'text': ..., 'text_pair': ...}")
        return texts

    def _logits(self, texts):
        pairs = len(texts) == 2 and len(self.serving.text_inputs) == 1
        outputs = self.run("serve_text", *texts, serving=self.pair_serving if pairs else None)
        return outputs["score"][:, None] if self.serving.task == "regression" else outputs["logits"]


class TokenClassificationPipeline(ServedPipeline):
    """Per-token records, or entities with `aggregation_strategy`, for each text."""

    TAKES = "a token-classification pipeline takes a text (str) or a list of texts"

    def __init__(self, *args, aggregation_strategy="none", ignore_labels=("O",), **kwargs):
        super().__init__(*args, **kwargs)
        self.aggregation_strategy = _choice(aggregation_strategy, "aggregation_strategy", AGGREGATION_STRATEGIES)
        self.ignore_labels = list(ignore_labels)

    def __call__(self, inputs, aggregation_strategy=None, ignore_labels=None):
        strategy = self.aggregation_strategy if aggregation_strategy is None else _choice(
            aggregation_strategy, "aggregation_strategy", AGGREGATION_STRATEGIES)
        ignore = self.ignore_labels if ignore_labels is None else list(ignore_labels)
        single, texts = _texts(inputs, self.TAKES)
        outputs = self.run("serve_tokens", texts) if texts else {}
        results = []
        for row, text in enumerate(texts):
            records = self.aggregate(list(self.tokens(text, outputs, row)), strategy)
            results.append([record for record in records
                            if record.get("entity", record.get("entity_group")) not in ignore])
        return results[0] if single else results

    def tokens(self, text, outputs, row):
        """transformers' pre-entities: each token but [CLS], [SEP] and padding, with its scores and characters."""
        vocabulary, unknown = self.tokenizer.get_vocabulary(), self.tokenizer.token_to_id(self.tokenizer.oov_token)
        for index, (token_id, start, end) in enumerate(zip(outputs["input_ids"][row], outputs["token_start"][row],
                                                           outputs["token_end"][row])):
            if start < 0:
                continue
            reference = text[start:end]
            word = reference if token_id == unknown else vocabulary[token_id]
            yield {"word": word, "scores": outputs["probabilities"][row, index], "start": int(start),
                   "end": int(end), "index": index, "is_subword": token_id != unknown and len(word) != len(reference)}

    def aggregate(self, tokens, strategy):
        if strategy in ("none", "simple"):
            entities = [{"entity": self.label(int(t["scores"].argmax())), "score": float(t["scores"].max()),
                         "index": t["index"], "word": t["word"], "start": t["start"], "end": t["end"]}
                        for t in tokens]
        else:
            entities = [self.aggregate_word(word, strategy) for word in self._words(tokens)]
        return entities if strategy == "none" else self.group_entities(entities)

    @staticmethod
    def _words(tokens):
        words = []
        for token in tokens:
            if words and token["is_subword"]:
                words[-1].append(token)
            else:
                words.append([token])
        return words

    def aggregate_word(self, tokens, strategy):
        """A word's label from its tokens' scores: the first token's, the most confident token's, or the mean."""
        if strategy == "average":
            scores = np.nanmean(np.stack([t["scores"] for t in tokens]), axis=0)
        else:
            scores = tokens[0]["scores"] if strategy == "first" else max(tokens, key=lambda t: t["scores"].max())[
                "scores"]
        return {"entity": self.label(int(scores.argmax())), "score": float(scores.max()),
                "word": tokens_to_string([t["word"] for t in tokens]), "start": tokens[0]["start"],
                "end": tokens[-1]["end"]}

    @staticmethod
    def _tag(label):
        """`(role, type)` of a label (see `_GROUP_ROLES`), as transformers' `get_tag` reads B-/I- labels."""
        prefix, dash, kind = label.partition("-")
        if dash and prefix in _GROUP_ROLES:
            return _GROUP_ROLES[prefix], kind
        return "I", label

    def group_entities(self, entities):
        """transformers' `group_entities`, BIOES/BILOU tags by their scheme."""
        groups = []
        for entity in entities:
            role, kind = self._tag(entity["entity"])
            if groups:
                last_role, last_kind = self._tag(groups[-1][-1]["entity"])
                if kind == last_kind and role in ("I", "E") and last_role in ("B", "I"):
                    groups[-1].append(entity)
                    continue
            groups.append([entity])
        return [{"entity_group": group[0]["entity"].split("-", 1)[-1],
                 "score": float(np.nanmean([entity["score"] for entity in group])),
                 "word": tokens_to_string([entity["word"] for entity in group]),
                 "start": group[0]["start"], "end": group[-1]["end"]} for group in groups]


class FillMaskPipeline(Pipeline):
    """`[{"score", "token", "token_str", "sequence"}]` for each mask of each text."""

    TAKES = "a fill-mask pipeline takes a text (str) holding [MASK], or a list of them"

    def __init__(self, model, tokenizer, max_seq_length, top_k=5, targets=None):
        super().__init__(model, tokenizer, max_seq_length)
        self.top_k, self.targets = top_k, targets
        self.mask_id = tokenizer.token_to_id(tokenizer.mask_token)
        signature = [tf.TensorSpec([None, None], tf.int32, name=name)
                     for name in ("input_ids", "attention_mask", "token_type_ids", "mask_positions")]
        self._logits = self.function(
            lambda *inputs: model(dict(zip(("input_ids", "attention_mask", "token_type_ids", "mask_positions"),
                                           inputs)), training=False)["logits"], signature)

    def target_ids(self, targets):
        """transformers' targets: each word's id, or the first piece of a word not in the vocabulary."""
        targets = [targets] if isinstance(targets, str) else _listed(targets, "targets takes a word or a list of them")
        ids = []
        for i, target in enumerate(targets):
            _text(target, f"targets[{i}]", "targets takes a word or a list of them")
            pieces = self.tokenizer.tokenize(tf.constant([target])).to_list()[0]
            ids.extend([self.tokenizer.token_to_id(target)] if target in self.tokenizer.get_vocabulary()
                       else pieces[:1])
        if not ids:
            raise ValueError(f"targets {targets!r} hold no token of the vocabulary")
        return sorted(set(ids))

    def __call__(self, inputs, top_k=None, targets=None):
        top_k = self.top_k if top_k is None else top_k
        targets = self.targets if targets is None else targets
        target_ids = None if targets is None else np.array(self.target_ids(targets))
        single, texts = _texts(inputs, self.TAKES)
        # `[CLS] ids [SEP]`, cut at max_seq_length; a special token written in a text ([MASK]) is that token
        rows = self.tokenizer(texts, truncation=True, max_length=self.max_seq_length)["input_ids"] if texts else []
        for i, ids in enumerate(rows):
            if self.mask_id not in ids:
                raise ValueError(f"{'inputs' if single else f'inputs[{i}]'} holds no {self.tokenizer.mask_token} "
                                 f"token; {self.TAKES}")
        results = [self._fill(ids, top_k, target_ids) for ids in rows]
        return results[0] if single else results

    def _fill(self, ids, top_k, target_ids):
        positions = [i for i, token in enumerate(ids) if token == self.mask_id]
        array = np.array([ids], np.int32)
        logits = self._logits(array, np.ones_like(array), np.zeros_like(array), np.array([positions], np.int32))
        probabilities = softmax(logits.numpy()[0].astype(np.float64), axis=-1)
        if target_ids is not None:
            probabilities = probabilities[:, target_ids]
        single_mask = len(positions) == 1
        result = []
        for position, row in zip(positions, probabilities):
            best = np.argsort(-row, kind="stable")[:min(top_k, len(row))]
            proposals = []
            for index in best:
                token = int(index if target_ids is None else target_ids[index])
                filled = list(ids)
                filled[position] = token
                proposals.append({"score": float(row[index]), "token": token,
                                  "token_str": self.tokenizer.decode([token]),
                                  "sequence": self.tokenizer.decode(filled, skip_special_tokens=single_mask,
                                                                    clean_up_tokenization_spaces=True)})
            result.append(proposals)
        return result[0] if single_mask else result


class FeatureExtractionPipeline(Pipeline):
    """The last hidden states of each text, `[1][tokens][hidden]`."""

    TAKES = "a feature-extraction pipeline takes a text (str) or a list of texts"

    def __init__(self, model, tokenizer, max_seq_length, return_tensors=False):
        super().__init__(model, tokenizer, max_seq_length)
        self.return_tensors = return_tensors
        self._states = self.function(self._run, [tf.TensorSpec([None], tf.string)])

    def _run(self, texts):
        """`(states, lengths)`: the last hidden states of texts padded to the longest, and each one's tokens."""
        inputs = featurize.encode(self.tokenizer, self.max_seq_length, texts, pad_to_max_length=False)
        states = self.model(inputs, training=False)["last_hidden_state"]
        return states, tf.reduce_sum(inputs["attention_mask"], axis=1)

    def __call__(self, inputs, return_tensors=None):
        return_tensors = self.return_tensors if return_tensors is None else return_tensors
        single, texts = _texts(inputs, self.TAKES)
        states, lengths = self._states(tf.constant(texts, tf.string)) if texts else (None, [])
        results = [states[row:row + 1, :length] for row, length in enumerate(np.asarray(lengths))]
        if not return_tensors:
            results = [result.numpy().tolist() for result in results]
        return results[0] if single else results


class QuestionAnsweringPipeline(Pipeline):
    """`{"score", "start", "end", "answer"}` for each question, or `top_k` of them."""

    TAKES = ("a question-answering pipeline takes question= and context= (texts, or lists of texts), or "
             "{'question': ..., 'context': ...} or a list of them")

    def __init__(self, model, tokenizer, max_seq_length, top_k=1, doc_stride=None, max_answer_len=15,
                 max_seq_len=None, max_question_len=64, handle_impossible_answer=False, align_to_words=True,
                 **options):
        super().__init__(model, tokenizer, max_seq_length)
        self.serving = make_serving_task(model, tokenizer, max_seq_length,
                                         max_query_length=min(64, max_seq_length - 4), **options)
        self.options = dict(top_k=top_k, doc_stride=doc_stride, max_answer_len=max_answer_len,
                            max_seq_len=max_seq_len, max_question_len=max_question_len,
                            handle_impossible_answer=handle_impossible_answer, align_to_words=align_to_words)
        self._windows = {}  # (max_seq_len, max_question_len) → its graph function

    def _inputs(self, inputs, question, context):
        """`(single, questions, contexts)` of the call's arguments, checked."""
        if inputs is not None:
            single = isinstance(inputs, Mapping)
            items = [inputs] if single else _listed(inputs, self.TAKES)
            for i, item in enumerate(items):
                if not isinstance(item, Mapping):
                    raise TypeError(f"inputs[{i}] is {_described(item)}; {self.TAKES}")
            fields = [_fields(item, "inputs" if single else f"inputs[{i}]", ("question", "context"), (), self.TAKES)
                      for i, item in enumerate(items)]
            return single, [q for q, _ in fields], [c for _, c in fields]
        if question is None or context is None:
            raise ValueError(f"no {'question' if question is None else 'context'} given; {self.TAKES}")
        if isinstance(question, str):
            return True, [_text(question, "question", self.TAKES)], [_text(context, "context", self.TAKES)]
        questions = [_text(q, f"question[{i}]", self.TAKES) for i, q in enumerate(_listed(question, self.TAKES))]
        if isinstance(context, str):  # one context for every question, as transformers takes it
            return False, questions, [context] * len(questions)
        contexts = [_text(c, f"context[{i}]", self.TAKES) for i, c in enumerate(_listed(context, self.TAKES))]
        if len(questions) != len(contexts):
            raise ValueError(f"{len(questions)} questions for {len(contexts)} contexts")
        return False, questions, contexts

    def __call__(self, inputs=None, question=None, context=None, **options):
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            raise TypeError(f"unknown option {unknown[0]!r}; the options are {sorted(self.options)}")
        options = {**self.options, **options}
        single, questions, contexts = self._inputs(inputs, question, context)
        length = min(options["max_seq_len"] or 384, self.max_seq_length)
        stride = min(length // 2, 128) if options["doc_stride"] is None else options["doc_stride"]
        if options["top_k"] < 1 or options["max_answer_len"] < 1:
            raise ValueError(f"top_k and max_answer_len must be at least 1, got {options['top_k']} and "
                             f"{options['max_answer_len']}")
        if stride > length:
            raise ValueError(f"doc_stride ({stride}) is larger than max_seq_len ({length})")
        windows = self.windows(length, options["max_question_len"])(
            tf.constant(questions, tf.string), tf.constant(contexts, tf.string), tf.constant(stride, tf.int32)) \
            if questions else {}
        windows = {name: value.numpy() for name, value in windows.items()}
        results = [self.answers(contexts[i], windows, windows["example_index"] == i, options)
                   for i in range(len(questions))]
        return results[0] if single or len(results) == 1 else results

    def windows(self, length, max_question_len):
        """The graph function of `(questions, contexts, doc_stride)` → every window's logits and characters."""
        key = (length, max_question_len)
        if key not in self._windows:
            def run(questions, contexts, doc_stride):
                query = tf.cast(self.tokenizer.tokenize(questions).row_lengths(), tf.int32)
                room = length - tf.minimum(query, max_question_len) - 3  # context tokens a window holds
                windows = featurize.squad_windows(self.tokenizer, length, max_question_len,
                                                  tf.maximum(room - doc_stride, 1), questions, contexts)
                outputs = self.serving.call_model(**windows.inputs)
                return {"example_index": windows.example_index, "input_ids": windows.inputs["input_ids"],
                        "char_start": windows.char_start, "char_end": windows.char_end,
                        **{name: tf.cast(outputs[name], tf.float32 if name.endswith("logits") else tf.int32)
                           for name in ("start_logits", "end_logits", "start_candidates") if name in outputs}}
            self._windows[key] = self.function(run, [tf.TensorSpec([None], tf.string), tf.TensorSpec([None], tf.string),
                                                     tf.TensorSpec([], tf.int32)])
        return self._windows[key]

    def span_probabilities(self, windows, row):
        """transformers' `select_starts_ends`: `([L, L]` span probabilities, the empty answer's)` of a window."""
        desired = windows["char_start"][row] >= 0
        desired[0] = True
        start = softmax(np.where(desired, windows["start_logits"][row], -10000.0).astype(np.float64), axis=-1)
        end = softmax(np.where(desired, windows["end_logits"][row], -10000.0).astype(np.float64), axis=-1)
        if end.ndim == 1:
            spans = np.outer(start, end)
        else:  # the joint head: the ends given each start candidate
            spans = np.zeros((len(start), len(start)))
            for candidate, ends in zip(windows["start_candidates"][row], end):
                spans[candidate] = start[candidate] * ends
        null = spans[0, 0]
        spans[0, :] = spans[:, 0] = 0.0
        return spans * desired[:, None] * desired[None, :], null

    def answers(self, context, windows, rows, options):
        top_k, null_score, answers = options["top_k"], 1000000.0, []
        candidates = top_k * 2 + 10 if options["align_to_words"] else top_k
        for row in np.flatnonzero(rows):
            spans, null = self.span_probabilities(windows, row)
            null_score = min(null_score, null)
            spans = np.tril(np.triu(spans), options["max_answer_len"] - 1)
            flat = spans.reshape(-1)
            for index in np.argsort(-flat, kind="stable")[:candidates]:
                if flat[index] <= 0:
                    break
                start, end = self.characters(windows, row, *divmod(int(index), len(spans)), options["align_to_words"])
                text = context[start:end]
                same = next((answer for answer in answers if answer["answer"].lower() == text.lower()), None)
                if same is not None:  # transformers adds up the spans that read the same
                    same["score"] += float(flat[index])
                else:
                    answers.append({"score": float(flat[index]), "start": start, "end": end, "answer": text})
        if options["handle_impossible_answer"]:
            answers.append({"score": float(null_score), "start": 0, "end": 0, "answer": ""})
        answers = sorted(answers, key=lambda answer: answer["score"], reverse=True)[:top_k]
        return answers[0] if len(answers) == 1 else answers

    def characters(self, windows, row, start, end, align_to_words):
        """The characters of tokens `start`..`end` of a window (widened to whole words with `align_to_words`)."""
        if align_to_words:
            ids, marker = windows["input_ids"][row], self.tokenizer.suffix_indicator
            goes_on = [self.tokenizer.id_to_token(int(token)).startswith(marker) for token in ids]
            inside = windows["char_start"][row] >= 0
            while start > 0 and goes_on[start] and inside[start - 1]:
                start -= 1
            while end + 1 < len(ids) and goes_on[end + 1] and inside[end + 1]:
                end += 1
        return int(windows["char_start"][row][start]), int(windows["char_end"][row][end])


_PIPELINES = {"classification": TextClassificationPipeline, "tagging": TokenClassificationPipeline,
              "question_answering": QuestionAnsweringPipeline, "fill_mask": FillMaskPipeline,
              "features": FeatureExtractionPipeline}


def _kind_of(model):
    """What pipelines a model serves: its serving task, "fill_mask" for a generator."""
    inputs = model.input if isinstance(model.input, Mapping) else {}
    if "mask_positions" in inputs:
        return "fill_mask"
    kind = getattr(model, "serving_task", None)
    return "classification" if kind == "regression" else kind


def pipeline(task, model, tokenizer=None, max_seq_length=None, **options):
    """A callable from raw text to results for `task` ("fill-mask", "feature-extraction", "text-classification",
    "token-classification", "question-answering" or their aliases), of a model folder, a hub id (`revision=`,
    `token=`, ... among `options`) or a loaded model.

    `options` are the pipeline's defaults for its calls (`top_k`, `aggregation_strategy`, ...) or the serving
    graph's (`compile=True`: XLA; `constant_weights`: the weights as graph constants, the default for a folder).
    """
    if task not in PIPELINE_TASKS:
        raise ValueError(f"task must be one of {sorted(PIPELINE_TASKS)}, got {task!r}")
    if "word_unit" in options:
        raise ValueError("word_unit is not an option: a token-classification pipeline cuts raw text into the words "
                         "its model was trained on, as its folder records")
    info, folder = {}, None
    if isinstance(model, str) or hasattr(model, "__fspath__"):
        folder = resolve(str(model), **{name: options.pop(name) for name in HUB_OPTIONS if name in options})
        model, info = load_model(folder)
        tokenizer = tokenizer or ElectraTokenizer.from_pretrained(folder)
        options.setdefault("constant_weights", True)
    preprocessor = getattr(model, "preprocessor", None)
    tokenizer = tokenizer or (preprocessor.tokenizer if preprocessor is not None else None)
    if tokenizer is None:
        raise ValueError("this model has no tokenizer: give tokenizer=, or a folder with its vocab.txt")
    kind, wanted = _kind_of(model), PIPELINE_TASKS[task]
    outputs = model.output if isinstance(model.output, Mapping) else {}
    if kind != wanted and not (wanted == "features" and "last_hidden_state" in outputs):
        raise ValueError(f"a {task} pipeline needs a model of that task; this one is a {type(model).__name__} "
                         f"({kind})")
    positions = model.config.max_position_embeddings
    length = max_seq_length or info.get("max_seq_length") or (
        preprocessor.sequence_length if preprocessor is not None else min(DEFAULT_SEQUENCE_LENGTH, positions))
    label_names = getattr(model, "label_names", None) or info.get("label_names")
    if wanted in ("fill_mask", "features"):
        options.pop("constant_weights", None)
        return _PIPELINES[wanted](model, tokenizer, positions if max_seq_length is None else length, **options)
    if wanted == "classification":
        options.setdefault("text_pair", bool(info.get("text_pair")))
        config_file = os.path.join(folder, "config.json") if folder else None
        options.setdefault("problem_type", info.get("problem_type") or (
            read_json(config_file).get("problem_type") if config_file and os.path.isfile(config_file) else None))
    if wanted == "tagging":
        options["word_unit"] = info.get("word_unit", featurize.DEFAULT_WORD_UNIT)
    if wanted == "question_answering":  # what the fine-tuning run recorded, else transformers' defaults
        if info.get("max_answer_length") is not None:
            options.setdefault("max_answer_len", info["max_answer_length"])
        if info.get("version_2") is not None:
            options.setdefault("handle_impossible_answer", bool(info["version_2"]))
        return QuestionAnsweringPipeline(model, tokenizer, max_seq_length or positions, **options)
    return _PIPELINES[wanted](model, tokenizer, length, label_names=label_names, **options)
