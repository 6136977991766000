"""`pipeline`: raw text in, labels, entities or answers out, from a fine-tuned model folder, as `transformers.pipeline`.

Three tasks, called as `transformers`' pipelines are (one input in, one
result out; a list in, a list out):

- `"text-classification"` (alias `"sentiment-analysis"`): a text, a list of
  texts, or `{"text": ..., "text_pair": ...}` for pairs →
  `[{"label", "score"}]` per text (`top_k=None`: every label, best first);
- `"token-classification"` (alias `"ner"`): a text → its entities
  `[{"entity_group", "score", "word", "start", "end"}]`, words grouped as
  `aggregation_strategy="simple"` groups them, in whichever span scheme the
  model tags (IOB1, IOB2, BIOES or BILOU: `B-PER I-PER E-PER`, `B-PER E-PER`
  and `S-PER` are each one entity; `O` is left out; labels of no scheme, such
  as POS tags, group while they repeat); each word is read at its first piece,
  as the tagging tasks train it, and `score` is the mean of the words'
  probabilities; `aggregation_strategy="none"` gives every word as
  `{"entity", "score", "index", "word", "start", "end"}`. Words are split as
  the tagging export splits them: at whitespace, and each CJK character (or
  CJK punctuation mark) is a word, so raw Chinese is tagged per character and
  `江泽民` comes back as one entity, `word` the text between its offsets;
- `"question-answering"`: `question=..., context=...` (or `{"question",
  "context"}`) → `{"answer", "score", "start", "end"}` from the context's first
  window (`max_seq_length` tokens); an unanswerable question (SQuAD 2.0 models)
  gives `answer ""` and `start = end = 0`, as `handle_impossible_answer` does.

Offsets count characters of the raw input, `end` exclusive. The graph is the
serving graph (`electra_tf.export.signatures`), so a pipeline and an export of
the same model give the same numbers, at the same cost per call: it is traced
once (`Pipeline.traces`) and each request padded to its longest text;
`compile=True` runs the model call under XLA over bucketed shapes, as
`electra-export --compile` does (faster for short requests; each new shape
compiles once, in seconds). A pipeline that loads its model from a folder
holds the weights as graph constants, as an export does
(`electra_tf.export.constants`); one given a loaded model reads its variables,
so it follows the model if it trains on (`constant_weights=True` to snapshot).

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
>>> len(classifier(["good", "bad film"]))
2
"""

import reprlib
from collections.abc import Iterable, Mapping

import numpy as np
import tensorflow as tf

from electra_tf.checkpoints.hub import HUB_OPTIONS, resolve
from electra_tf.checkpoints.convert import load_model
from electra_tf.data.tasks.tagging import is_span_tag, tag_spans
from electra_tf.export.signatures import make_serving_task
from electra_tf.models.base import DEFAULT_SEQUENCE_LENGTH
from electra_tf.transformers.tokenizer import ElectraTokenizer

PIPELINE_TASKS = {"text-classification": "classification", "sentiment-analysis": "classification",
         "token-classification": "tagging", "ner": "tagging", "question-answering": "question_answering"}


def _decoded(values):
    return [value.decode("utf-8") if isinstance(value, bytes) else value for value in values]


def _described(value):
    return "None" if value is None else f"{type(value).__name__} {reprlib.repr(value)}"


def _text(value, where, takes):
    """`value` when it is a text (str); otherwise a TypeError naming `where` it is and what the pipeline `takes`.
    Bytes are refused, as transformers refuses them: their encoding is the caller's to know."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        raise TypeError(f"{where} is bytes, not a text: decode it first (e.g. value.decode('utf-8')); {takes}")
    raise TypeError(f"{where} is {_described(value)}, not a text; {takes}")


def _listed(inputs, takes):
    """The items of a batch `inputs` (a list, tuple or other iterable of inputs); a TypeError saying what the
    pipeline `takes` for anything else (None, a number, bytes)."""
    if isinstance(inputs, (str, bytes, bytearray, Mapping)) or not isinstance(inputs, Iterable):
        raise TypeError(f"{takes}; got {_described(inputs)}")
    return list(inputs)


def _fields(item, where, required, optional, takes):
    """The `required` and `optional` texts of a dict input `item` (None for a missing optional one); a
    ValueError naming a missing or unknown key, a TypeError for a value that is no text."""
    missing = [key for key in required if key not in item]
    unknown = sorted(set(item) - set(required) - set(optional), key=str)
    if missing or unknown:
        raise ValueError(f"{where} has {f'no {missing[0]!r}' if missing else f'the unknown key {unknown[0]!r}'}; "
                         f"{takes}")
    return [_text(item[key], f"{where}[{key!r}]", takes) if key in item else None for key in (*required, *optional)]


class Pipeline:
    """What the three pipelines share: the model, its tokenizer and labels, the serving graph they run."""

    def __init__(self, model, tokenizer, max_seq_length, label_names=None, **options):
        self.model, self.tokenizer = model, tokenizer
        self.label_names = list(label_names) if label_names else None
        self.serving = make_serving_task(model, tokenizer, max_seq_length, label_names=self.label_names, **options)
        # One trace per input signature, as the export runs it.
        self._run = tf.function(self.serving.serve_text, input_signature=self.serving.text_signature())

    @property
    def traces(self):
        """How many times the serving graph was traced: once, whatever the requests' sizes."""
        return self._run.experimental_get_tracing_count()

    def run(self, *texts):
        return {name: value.numpy() for name, value in self._run(*(tf.constant(t, tf.string) for t in texts)).items()}

    def label(self, label_id):
        return self.label_names[label_id] if self.label_names else f"LABEL_{label_id}"


class TextClassificationPipeline(Pipeline):
    """`[{"label", "score"}]` for each text (see the module docstring)."""

    TAKES = ("a text-classification pipeline takes a text (str), {'text': ..., 'text_pair': ...}, or a list of "
             "either")

    def __call__(self, inputs, top_k=1):
        single = isinstance(inputs, (str, Mapping))
        items = [inputs] if single else _listed(inputs, self.TAKES)
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
        if len(texts) != len(self.serving.text_inputs):
            raise ValueError(f"this model reads {' and '.join(self.serving.text_inputs)}: give "
                             + ("{'text': ..., 'text_pair': ...}" if len(self.serving.text_inputs) == 2 else "texts"))
        probabilities = self.run(*texts)["probabilities"] if items else np.zeros((0, 0))
        results = []
        for row in probabilities:
            order = np.argsort(-row, kind="stable")[:top_k]
            results.append([{"label": self.label(int(i)), "score": float(row[i])} for i in order])
        if top_k == 1:  # transformers' default: one dict per text, in a list even for one text
            return [result[0] for result in results]
        return results[0] if single else results


class TokenClassificationPipeline(Pipeline):
    """Entities with character offsets for each text (see the module docstring)."""

    def __init__(self, *args, aggregation_strategy="simple", ignore_labels=("O",), **kwargs):
        super().__init__(*args, **kwargs)
        if aggregation_strategy not in ("simple", "none"):
            raise ValueError(f"aggregation_strategy must be 'simple' or 'none', got {aggregation_strategy!r}")
        self.aggregation_strategy, self.ignore_labels = aggregation_strategy, tuple(ignore_labels)
        # Span tags are grouped by their scheme (`tag_spans`), other labels while they repeat.
        self.span_labels = bool(self.label_names) and all(is_span_tag(name) for name in self.label_names)

    TAKES = "a token-classification pipeline takes a text (str) or a list of texts"

    def __call__(self, inputs):
        single = isinstance(inputs, str)
        texts = [inputs] if single else [_text(text, f"inputs[{i}]", self.TAKES)
                                         for i, text in enumerate(_listed(inputs, self.TAKES))]
        outputs = self.run(texts) if texts else {}
        results = [self._entities(text, outputs, row) for row, text in enumerate(texts)]
        return results[0] if single else results

    def _words(self, text, outputs, row):
        for index in range(int(outputs["num_words"][row])):
            label_id = int(outputs["label_id"][row, index])
            if label_id < 0:  # cut at max_seq_length
                break
            start, end = int(outputs["word_start"][row, index]), int(outputs["word_end"][row, index])
            yield {"entity": self.label(label_id), "score": float(outputs["probability"][row, index]),
                   "index": index, "word": text[start:end], "start": start, "end": end}

    def _groups(self, labels):
        """`(type, first, end)` of each entity of a sentence's labels (`end` exclusive), in order."""
        if self.span_labels:
            return sorted(tag_spans(labels), key=lambda span: span[1])
        groups = []
        for index, label in enumerate(labels):
            if groups and groups[-1][0] == label:
                groups[-1][2] = index + 1
            else:
                groups.append([label, index, index + 1])
        return groups

    def _entities(self, text, outputs, row):
        words = list(self._words(text, outputs, row))
        if self.aggregation_strategy == "none":
            return [word for word in words if word["entity"] not in self.ignore_labels]
        entities = []
        for kind, first, end in self._groups([word["entity"] for word in words]):
            if kind in self.ignore_labels:
                continue
            start, stop = words[first]["start"], words[end - 1]["end"]
            entities.append({"entity_group": kind, "score": float(np.mean([w["score"] for w in words[first:end]])),
                             "word": text[start:stop], "start": start, "end": stop})
        return entities


class QuestionAnsweringPipeline(Pipeline):
    """`{"answer", "score", "start", "end"}` for each question (see the module docstring)."""

    TAKES = ("a question-answering pipeline takes question= and context= (texts, or lists of texts), or "
             "{'question': ..., 'context': ...} or a list of them")

    def __call__(self, inputs=None, question=None, context=None):
        if inputs is not None:
            single = isinstance(inputs, Mapping)
            items = [inputs] if single else _listed(inputs, self.TAKES)
            for i, item in enumerate(items):
                if not isinstance(item, Mapping):
                    raise TypeError(f"inputs[{i}] is {_described(item)}; {self.TAKES}")
            fields = [_fields(item, "inputs" if single else f"inputs[{i}]", ("question", "context"), (), self.TAKES)
                      for i, item in enumerate(items)]
            questions, contexts = [q for q, _ in fields], [c for _, c in fields]
        else:
            if question is None or context is None:
                raise ValueError(f"no {'question' if question is None else 'context'} given; {self.TAKES}")
            single = isinstance(question, str)
            questions, contexts = (([_text(question, "question", self.TAKES)], [_text(context, "context", self.TAKES)])
                                   if single else
                                   ([_text(q, f"question[{i}]", self.TAKES)
                                     for i, q in enumerate(_listed(question, self.TAKES))],
                                    [_text(c, f"context[{i}]", self.TAKES)
                                     for i, c in enumerate(_listed(context, self.TAKES))]))
        if len(questions) != len(contexts):
            raise ValueError(f"{len(questions)} questions for {len(contexts)} contexts")
        outputs = self.run(questions, contexts) if questions else {}
        results = []
        for row in range(len(questions)):
            found = bool(outputs["has_answer"][row]) and int(outputs["answer_start"][row]) >= 0
            results.append({"score": float(outputs["score"][row]),
                            "start": int(outputs["answer_start"][row]) if found else 0,
                            "end": int(outputs["answer_end"][row]) if found else 0,
                            "answer": _decoded([outputs["answer"][row]])[0] if found else ""})
        return results[0] if single else results


_QA_OPTIONS = ("max_query_length", "max_answer_length", "version_2", "null_threshold")
_PIPELINES = {"classification": TextClassificationPipeline, "tagging": TokenClassificationPipeline,
              "question_answering": QuestionAnsweringPipeline}


def pipeline(task, model, tokenizer=None, max_seq_length=None, **options):
    """A callable from raw text to results for `task` (see the module docstring).

    Args:
        task: "text-classification" ("sentiment-analysis"), "token-classification" ("ner") or
            "question-answering".
        model: a fine-tuned model folder (`save_pretrained`'s, `electra-finetune`'s `trial_<i>/model`, a
            Hugging Face one), a Hugging Face hub id (from the cache or downloaded; `revision=`, `token=`,
            `cache_dir=`, `local_files_only=`, `force_download=` among `options` go to
            `electra_tf.checkpoints.hub.resolve`), or a loaded task model.
        tokenizer: its `ElectraTokenizer` (default: the folder's, or the model's preprocessor's).
        max_seq_length: tokens per input (default: the folder's, the preprocessor's, else 128 or the model's
            position table if shorter).
        options: the pipeline's (`aggregation_strategy` for token classification) or the serving task's
            (`compile=True`: the model call under XLA; `constant_weights`: the weights as graph constants,
            by default when `model` is a folder; `max_answer_length`, `null_threshold`, ... for question
            answering).
    """
    if task not in PIPELINE_TASKS:
        raise ValueError(f"task must be one of {sorted(PIPELINE_TASKS)}, got {task!r}")
    info = {}
    if isinstance(model, str) or hasattr(model, "__fspath__"):
        folder = resolve(str(model), **{name: options.pop(name) for name in HUB_OPTIONS if name in options})
        model, info = load_model(folder)
        tokenizer = tokenizer or ElectraTokenizer.from_pretrained(folder)
        options.setdefault("constant_weights", True)  # the pipeline alone holds this model: its weights never change
    preprocessor = getattr(model, "preprocessor", None)
    tokenizer = tokenizer or (preprocessor.tokenizer if preprocessor is not None else None)
    if tokenizer is None:
        raise ValueError("this model has no tokenizer: give tokenizer=, or a folder with its vocab.txt")
    kind = getattr(model, "serving_task", None)
    if PIPELINE_TASKS[task] != kind:
        raise ValueError(f"a {task} pipeline needs a model of that task; this one is a {type(model).__name__} "
                         f"({kind})")
    length = max_seq_length or info.get("max_seq_length") or (
        preprocessor.sequence_length if preprocessor is not None
        else min(DEFAULT_SEQUENCE_LENGTH, model.config.max_position_embeddings))
    label_names = getattr(model, "label_names", None) or info.get("label_names")
    if kind == "classification" and info.get("text_pair"):
        options.setdefault("text_pair", True)
    if kind == "question_answering":  # what the fine-tuning run recorded (its serving options), else defaults
        for name in _QA_OPTIONS:
            if info.get(name) is not None:
                options.setdefault(name, info[name])
        options.setdefault("max_query_length", min(64, length // 2))
    return _PIPELINES[kind](model, tokenizer, length, label_names=label_names if kind != "question_answering"
                            else None, **options)
