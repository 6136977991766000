"""SQuAD v1.1/v2.0 extractive question answering: examples, windowed features, tf.data, answer texts, as the
original ELECTRA (`finetune/qa`) and BERT's `run_squad.py` do it, with the package's in-graph featurizer
(`text.featurize.squad_windows`) and span rules (`text.answer_spans`). An answer is the original context between
the first character of its start token and the last of its end token.

Example:
>>> from electra_tf.text.tokenizer import WordPieceTokenizer
>>> vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "who", "met", "bob", "ann", "?", "."]
>>> tokenizer = WordPieceTokenizer(vocabulary)
>>> example = SquadExample("q1", "Who met Bob?", "Ann met Bob.", (("Ann", 0),), False)
>>> features = squad_features([example], tokenizer, max_seq_length=12, training=True)
>>> features.input_ids.tolist(), features.start_positions.tolist(), features.end_positions.tolist()
([[2, 5, 6, 7, 9, 3, 8, 6, 7, 10, 3, 0]], [6], [6])
>>> x, y = next(iter(squad_dataset(features, batch_size=1, training=True)))
>>> sorted(x)
['attention_mask', 'input_ids', 'start_positions', 'token_type_ids']
>>> sorted(y)
['end_positions', 'is_impossible', 'start_positions']
>>> logits = np.where(np.arange(12) == 6, 5.0, 0.0)[None]
>>> outputs = {"start_logits": logits, "end_logits": logits}
>>> predictions, nbest, null_odds = postprocess([example], features, outputs)
>>> predictions, nbest["q1"][0]["char_start"], nbest["q1"][0]["char_end"]
({'q1': 'Ann'}, 0, 3)
"""

import dataclasses
import json

import numpy as np
import tensorflow as tf
from absl import logging
from scipy.special import softmax

from electra_tf.text import answer_spans
from electra_tf.text import featurize
from electra_tf.text.answer_spans import ANSWERABLE_NULL_THRESHOLD, SPAN_NULL_THRESHOLD
from electra_tf.util.atomic import read_json, write_text
from electra_tf.data import batching
from electra_tf.data.tasks.tables import is_table, read_table, require_columns

# Questions featurized per call: bounds the memory of the windows in flight.
_QUESTIONS_PER_CALL = 2048


@dataclasses.dataclass(frozen=True)
class SquadExample:
    """One question on one context; `answers` are (text, char_start) pairs, empty when unanswerable."""

    qas_id: str
    question: str
    context: str
    answers: tuple = ()
    is_impossible: bool = False


class SquadExamples(list):
    """The examples of a file (a list); `skipped_ids` names the questions skipped for a misplaced answer."""

    def __init__(self, examples, skipped_ids=()):
        super().__init__(examples)
        self.skipped_ids = tuple(skipped_ids)


def _field(record, key, where, path):
    if not isinstance(record, dict) or key not in record:
        raise ValueError(f"{path}: {where} has no {key!r}")
    return record[key]


def _json_questions(path):
    """`(id, question, context, answers, is_impossible)` of each question of a SQuAD JSON file."""
    squad = read_json(path)
    for i, article in enumerate(_field(squad, "data", "the file", path)):
        for j, paragraph in enumerate(_field(article, "paragraphs", f"data[{i}]", path)):
            where = f"data[{i}].paragraphs[{j}]"
            context = _field(paragraph, "context", where, path)
            for k, qa in enumerate(_field(paragraph, "qas", where, path)):
                qas_id = _field(qa, "id", f"{where}.qas[{k}]", path)
                where_qa = f"question {qas_id!r}"
                is_impossible = bool(qa.get("is_impossible", False))
                answers = () if is_impossible else tuple(
                    (_field(answer, "text", f"an answer of {where_qa}", path),
                     _field(answer, "answer_start", f"an answer of {where_qa}", path))
                    for answer in _field(qa, "answers", where_qa, path))
                yield qas_id, _field(qa, "question", where_qa, path), context, answers, is_impossible


def _table_questions(path):
    """The same of a Parquet file or 🤗 dataset in the hub's SQuAD layout (`id`, `question`, `context`, `answers`
    {`text`: [...], `answer_start`: [...]}), a question without answers unanswerable (as in `squad_v2`)."""
    rows = read_table(path)
    if not rows:
        raise ValueError(f"{path}: no questions")
    require_columns(rows, ["id", "question", "context", "answers"], path)
    for row, line in zip(rows, rows.line_numbers):
        answers = row["answers"]
        if not isinstance(answers, dict) or not isinstance(answers.get("text"), list) \
                or not isinstance(answers.get("answer_start"), list):
            raise ValueError(f"{path}:{line}: 'answers' is {answers!r:.80}, not {{'text': [...], "
                             "'answer_start': [...]}")
        pairs = tuple(zip(answers["text"], answers["answer_start"]))
        yield str(row["id"]), row["question"], row["context"], pairs, not pairs


def read_squad(path, on_bad_answer="error"):
    """`SquadExample`s of a SQuAD v1.1 or v2.0 JSON file, or a Parquet file or 🤗 dataset in the hub's layout. An
    answer not at its `answer_start` raises a ValueError, or with `on_bad_answer="skip"` drops its question (as
    the original does in training), named in `skipped_ids`.

    >>> import json, tempfile
    >>> squad = {"data": [{"paragraphs": [{"context": "Ann met Bob.", "qas": [
    ...     {"id": "q1", "question": "Who met Bob?", "answers": [{"text": "Ann", "answer_start": 0}]},
    ...     {"id": "q2", "question": "Who met Cy?", "answers": [], "is_impossible": True}]}]}]}
    >>> with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    ...     json.dump(squad, f)
    >>> examples = read_squad(f.name)
    >>> examples[0]
    SquadExample(qas_id='q1', question='Who met Bob?', context='Ann met Bob.', answers=(('Ann', 0),), \
is_impossible=False)
    >>> examples[1].is_impossible, examples.skipped_ids
    (True, ())
    """
    if on_bad_answer not in ("error", "skip"):
        raise ValueError(f"on_bad_answer must be 'error' or 'skip', got {on_bad_answer!r}")
    examples, skipped_ids, seen_ids = [], [], set()
    questions = _table_questions(path) if is_table(path) else _json_questions(path)
    for qas_id, question, context, answers, is_impossible in questions:
        where_qa = f"question {qas_id!r}"
        if qas_id in seen_ids:
            raise ValueError(f"{path}: {where_qa} appears more than once")
        seen_ids.add(qas_id)
        misplaced = [(answer_text, start) for answer_text, start in answers
                     if not isinstance(start, int) or start < 0
                     or context[start:start + len(answer_text)] != answer_text]
        if misplaced and on_bad_answer == "error":
            raise ValueError(f"{path}: {where_qa}: the answer {misplaced[0][0]!r} is not at "
                             f"character {misplaced[0][1]!r} of its context")
        if misplaced:
            skipped_ids.append(qas_id)
        else:
            examples.append(SquadExample(qas_id, question, context, answers, is_impossible))
    if skipped_ids:
        logging.warning("%s: skipped %d question(s) whose answer is not at its answer_start, e.g. %s",
                        path, len(skipped_ids), skipped_ids[:5])
    logging.info("%s: %d questions", path, len(examples))
    return SquadExamples(examples, skipped_ids)


@dataclasses.dataclass
class SquadFeatures:
    """The windows of the examples, numpy arrays with one row per window (`[F, L]` or `[F]`): `token_char_*`, each
    context token's characters (-1 elsewhere); the labels from the first answer (0/0, [CLS], when it is not wholly
    in the window), `None` unless built with `training=True`."""

    input_ids: np.ndarray
    attention_mask: np.ndarray
    token_type_ids: np.ndarray
    example_index: np.ndarray
    token_char_start: np.ndarray
    token_char_end: np.ndarray
    token_is_max_context: np.ndarray
    start_positions: np.ndarray | None = None
    end_positions: np.ndarray | None = None
    is_impossible: np.ndarray | None = None
    truncated_questions: int = 0

    def __len__(self):
        return len(self.input_ids)

    def subset(self, indices):
        """The features (windows) at `indices`, in that order."""
        return dataclasses.replace(self, **{field.name: getattr(self, field.name)[indices]
                                            for field in dataclasses.fields(self)
                                            if isinstance(getattr(self, field.name), np.ndarray)})


def _answer_characters(example):
    """`[start, end)` characters of the example's first answer in its context; (-1, -1) when it has none."""
    if example.is_impossible:
        return -1, -1
    if not example.answers:
        raise ValueError(f"question {example.qas_id!r} has no answer and is not marked impossible")
    text, start = example.answers[0]
    return start, start + len(text)


def squad_features(examples, tokenizer, max_seq_length=512, doc_stride=128, max_query_length=64, training=False):
    """Cuts the examples into `[CLS] question [SEP] context window [SEP]` features (`featurize.squad_windows`);
    `training=True` adds the labels (also for a dev set that needs an evaluation loss)."""
    if not examples:
        raise ValueError("no examples")
    if doc_stride < 1 or max_query_length < 1:
        raise ValueError(f"doc_stride and max_query_length must be positive, got {doc_stride}, {max_query_length}")
    parts, truncated, unlocated = [], 0, 0
    for begin in range(0, len(examples), _QUESTIONS_PER_CALL):
        chunk = examples[begin:begin + _QUESTIONS_PER_CALL]
        contexts = list(dict.fromkeys(example.context for example in chunk))
        index = {context: i for i, context in enumerate(contexts)}
        labels = {}
        if training:
            answers = np.array([_answer_characters(example) for example in chunk], np.int32).reshape(-1, 2)
            labels = {"answer_start": answers[:, 0], "answer_end": answers[:, 1]}
        windows = featurize.squad_windows(
            tokenizer, max_seq_length, max_query_length, doc_stride, tf.constant([e.question for e in chunk]),
            tf.constant(contexts), context_index=[index[e.context] for e in chunk], **labels)
        query_lengths = windows.query_lengths.numpy()
        if max_seq_length - query_lengths.max() - 3 < 1:
            raise ValueError(f"max_seq_length {max_seq_length} leaves no room for the context after a "
                             f"{query_lengths.max()}-token question and 3 special tokens")
        full_lengths = tokenizer(tf.constant([e.question for e in chunk])).row_lengths().numpy()
        truncated += int(np.sum(full_lengths > max_query_length))
        parts.append(windows._replace(example_index=windows.example_index + begin))
        unlocated += int(windows.unlocated) if training else 0
    concat = lambda values: np.concatenate([np.asarray(value) for value in values])  # noqa: E731
    labels = {}
    if training:
        start_positions = concat(part.start_positions for part in parts).astype(np.int32)
        labels = dict(start_positions=start_positions, end_positions=concat(part.end_positions for part in parts),
                      is_impossible=(start_positions == 0).astype(np.int32))
    features = SquadFeatures(
        *(concat(part.inputs[name] for part in parts) for name in ("input_ids", "attention_mask", "token_type_ids")),
        example_index=concat(part.example_index for part in parts).astype(np.int32),
        token_char_start=concat(part.char_start for part in parts),
        token_char_end=concat(part.char_end for part in parts),
        token_is_max_context=concat(part.is_max_context for part in parts),
        truncated_questions=truncated, **labels)
    logging.info("SQuAD features: %d examples in %d windows; %d question(s) cut to %d tokens%s", len(examples),
                 len(features), truncated, max_query_length,
                 f"; {unlocated} answer(s) on no token" if unlocated else "")
    return features


def squad_dataset(features, batch_size, training, shuffle=False, seed=0, pad_to_max_length=True):
    """A batched `tf.data.Dataset` of `SquadFeatures` (`batching.batch_examples`): `(x, y)` when they have labels
    (x also holds the gold `start_positions` the joint head conditions on), else `x`."""
    x = {"input_ids": features.input_ids, "attention_mask": features.attention_mask,
         "token_type_ids": features.token_type_ids}
    labelled = features.start_positions is not None
    if training and not labelled:
        raise ValueError("training needs features built with squad_features(..., training=True)")
    if labelled:
        y = {"start_positions": features.start_positions, "end_positions": features.end_positions,
             "is_impossible": features.is_impossible}
        if training:
            x["start_positions"] = features.start_positions
    dataset = tf.data.Dataset.from_tensor_slices((x, y) if labelled else x)
    keys = None if pad_to_max_length else batching.bucket_keys(features.attention_mask.sum(axis=1))
    dataset = batching.batch_examples(dataset, batch_size, shuffle, seed, keys)
    if not pad_to_max_length:
        dataset = dataset.map(lambda *batch: (batching.to_longest(batch[0]), *batch[1:]) if labelled
                              else batching.to_longest(batch[0]))
    return dataset.prefetch(tf.data.AUTOTUNE)


def _check_outputs(outputs, shape):
    """The outputs as numpy arrays, checked against the features' `[N, L]`."""
    outputs = {name: np.asarray(value) for name, value in outputs.items()}
    start, end = outputs["start_logits"], outputs["end_logits"]
    if start.shape != shape or end.shape[0] != shape[0] or end.shape[-1] != shape[1]:
        raise ValueError(f"start_logits {start.shape} and end_logits {end.shape} do not fit features {shape}")
    if end.ndim == 3 and outputs.get("start_candidates", np.zeros(0)).shape != end.shape[:2]:
        raise ValueError(f"end_logits {end.shape} [N, K, L] need start_candidates [N, K]")
    if "answerable_logits" in outputs:
        outputs["answerable_logits"] = outputs["answerable_logits"].reshape(shape[0])
    return outputs


def postprocess(examples, features, outputs, n_best_size=20, max_answer_length=30, null_threshold=None,
                version_2=False):
    """`(predictions, nbest, null_odds)` by question id from model outputs (numpy, a row per feature, as
    `answer_spans.span_candidates` takes them), as the original `qa_metrics.py` picks them: a question's null odds
    are its smallest over its windows; with `version_2`, "" when they exceed `null_threshold`.

    >>> ids = np.array([[2, 5, 3, 6, 7, 3]])  # [CLS] who [SEP] ann bob [SEP]
    >>> features = SquadFeatures(ids, np.ones_like(ids), np.array([[0, 0, 0, 1, 1, 1]]), np.array([0]),
    ...     token_char_start=np.array([[-1, -1, -1, 0, 4, -1]]), token_char_end=np.array([[-1, -1, -1, 3, 7, -1]]),
    ...     token_is_max_context=np.array([[0, 0, 0, 1, 1, 0]], bool))
    >>> example = SquadExample("q1", "Who?", "Ann Bob", (("Ann", 0),), False)
    >>> outputs = {"start_logits": np.array([[3., 0, 0, 2, 1, 0]]), "end_logits": np.array([[3., 0, 0, 1, 2, 0]])}
    >>> postprocess([example], features, outputs)[0], postprocess([example], features, outputs, version_2=True)[0]
    ({'q1': 'Ann Bob'}, {'q1': ''})
    """
    outputs = _check_outputs(outputs, features.input_ids.shape)
    if null_threshold is None:
        null_threshold = ANSWERABLE_NULL_THRESHOLD if "answerable_logits" in outputs else SPAN_NULL_THRESHOLD
    if len(features) and features.example_index.max() >= len(examples):
        raise ValueError(f"features of example {features.example_index.max()} but {len(examples)} examples")
    spans = answer_spans.span_candidates(
        outputs["start_logits"], outputs["end_logits"], features.token_char_start >= 0,
        start_candidates=outputs.get("start_candidates"), max_answer_length=max_answer_length,
        n_best_size=n_best_size, start_allowed=features.token_is_max_context)
    spans = answer_spans.Candidates(*(np.asarray(value) for value in spans))
    null_scores = outputs["answerable_logits"] if "answerable_logits" in outputs else spans.null_score
    features_of_example = [[] for _ in examples]
    for feature, index in enumerate(features.example_index):
        features_of_example[index].append(feature)

    predictions, all_nbest, all_null_odds = {}, {}, {}
    for example, feature_indices in zip(examples, features_of_example):
        candidates = []
        for feature in feature_indices:
            char_start, char_end = features.token_char_start[feature], features.token_char_end[feature]
            for k in np.flatnonzero(spans.valid[feature]):
                start_score, end_score = spans.start_score[feature, k], spans.end_score[feature, k]
                candidates.append((start_score + end_score, start_score, end_score,
                                   char_start[spans.start[feature, k]], char_end[spans.end[feature, k]]))
        best, seen_texts = [], set()
        for candidate in sorted(candidates, key=lambda c: -c[0]):
            text = example.context[candidate[3]:candidate[4]]
            if text not in seen_texts and len(best) < n_best_size:
                seen_texts.add(text)
                best.append((*candidate, text))
        scores = np.array([candidate[0] for candidate in best])
        nbest = [{"text": text, "probability": float(probability), "start_logit": float(start_score),
                  "end_logit": float(end_score), "char_start": int(char_start), "char_end": int(char_end)}
                 for (_, start_score, end_score, char_start, char_end, text), probability
                 in zip(best, softmax(scores) if best else [])]
        null_score = min((float(null_scores[feature]) for feature in feature_indices), default=np.inf)
        if "answerable_logits" in outputs:
            null_odds = null_score
        else:
            null_odds = null_score - scores[0] if best else np.inf
        answer_is_null = not nbest or (version_2 and null_odds > null_threshold)
        predictions[example.qas_id] = "" if answer_is_null else nbest[0]["text"]
        all_nbest[example.qas_id], all_null_odds[example.qas_id] = nbest, float(null_odds)
    return predictions, all_nbest, all_null_odds


def write_predictions(predictions, path):
    """Writes SQuAD's `predictions.json` (question id → text) atomically.

    >>> import json, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "predictions.json")
    >>> write_predictions({"q1": "Ann"}, path)
    >>> json.load(open(path))
    {'q1': 'Ann'}
    """
    write_text(path, json.dumps(predictions, ensure_ascii=False, indent=1))
