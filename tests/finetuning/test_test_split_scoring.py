"""A test file is scored like dev when it has labels, for every task kind, and only predicted when it has none."""

import json

import pytest

from electra_tf.config import FinetuningConfig
from electra_tf.data.tasks.squad import SquadExample
from electra_tf.finetuning import make_task
from electra_tf.text.tokenizer import WordPieceTokenizer


@pytest.fixture(scope="module")
def tokenizer():
    return WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "red", "cat", "sat"])


def _squad(answered):
    qa = {"id": "q0", "question": "who sat?", "answers": [{"text": "cat", "answer_start": 4}] if answered else []}
    return json.dumps({"version": "v2.0", "data": [{"title": "t", "paragraphs": [
        {"context": "red cat sat", "qas": [qa]}]}]})


# task → (train file, labelled test file, unlabelled test file, file name)
FILES = {
    "text_classification": ('{"text": "red cat", "label": "a"}\n{"text": "cat", "label": "b"}\n',
                            '{"text": "red cat", "label": "a"}\n', '{"text": "red cat"}\n', "{}.jsonl"),
    "conll2003": ("red O\ncat B-PER\n", "red O\ncat I-PER\n", "red O\ncat O\n", "{}.txt"),
    "squad": (_squad(True), _squad(True), _squad(False), "{}.json"),
    "swag": ("sent1,sent2,ending0,ending1,label\nred,cat,sat,red,0\n", "sent1,sent2,ending0,ending1,label\n"
             "red,cat,sat,red,1\n", "sent1,sent2,ending0,ending1\nred,cat,sat,red\n", "{}.csv"),
}


@pytest.mark.parametrize("task_name", FILES)
def test_a_test_file_is_scored_when_labelled(tmp_path, tokenizer, task_name):
    train, labelled, unlabelled, name = FILES[task_name]
    files = {}
    for split, content in (("train", train), ("test", labelled), ("test_unlabelled", unlabelled)):
        files[split] = str(tmp_path / name.format(split))
        (tmp_path / name.format(split)).write_text(content)
    options = {"num_choices": 2} if task_name == "swag" else {}
    task = make_task(FinetuningConfig(task=task_name), tokenizer, files=files, **options)
    task.load("train")
    assert task.scored("test", task.load("test"))
    assert not task.scored("test", task.load("test_unlabelled"))
    assert task.scored("dev") and not task.scored("train")


def test_cmrc_scoring_is_chosen_by_qa_metric_and_hinted_for_chinese_dev_data(tokenizer):
    example = SquadExample("q", "谁会见了克林顿？", "江泽民主席在北京会见了克林顿。", (("江泽民主席", 0),))
    squad_task = make_task(FinetuningConfig(task="squad"), tokenizer)
    cmrc_task = make_task(FinetuningConfig(task="squadv1"), tokenizer, qa_metric="cmrc")
    drcd_task = make_task(FinetuningConfig(task="squadv1"), tokenizer, qa_metric="drcd")  # the same script
    # "江泽民" has no space: SQuAD's F1 sees one word, unlike the answer's; CMRC's sees 3 of its 5 characters.
    assert squad_task.score([example], {"q": "江泽民"})["f1"] == 0.0
    assert cmrc_task.score([example], {"q": "江泽民"})["f1"] == pytest.approx(75.0)
    traditional = SquadExample("t", "哪所大學？", "他畢業於國立臺灣大學。", (("國立臺灣大學", 4),))
    assert drcd_task.score([traditional], {"t": "臺灣大學"})["f1"] == pytest.approx(80.0)  # P 4/4, R 4/6
    assert "--qa_metric=cmrc" in squad_task.advice("dev", [example])
    assert cmrc_task.advice("dev", [example]) is None
    assert squad_task.advice("dev", [SquadExample("e", "Who?", "Ann met Bob.", (("Ann", 0),))]) is None
    with pytest.raises(ValueError, match="qa_metric must be one of"):
        make_task(FinetuningConfig(task="squad"), tokenizer, qa_metric="bleu")
