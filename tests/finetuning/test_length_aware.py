"""Length-aware batches give fixed padding's scores (to float round-off), for every kind of task; training
batches group similar lengths and pad only to their bucket."""

import json

import numpy as np
import pytest

from electra_tf.config import FinetuningConfig
from electra_tf.data.tasks import classification
from electra_tf.text.featurize import PAD_MULTIPLE, SHORT_LENGTH
from electra_tf.finetuning import make_task
from electra_tf.checkpoints.tokenizer_files import load_tokenizer

WORDS = ["red", "blue", "green", "cat", "dog", "house", "tree", "car", "book", "river", "zebra", "paris"]


@pytest.fixture(scope="module")
def tokenizer(tiny_pretrained_dir):
    return load_tokenizer(tiny_pretrained_dir)


def text(rng, low=1, high=40):
    return " ".join(rng.choice(WORDS, size=int(rng.integers(low, high))))


def both_ways(task_name, tokenizer, pretrained, **options):
    """`(task, predictions with fixed padding, length-aware predictions)` of one untrained model."""
    config = FinetuningConfig.from_dict({"task": task_name, "max_seq_length": 64, "predict_batch_size": 8,
                                         "beam_size": 4, "doc_stride": 16, **options})
    fixed = make_task(config.replace(pad_to_max_length=True), tokenizer, **task_files[task_name])
    aware = make_task(config, tokenizer, **task_files[task_name])
    examples = fixed.load("train")
    aware.load("train")
    model = fixed.build_model(pretrained)
    return examples, fixed.predict(model, examples), aware.predict(model, examples)


task_files = {}


@pytest.fixture(scope="module", autouse=True)
def files(tmp_path_factory):
    folder, rng = tmp_path_factory.mktemp("lengths"), np.random.default_rng(0)
    rows = [json.dumps({"text": text(rng), "label": str(i % 3)}) for i in range(40)]
    (folder / "classes.jsonl").write_text("\n".join(rows))
    task_files["text_classification"] = {"files": {"train": str(folder / "classes.jsonl")}}
    sentences = ["\n".join(f"{word} NN O {'I-LOC' if word == 'paris' else 'O'}" for word in text(rng, 1, 50).split())
                 for _ in range(30)]
    (folder / "tags.txt").write_text("\n\n".join(sentences) + "\n")
    task_files["conll2003"] = {"files": {"train": str(folder / "tags.txt")}}
    choices = ["sent1,sent2,ending0,ending1,ending2,ending3,label"]
    choices += [f"{text(rng, 1, 20)},the,{','.join(text(rng, 1, 15) for _ in range(4))},{i % 4}" for i in range(24)]
    (folder / "choices.csv").write_text("\n".join(choices) + "\n")
    task_files["swag"] = {"files": {"train": str(folder / "choices.csv")}}
    paragraphs = []
    for i in range(20):
        context = text(rng, 2, 90) + " zebra here."
        paragraphs.append({"context": context, "qas": [{"id": f"q{i}", "question": text(rng, 1, 6),
                                                        "answers": [{"text": "zebra",
                                                                     "answer_start": context.index("zebra")}]}]})
    (folder / "squad.json").write_text(json.dumps({"data": [{"paragraphs": paragraphs}]}))
    task_files["squadv1"] = {"files": {"train": str(folder / "squad.json")}}


@pytest.mark.parametrize("head", ["original", "huggingface"])
def test_classification_and_multiple_choice_scores_equal_fixed_paddings(tokenizer, tiny_pretrained_dir, head):
    _, fixed, aware = both_ways("text_classification", tokenizer, tiny_pretrained_dir, head=head)
    np.testing.assert_allclose(aware, fixed, atol=1e-5)
    _, fixed, aware = both_ways("swag", tokenizer, tiny_pretrained_dir)
    np.testing.assert_allclose(aware, fixed, atol=1e-5)


def test_tagging_predictions_equal_fixed_paddings(tokenizer, tiny_pretrained_dir):
    sentences, fixed, aware = both_ways("conll2003", tokenizer, tiny_pretrained_dir)
    assert list(aware) == list(fixed) and [len(tags) for tags in aware] == [len(s.words) for s in sentences]
    for a, b in zip(aware.probabilities, fixed.probabilities):
        np.testing.assert_allclose(a, b, atol=1e-5)


@pytest.mark.parametrize("head", ["original", "huggingface"])
def test_question_answering_answers_equal_fixed_paddings(tokenizer, tiny_pretrained_dir, head):
    examples, fixed, aware = both_ways("squadv1", tokenizer, tiny_pretrained_dir, head=head, beam_size=20)
    assert dict(aware) == dict(fixed)
    for question in fixed.nbest:
        assert [n["text"] for n in aware.nbest[question]] == [n["text"] for n in fixed.nbest[question]]
        np.testing.assert_allclose([n["probability"] for n in aware.nbest[question]],
                                   [n["probability"] for n in fixed.nbest[question]], atol=1e-4)


def test_training_batches_share_a_bucket_and_are_padded_to_it(tokenizer):
    examples = classification.read_text_file(task_files["text_classification"]["files"]["train"], ["text"],
                                             "label")[0]
    lengths = classification.packed_lengths(examples, tokenizer, 64)
    dataset = classification.classification_dataset(examples, tokenizer, 64, batch_size=4, shuffle=True,
                                                     pad_to_max_length=False)
    widths = set()
    for inputs, _ in dataset.take(30):
        real = inputs["attention_mask"].numpy().sum(axis=1)
        width = inputs["input_ids"].shape[1]
        widths.add(width)
        assert width % PAD_MULTIPLE == 0 or width in (64, SHORT_LENGTH)
        assert width - PAD_MULTIPLE < real.max() <= width  # padded to the bucket of its longest
        assert len({-(-n // PAD_MULTIPLE) for n in real}) == 1  # one bucket a batch
    assert len(widths) > 1 and max(widths) <= 64 and sorted(set(lengths))[-1] <= 64
