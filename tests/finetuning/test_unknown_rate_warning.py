"""Fine-tuning on texts its vocabulary does not cover (Chinese on an English vocabulary: mostly [UNK]) says so in
one warning line, with the rate and the likely cause, before the model is built and trained."""

import json

import pytest

from electra_tf.config import FinetuningConfig
from electra_tf.data.tasks.squad import SquadExample
from electra_tf.data.tasks.tagging import TaggedSentence
from electra_tf.finetuning import finetune, make_task
from electra_tf.finetuning.trainer import unknown_token_warning
from electra_tf.checkpoints.tokenizer_files import load_tokenizer

CHINESE = ["这部电影非常好看，我很喜欢。", "剧情拖沓，演员的表演也很一般。", "江泽民主席在北京会见了克林顿。",
           "今天天气很好，我们去公园散步吧。"]


@pytest.fixture(scope="module")
def tokenizer(tiny_pretrained_dir):
    return load_tokenizer(tiny_pretrained_dir)


def config(task):
    return FinetuningConfig.from_dict({"task": task, "learning_rate": 1e-3, "layerwise_lr_decay": 0.8, "epochs": 1.0,
                                       "max_seq_length": 24, "batch_size": 8, "predict_batch_size": 8})


def test_chinese_text_on_an_english_vocabulary_is_named_before_training(tmp_path, tokenizer, tiny_pretrained_dir):
    rows = [json.dumps({"text": text, "label": ["no", "yes"][i % 2]}) for i, text in enumerate(CHINESE * 4)]
    (tmp_path / "train.jsonl").write_text("\n".join(rows), encoding="utf-8")
    task = make_task(config("text_classification"), tokenizer, files={"train": str(tmp_path / "train.jsonl")})
    lines = []
    finetune(task, tiny_pretrained_dir, task.load("train"), report=lines.append)
    warning = lines[0]  # the first line, before the model is built and "fine-tuning ..." says it trains
    assert warning.startswith("warning: [UNK] is ") and "% of the tokens of the training texts (above 5%): the " \
        "texts are mostly Chinese, which this vocabulary does not cover: fine-tune a model whose vocabulary does, " \
        "e.g. hfl/chinese-electra-180g-small-discriminator; no learning rate makes up for text the model cannot " \
        "read" in warning, warning
    assert float(warning.split("[UNK] is ")[1].split("%")[0]) > 50
    assert sum(line.startswith("warning: [UNK]") for line in lines) == 1 and lines[1].startswith("fine-tuning")


def test_every_task_kind_measures_the_texts_it_reads(tokenizer):
    tagging = make_task(config("conll2003"), tokenizer)
    sentences = [TaggedSentence(tuple(text), ("O",) * len(text)) for text in CHINESE]
    assert "mostly Chinese" in unknown_token_warning(tokenizer, tagging.texts(sentences))
    qa = make_task(config("squad"), tokenizer)
    questions = [SquadExample(f"q{i}", "谁会见了克林顿？", CHINESE[2], (("江泽民", 0),)) for i in range(3)]
    assert qa.texts(questions) == ["谁会见了克林顿？"] * 3 + [CHINESE[2]]  # the shared context once
    assert "mostly Chinese" in unknown_token_warning(tokenizer, qa.texts(questions))
    english = [SquadExample("e", "who met the dog?", "the cat met the dog.", (("the cat", 0),))]
    assert unknown_token_warning(tokenizer, qa.texts(english)) is None
