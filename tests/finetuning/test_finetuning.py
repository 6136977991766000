"""Each task kind fine-tunes end to end from a pre-trained folder, through `electra_tf.finetuning`."""

import inspect
import json

import numpy as np
import pytest

import electra_tf
from electra_tf.config import FinetuningConfig, default_learning_rate
from electra_tf.finetuning import finetune, make_task
from electra_tf.checkpoints.tokenizer_files import load_tokenizer

WORDS = ["red", "blue", "green", "cat", "dog", "house", "tree", "car", "book", "river"]


@pytest.fixture(scope="module")
def tokenizer(tiny_pretrained_dir):
    return load_tokenizer(tiny_pretrained_dir)


def config(task, **changes):
    values = {"task": task, "learning_rate": 3e-3, "layerwise_lr_decay": 1.0, "epochs": 6.0, "max_seq_length": 24,
              "batch_size": 8, "predict_batch_size": 16, "beam_size": 4, **changes}
    return FinetuningConfig.from_dict(values)


def sentences(rng, n, marker=None, marks=1):
    """Random word sentences; `marker` (if given) is put `marks` times into those labelled 1."""
    texts, labels = [], []
    for i in range(n):
        words = list(rng.choice(WORDS, size=6))
        label = i % 2
        if marker and label:
            places = [rng.integers(0, 6)] if marks == 1 else rng.choice(6, size=marks, replace=False)
            for place in places:
                words[int(place)] = marker
        texts.append(" ".join(words))
        labels.append(label)
    return texts, labels


def test_text_classification_learns_a_marker_word_and_writes_predictions(tmp_path, tokenizer, tiny_pretrained_dir):
    rng = np.random.default_rng(0)
    for split, n in (("train", 96), ("dev", 32)):
        texts, labels = sentences(rng, n, marker="zebra")
        rows = [json.dumps({"text": t, "label": ["no", "yes"][y]}) for t, y in zip(texts, labels)]
        (tmp_path / f"{split}.jsonl").write_text("\n".join(rows))
    task = make_task(config("text_classification", head="original"), tokenizer,  # (the head these steps suit)
                     files={s: str(tmp_path / f"{s}.jsonl") for s in ("train", "dev")})
    model = finetune(task, tiny_pretrained_dir, task.load("train")).model
    dev = task.load("dev")
    predictions = task.predict(model, dev)
    assert task.score(dev, predictions)["accuracy"] >= 0.9
    path = task.write_predictions(dev, predictions, str(tmp_path), "dev")
    lines = open(path).read().splitlines()
    rows = [line.split("\t") for line in lines[1:]]
    assert lines[0] == "index\tprediction\tprobability" and len(rows) == 32
    assert {row[1] for row in rows} <= {"no", "yes"} and all(0.5 <= float(row[2]) <= 1.0 for row in rows)


def test_dev_scores_during_training_and_the_best_model_kept(tmp_path, tokenizer, tiny_pretrained_dir):
    # A marker three times in a sentence and the module's learning rate: learnt on every data seed tried (0-6;
    # at 1e-2 with one marker the classifier stayed on one class on some, dev accuracy 0.5 throughout).
    rng = np.random.default_rng(3)
    for split, n in (("train", 64), ("dev", 32)):
        texts, labels = sentences(rng, n, marker="zebra", marks=3)
        names = ["no", "yes"] if split == "train" else ["yes", "no"]  # dev scores fall as training learns
        rows = [json.dumps({"text": t, "label": names[y]}) for t, y in zip(texts, labels)]
        (tmp_path / f"{split}.jsonl").write_text("\n".join(rows))
    task = make_task(config("text_classification", epochs=4.0, head="original"), tokenizer,
                     files={s: str(tmp_path / f"{s}.jsonl") for s in ("train", "dev")})
    lines = []
    dev = task.load("dev")
    finetuned = finetune(task, tiny_pretrained_dir, task.load("train"), dev_examples=dev, eval_every=3,
                         keep_best=True, log_every=4, log_dir=str(tmp_path / "logs"), report=lines.append)
    steps = [entry["step"] for entry in finetuned.dev_history]
    assert steps == [3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 32]  # every 3 steps and at the last
    accuracies = [entry["accuracy"] for entry in finetuned.dev_history]
    assert accuracies[-1] <= 0.25, f"the classifier did not learn the marker: dev accuracies {accuracies}"
    best = max(finetuned.dev_history, key=lambda entry: entry["accuracy"])
    assert best["step"] < 32 and finetuned.dev_history[-1]["accuracy"] < best["accuracy"]
    assert task.score(dev, task.predict(finetuned.model, dev))["accuracy"] == best["accuracy"]
    assert any(f"kept the best dev model: step {best['step']}" in line for line in lines[-2:])  # (a warning may follow)
    assert sum(line.startswith("dev at step ") for line in lines) == len(steps)
    assert [line for line in lines if line.startswith("step ")][-1].startswith("step 32/32 (100%) · loss ")
    assert any(name.startswith("events.out") for name in (tmp_path / "logs").iterdir() for name in [name.name])


def test_a_run_says_the_majority_class_and_when_it_learned_one_class_only(tmp_path, tokenizer, tiny_pretrained_dir):
    rng = np.random.default_rng(1)
    for split, n in (("train", 48), ("dev", 20)):
        texts, labels = sentences(rng, n)
        labels = [1, 1] + [0] * (n - 2) if split == "train" else labels  # train: nearly one class; dev: half and half
        rows = [json.dumps({"text": t, "label": ["common", "rare"][y]}) for t, y in zip(texts, labels)]
        (tmp_path / f"{split}.jsonl").write_text("\n".join(rows))
    task = make_task(config("text_classification", learning_rate=None, epochs=2.0), tokenizer,
                     files={s: str(tmp_path / f"{s}.jsonl") for s in ("train", "dev")})
    lines = []
    finetuned = finetune(task, tiny_pretrained_dir, task.load("train"), dev_examples=task.load("dev"),
                         report=lines.append)
    # The default learning rate follows the model's width (32: twice Small's 3e-4 x 256 / 32 line's cap).
    assert task.config.learning_rate == default_learning_rate(32) == 0.0024
    assert lines[0] == ("defaults (set a flag to change one): --learning_rate=0.0024 (the paper's rate for the "
                        "model's width, 32: 3e-4 at 256, 1e-4 at 768, 5e-5 at 1024)")  # (the rest is given)
    assert lines[1].endswith("12 steps in all, learning rate 0.0024") and not any("note:" in line for line in lines)
    assert finetuned.dev_baseline == 0.5
    assert all(line.endswith("(majority class 0.5000)") or line.endswith("(majority class 0.5000) (best)")
               for line in lines if line.startswith("dev at step "))
    assert lines[-1].startswith("warning: ") and "dev predictions" in lines[-1] and "'common'" in lines[-1]
    assert "--learning_rate (this run: 0.0024) or more --epochs" in lines[-1]


def test_a_head_that_cannot_be_passed_on_is_named_when_the_run_starts(tmp_path, tokenizer, tiny_pretrained_dir):
    rng = np.random.default_rng(2)
    texts, labels = sentences(rng, 16)
    (tmp_path / "train.jsonl").write_text("\n".join(json.dumps({"text": t, "label": str(y)})
                                                    for t, y in zip(texts, labels)))
    task = make_task(config("text_classification", head="original", epochs=1.0), tokenizer,
                     files={"train": str(tmp_path / "train.jsonl")})
    lines = []
    finetuned = finetune(task, tiny_pretrained_dir, task.load("train"), report=lines.append)
    assert lines[0].startswith("note: head='original' has no transformers class") and "--head=huggingface" in lines[0]
    assert finetuned.dev_baseline is None and finetuned.dev_history == []


def test_regression_on_glue_tsv_files(tmp_path, tokenizer, tiny_pretrained_dir):
    rng = np.random.default_rng(1)
    folder = tmp_path / "STS-B"
    folder.mkdir()
    header = "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore"
    for split, n in (("train", 64), ("dev", 16)):
        rows = [header]
        for i in range(n):
            count = int(rng.integers(0, 4))
            first = " ".join(["zebra"] * count + list(rng.choice(WORDS, size=3)))
            rows.append(f"{i}\tmain\tf\t2012\t{i}\tnone\tnone\t{first}\t{' '.join(rng.choice(WORDS, 3))}\t{count}.0")
        (folder / f"{split}.tsv").write_text("\n".join(rows) + "\n")
    (folder / "test.tsv").write_text("index\tsentence1\tsentence2\n0\tzebra zebra cat\tdog\n")
    task = make_task(config("stsb", epochs=10.0), tokenizer, data_dir=str(tmp_path))
    train = task.load("train")
    assert task.train_dataset(train)[1] == 2 * 64 // 8  # sentence-order doubling
    model = finetune(task, tiny_pretrained_dir, train).model
    dev = task.load("dev")
    assert task.score(dev, task.predict(model, dev))["pearson"] > 0.8
    test = task.load("test")
    path = task.write_predictions(test, task.predict(model, test), str(tmp_path), "test")
    assert path.endswith("STS-B.tsv") and open(path).read().startswith("index\tprediction\n0\t")


def test_tagging_learns_entities(tmp_path, tokenizer, tiny_pretrained_dir):
    rng = np.random.default_rng(2)
    for split, n in (("train", 96), ("dev", 24)):
        lines = []
        for _ in range(n):
            words = list(rng.choice(WORDS, size=7))
            words[int(rng.integers(0, 7))] = str(rng.choice(["paris", "london"]))
            for word in words:
                tag = "I-LOC" if word in ("paris", "london") else "O"  # IOB1, as CoNLL-2003
                lines.append(f"{word} NN I-NP {tag}")
            lines.append("")
        (tmp_path / f"{split}.txt").write_text("-DOCSTART- -X- -X- O\n\n" + "\n".join(lines))
    task = make_task(config("conll2003", epochs=8.0, max_seq_length=48), tokenizer, data_dir=str(tmp_path))
    model = finetune(task, tiny_pretrained_dir, task.load("train")).model
    dev = task.load("dev")
    predictions = task.predict(model, dev)
    assert [len(p) for p in predictions] == [len(s.words) for s in dev]
    assert task.score(dev, predictions)["f1"] > 0.9
    # Trained in BIOES (S-LOC), written back in the file's IOB1 (I-LOC), and the results say so.
    assert "S-LOC" in {tag for p in predictions for tag in p}
    lines = open(task.write_predictions(dev, predictions, str(tmp_path), "dev")).read().splitlines()
    written = {line.split("\t")[1] for line in lines if line}
    assert "I-LOC" in written and not written & {"S-LOC", "E-LOC"}
    assert task.data_stats("dev", dev)["dev_tag_scheme"] == "iob1"


def _squad_file(path, rng, n, version_2=True):
    paragraphs = []
    for i in range(n):
        words = list(rng.choice(WORDS, size=10))
        answerable = not version_2 or i % 3
        if answerable:
            position = int(rng.integers(0, 10))
            words[position] = "Zebra"
        context = " ".join(words) + "."
        qa = {"id": f"q{i}", "question": "which animal is striped?", "is_impossible": not answerable,
              "answers": [{"text": "Zebra", "answer_start": context.index("Zebra")}] if answerable else []}
        paragraphs.append({"context": context, "qas": [qa]})
    path.write_text(json.dumps({"version": "v2.0", "data": [{"title": "t", "paragraphs": paragraphs}]}))


@pytest.mark.parametrize("task_name, head", [("squad", "original"), ("squadv1", "huggingface")])
def test_question_answering_finds_the_answer(tmp_path, tokenizer, tiny_pretrained_dir, task_name, head):
    rng = np.random.default_rng(3)
    version_2 = task_name == "squad"
    _squad_file(tmp_path / "train.json", rng, 96, version_2)
    _squad_file(tmp_path / "dev.json", rng, 24, version_2)
    task = make_task(config(task_name, head=head, epochs=10.0, max_seq_length=32, doc_stride=8), tokenizer,
                     files={"train": str(tmp_path / "train.json"), "dev": str(tmp_path / "dev.json")})
    model = finetune(task, tiny_pretrained_dir, task.load("train")).model
    dev = task.load("dev")
    predictions = task.predict(model, dev)
    assert set(predictions) == {e.qas_id for e in dev}
    assert task.score(dev, predictions)["exact_match"] >= 75
    path = task.write_predictions(dev, predictions, str(tmp_path), "dev")
    assert json.load(open(path)) == predictions


def test_multiple_choice_picks_the_marked_ending(tmp_path, tokenizer, tiny_pretrained_dir):
    rng = np.random.default_rng(4)
    for split, n in (("train", 64), ("val", 16)):
        rows = ["sent1,sent2,ending0,ending1,ending2,ending3,label"]
        for i in range(n):
            endings = [" ".join(rng.choice(WORDS, 3)) for _ in range(4)]
            endings[i % 4] += " zebra"
            rows.append(f"{' '.join(rng.choice(WORDS, 4))},the,{','.join(endings)},{i % 4}")
        (tmp_path / f"{split}.csv").write_text("\n".join(rows) + "\n")
    task = make_task(config("swag", epochs=10.0), tokenizer, data_dir=str(tmp_path))
    model = finetune(task, tiny_pretrained_dir, task.load("train")).model
    dev = task.load("dev")
    assert task.score(dev, task.predict(model, dev))["accuracy"] >= 0.75


def test_unknown_task_and_missing_split(tokenizer):
    with pytest.raises(ValueError, match="unknown task 'glu'; the tasks are: chunk, cola, "):
        make_task(config("glu"), tokenizer)
    task = make_task(config("swag"), tokenizer)
    with pytest.raises(ValueError, match="no file for split 'train'"):
        task.load("train")


def test_an_option_the_task_does_not_take_is_an_error(tokenizer):
    with pytest.raises(ValueError, match="task 'sst2' takes no option tag_column; its options: tfds, tfds_data_dir"):
        make_task(config("sst2"), tokenizer, tag_column=2)
    with pytest.raises(ValueError, match="task 'conll2003' takes no option tag_colum; its options: tag_column, "):
        make_task(config("conll2003"), tokenizer, tag_colum=2)  # misspelt: before, silently the default
    task = make_task(config("conll2003"), tokenizer, tag_column=2, scheme="iob2")
    assert (task.tag_column, task.scheme) == (2, "iob2")


def test_models_fill_in_only_constructor_arguments_from_a_checkpoint():
    exported = {getattr(electra_tf, name) for name in electra_tf.__all__}  # the lazy package's every name
    classes = [value for value in exported if isinstance(value, type)
               and issubclass(value, electra_tf.models.base.ElectraNetwork)]
    # the core discriminator and generator; transformers' encoder, 2 pre-training and 4 task classes; TFElectraForQA
    assert len(classes) == 10
    for model_class in classes:
        assert set(model_class.checkpoint_arguments) <= set(inspect.signature(model_class.__init__).parameters)


def test_mnli_from_tfds_mock_data_predicts_every_split_with_glue_file_names(tmp_path, tokenizer,
                                                                          tiny_pretrained_dir):
    import tensorflow_datasets as tfds

    task = make_task(config("mnli", epochs=1.0, batch_size=4), tokenizer, tfds=True)
    assert task.splits == ("train", "dev", "dev_mismatched", "test", "test_mismatched", "ax")
    with tfds.testing.mock_data(num_examples=8, policy=tfds.testing.MockPolicy.USE_CODE):
        model = finetune(task, tiny_pretrained_dir, task.load("train")).model
        names = {}
        for split in task.splits[1:]:
            examples = task.load(split)
            predictions = task.predict(model, examples)
            if task.scored(split):
                assert 0.0 <= task.score(examples, predictions)["accuracy"] <= 1.0
            names[split] = task.write_predictions(examples, predictions, str(tmp_path), split).rsplit("/", 1)[1]
    assert names == {"dev": "mnli_dev.tsv", "dev_mismatched": "mnli_dev_mismatched.tsv", "test": "MNLI-m.tsv",
                     "test_mismatched": "MNLI-mm.tsv", "ax": "AX.tsv"}
    rows = open(tmp_path / "AX.tsv").read().splitlines()
    assert len(rows) == 9 and rows[1].split("\t")[1] in ("entailment", "neutral", "contradiction")
