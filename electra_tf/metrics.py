"""Task metrics: scikit-learn and SciPy where they have the metric, the official SQuAD rules otherwise.

Written here only what no library does: entity-level span F1 (what `seqeval`
computes; not a dependency) and SQuAD's exact match / F1 with its answer
normalisation (a script, not a library: `evaluate-v2.0.py`).

Example:
>>> classification_scores([0, 1, 1, 0], [0, 1, 0, 0], ("accuracy", "f1"))
{'accuracy': 0.75, 'f1': 0.6666666666666666}
>>> normalize_answer("The  Eiffel-Tower!")
'eiffeltower'
"""

import collections
import re
import string

import numpy as np
import scipy.stats
import sklearn.metrics

from electra_tf.data.tasks.tagging import tag_spans

CLASSIFICATION_METRICS = ("accuracy", "f1", "mcc", "pearson", "spearman")


def classification_scores(labels, predictions, metrics):
    """The named metrics of `predictions` against `labels` (class ids, or scores for pearson/spearman).

    `f1` is binary F1 of class 1 (as GLUE reports it for MRPC and QQP);
    `mcc` is Matthews correlation (CoLA).
    """
    labels, predictions = np.asarray(labels), np.asarray(predictions)
    if labels.shape != predictions.shape:
        raise ValueError(f"{labels.shape[0]} labels but {predictions.shape[0]} predictions")
    functions = {
        "accuracy": sklearn.metrics.accuracy_score,
        "f1": sklearn.metrics.f1_score,
        "mcc": sklearn.metrics.matthews_corrcoef,
        "pearson": lambda y, p: scipy.stats.pearsonr(y, p).statistic,
        "spearman": lambda y, p: scipy.stats.spearmanr(y, p).statistic,
    }
    unknown = set(metrics) - set(functions)
    if unknown:
        raise ValueError(f"unknown metrics {sorted(unknown)}; choose from {CLASSIFICATION_METRICS}")
    return {name: float(functions[name](labels, predictions)) for name in metrics}


def entity_f1(gold, predicted):
    """Entity-level precision/recall/F1 over sentences of tags (IOB1, IOB2 or BIOES), as CoNLL's `conlleval`.

    An entity counts as found only when its type, start and end all match.

    >>> entity_f1([["B-PER", "I-PER", "O", "B-LOC"]], [["B-PER", "I-PER", "O", "O"]])
    {'precision': 1.0, 'recall': 0.5, 'f1': 0.6666666666666666}
    """
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold sentences but {len(predicted)} predicted")
    found = correct = expected = 0
    for row, (gold_tags, predicted_tags) in enumerate(zip(gold, predicted)):
        if len(gold_tags) != len(predicted_tags):
            raise ValueError(f"sentence {row}: {len(gold_tags)} gold tags but {len(predicted_tags)} predicted")
        gold_spans, predicted_spans = tag_spans(gold_tags), tag_spans(predicted_tags)
        found += len(predicted_spans)
        expected += len(gold_spans)
        correct += len(gold_spans & predicted_spans)
    precision = correct / found if found else 0.0
    recall = correct / expected if expected else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def normalize_answer(text):
    """SQuAD's normalisation: lower case, no punctuation, no articles, single spaces."""
    text = "".join(c for c in text.lower() if c not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def _f1(gold, predicted):
    gold_tokens, predicted_tokens = normalize_answer(gold).split(), normalize_answer(predicted).split()
    if not gold_tokens or not predicted_tokens:
        return float(gold_tokens == predicted_tokens)  # no-answer: right only if both are empty
    common = sum((collections.Counter(gold_tokens) & collections.Counter(predicted_tokens)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted_tokens), common / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def squad_scores(predictions, examples):
    """Exact match and F1 (0–100) as the official SQuAD v1.1/v2.0 scripts compute them.

    `predictions` maps question id → answer text ("" for no answer);
    `examples` are `SquadExample`s (`qas_id`, `answers` as (text, start)
    pairs, empty for an unanswerable question). Each question scores its best
    match over the gold answers; a question without a prediction scores 0.

    >>> from electra_tf.data.tasks.squad import SquadExample
    >>> example = SquadExample("q1", "Who?", "Ann met Bob.", (("Ann", 0),), False)
    >>> squad_scores({"q1": "ann"}, [example])
    {'exact_match': 100.0, 'f1': 100.0, 'total': 1}
    """
    if not examples:
        raise ValueError("no examples to score")
    exact = f1 = 0.0
    for example in examples:
        golds = [text for text, _ in example.answers if normalize_answer(text)] or [""]
        predicted = predictions.get(example.qas_id)
        if predicted is None:
            continue
        exact += max(float(normalize_answer(g) == normalize_answer(predicted)) for g in golds)
        f1 += max(_f1(g, predicted) for g in golds)
    return {"exact_match": 100 * exact / len(examples), "f1": 100 * f1 / len(examples), "total": len(examples)}
