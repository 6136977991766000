"""Metrics against values worked out by hand, and CMRC 2018 / DRCD against the official script's recorded results."""

import json
import math
import pathlib

import pytest

from electra_tf.data.tasks.squad import SquadExample
from electra_tf.finetuning.metrics import (
    QA_SCORERS,
    classification_scores,
    cmrc_scores,
    cmrc_segments,
    entity_f1,
    normalize_answer,
    squad_scores,
)


def test_classification_metrics_by_hand():
    labels, predicted = [1, 1, 1, 0, 0, 0], [1, 1, 0, 0, 0, 1]
    # TP 2, FN 1, TN 2, FP 1 → accuracy 4/6, F1 2·2/(2·2+1+1)=2/3, MCC (2·2−1·1)/sqrt(3·3·3·3)=3/9.
    scores = classification_scores(labels, predicted, ("accuracy", "f1", "mcc"))
    assert scores == pytest.approx({"accuracy": 4 / 6, "f1": 2 / 3, "mcc": 1 / 3})


def test_correlations_by_hand():
    gold, predicted = [1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0]
    # Pearson: deviations (−1.5, −.5, .5, 1.5) and (−1.5, .5, −.5, 1.5): Σxy = 2.25−.25−.25+2.25 = 4, Σx² = 5.
    # Spearman on ranks (same values): 1 − 6·(0+1+1+0)/(4·15) = 0.8.
    scores = classification_scores(gold, predicted, ("pearson", "spearman"))
    assert scores == pytest.approx({"pearson": 0.8, "spearman": 0.8})


def test_metric_errors():
    with pytest.raises(ValueError, match="unknown metrics"):
        classification_scores([1], [1], ("bleu",))
    with pytest.raises(ValueError, match="labels but"):
        classification_scores([1, 0], [1], ("accuracy",))


def test_entity_f1_by_hand():
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O"]]
    predicted = [["B-PER", "I-PER", "O", "B-ORG"], ["B-ORG", "O"]]
    # Gold: PER(0,1), LOC(3), ORG(0). Predicted: PER(0,1), ORG(3), ORG(0) → 2 of 3 right both ways.
    assert entity_f1(gold, predicted) == pytest.approx({"precision": 2 / 3, "recall": 2 / 3, "f1": 2 / 3})
    # A span with the wrong end is wrong: PER(0,0) ≠ PER(0,1).
    assert entity_f1([["B-PER", "I-PER"]], [["B-PER", "O"]])["f1"] == 0.0
    with pytest.raises(ValueError, match="gold tags but"):
        entity_f1([["O", "O"]], [["O"]])


def test_squad_normalisation_and_scores_by_hand():
    assert normalize_answer("  The Eiffel   Tower, Paris. ") == "eiffel tower paris"
    examples = [SquadExample("a", "q", "ctx", (("Denver Broncos", 0), ("the Broncos", 0)), False),
                SquadExample("b", "q", "ctx", (("Santa Clara, California", 0),), False),
                SquadExample("c", "q", "ctx", (), True),
                SquadExample("d", "q", "ctx", (("1990", 0),), False)]
    predictions = {"a": "Broncos", "b": "Santa Clara", "c": "", "d": "in 1990"}
    # a: EM vs "the Broncos" → "broncos" = "broncos": 1.  b: F1 2·(2/2·2/3)/(1+2/3) = 0.8.
    # c: no answer, predicted none: 1/1.  d: EM 0, F1 P=1/2 R=1 → 2/3.
    scores = squad_scores(predictions, examples)
    assert scores["exact_match"] == pytest.approx(100 * 2 / 4)
    assert scores["f1"] == pytest.approx(100 * (1 + 0.8 + 1 + 2 / 3) / 4)
    # A missing prediction scores 0; an answer to an unanswerable question scores 0.
    assert squad_scores({"c": "something"}, examples[2:3])["f1"] == 0.0
    assert math.isclose(squad_scores({}, examples)["exact_match"], 0.0)


def test_cmrc_scores_by_hand_as_the_official_cmrc_2018_script():
    segments = cmrc_segments(" Google的ELECTRA-Small模型：3 种！")  # "-" is removed without cutting the word
    assert segments == ["google", "的", "electrasmall", "模", "型", "3", "种"]
    examples = [SquadExample("order", "q", "ctx", (("北京大学", 0),)),
                SquadExample("mixed", "q", "ctx", (("ELECTRA模型", 0),)),
                SquadExample("several", "q", "ctx", (("一九九八年", 0), ("1998年", 0))),
                SquadExample("punctuation", "q", "ctx", (("《红楼梦》", 0),)),
                SquadExample("missing", "q", "ctx", (("克林顿", 0),))]
    predictions = {"order": "大学北京", "mixed": "Google的ELECTRA模型", "several": "1998年。", "punctuation": "红楼梦"}
    # order: the longest common substring is 2 of 4 characters each way: P = R = 1/2, F1 1/2 (a bag of tokens
    # would say 1). mixed: [google 的 electra 模 型] holds [electra 模 型]: P 3/5, R 1, F1 3/4. several: the
    # second answer, once "。" is removed: EM 1, F1 1. punctuation: 《》 removed: EM 1, F1 1. missing: 0.
    scores = cmrc_scores(predictions, examples)
    assert scores["exact_match"] == pytest.approx(100 * 2 / 5)
    assert scores["f1"] == pytest.approx(100 * (0.5 + 0.75 + 1 + 1 + 0) / 5)
    assert scores["total"] == 5
    # An unanswerable question is right only when nothing is predicted.
    unanswerable = SquadExample("none", "q", "ctx", ())
    assert cmrc_scores({"none": ""}, [unanswerable])["f1"] == 100.0
    assert cmrc_scores({"none": "北京"}, [unanswerable])["exact_match"] == 0.0


OFFICIAL = json.loads((pathlib.Path(__file__).parents[1] / "fixtures" / "cmrc" / "official_scores.json").read_text("utf-8"))


def test_cmrc_segments_equal_the_official_scripts():
    # mixed_segmentation(text, rm_punc=True) of cmrc2018_drcd_evaluate.py with NLTK's word_tokenize, as recorded by
    # tools/make_cmrc_fixtures.py: decimals, "1,000", "U.S.", contractions, "……", quotes, full-width forms, spaces.
    differ = {text: (cmrc_segments(text), official) for text, official in OFFICIAL["segments"].items()
              if cmrc_segments(text) != official}
    assert not differ
    assert OFFICIAL["segments"]["end. next"] == ["end", ".", "next"]  # Punkt's sentence end, cut off by Treebank
    assert OFFICIAL["segments"]['"abc"'] == ["``", "abc", "\'\'"]


def test_cmrc_scores_equal_the_official_scripts_on_every_pair():
    examples = [SquadExample(case["id"], "?", "", tuple((gold, 0) for gold in case["answers"]))
                for case in OFFICIAL["cases"]]
    predictions = {case["id"]: case["prediction"] for case in OFFICIAL["cases"] if case["prediction"] is not None}
    differ = []
    for case, example in zip(OFFICIAL["cases"], examples):
        if case["prediction"] is not None:
            scores = cmrc_scores({case["id"]: case["prediction"]}, [example])
            if not (math.isclose(scores["exact_match"], 100 * case["em"])
                    and math.isclose(scores["f1"], 100 * case["f1"], abs_tol=1e-9)):
                differ.append((case, scores))
    assert not differ  # 237 of the 627 answered pairs differed in F1 before the scorer used NLTK's rules
    # The averages over all questions, unanswered ones counted as 0, as the script's evaluate().
    for metric in ("cmrc", "drcd"):
        scores = QA_SCORERS[metric](predictions, examples)
        assert scores["f1"] == pytest.approx(OFFICIAL["dataset_scores"]["F1"], abs=1e-9)
        assert scores["exact_match"] == pytest.approx(OFFICIAL["dataset_scores"]["EM"], abs=1e-9)
        assert scores["total"] == OFFICIAL["dataset_scores"]["TOTAL"]


def test_cmrc_issue_examples():
    # official: "3.5亿元" vs "3.5亿" 80.00 (was 88.89), "U.S.总统" vs "总统" 66.67 (was 50.00), "他说……" 80.00 (66.67)
    for gold, predicted, f1 in [("3.5亿元", "3.5亿", 80.0), ("U.S.总统", "总统", 200 / 3), ("他说……", "他说", 80.0)]:
        example = SquadExample("q", "?", "", ((gold, 0),))
        assert cmrc_scores({"q": predicted}, [example])["f1"] == pytest.approx(f1)


@pytest.mark.parametrize("predictions, answers, message", [
    ({"q": 5}, (("北京", 0),), r"predictions\['q'\] is 5 \(int\), not an answer text"),
    ({"q": None}, (("北京", 0),), r"predictions\['q'\] is None"),
    ({"q": "北京"}, (("", 0),), "question 'q' has gold answer '': CMRC 2018 / DRCD gold answers are non-empty"),
    ({"q": "北京"}, ((" ", 0),), "question 'q' has gold answer ' '"),
    (["北京"], (("北京", 0),), "predictions must map question ids to answer texts, got a list"),
])
def test_cmrc_scores_refuse_bad_inputs_in_one_line(predictions, answers, message):
    with pytest.raises(ValueError, match=message) as error:
        cmrc_scores(predictions, [SquadExample("q", "?", "", answers)])
    assert "\n" not in str(error.value)
