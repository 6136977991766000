"""Task data from Parquet files and 🤗 datasets (`electra_tf/data/tasks/tables.py`), as users pass it: a
`save_to_disk` folder, a folder of data files, a hub id from the cache (offline), `id[:config][@split]`; read
by every task's reader with the same one-line refusals as CSV."""

import json
import re
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from electra_tf import ElectraTokenizer, FinetuningConfig
from electra_tf.data.tasks.classification import read_text_file
from electra_tf.data.tasks.multiple_choice import read_swag
from electra_tf.data.tasks.squad import read_squad
from electra_tf.data.tasks.tables import read_table
from electra_tf.data.tasks.tagging import read_sentences
from electra_tf.finetuning import make_task

datasets = pytest.importorskip("datasets")

NER_NAMES = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]


def ner_dataset(sentences):
    """A conll2003-shaped dataset: `tokens`, and `ner_tags` as class ids of a ClassLabel sequence."""
    features = datasets.Features({"id": datasets.Value("string"),
                                  "tokens": datasets.Sequence(datasets.Value("string")),
                                  "ner_tags": datasets.Sequence(datasets.ClassLabel(names=NER_NAMES))})
    return datasets.Dataset.from_dict({"id": [str(i) for i in range(len(sentences))],
                                       "tokens": [words for words, _ in sentences],
                                       "ner_tags": [[NER_NAMES.index(tag) for tag in tags] for _, tags in sentences]},
                                      features=features)


TRAIN = [(["-DOCSTART-"], ["O"]), (["Ann", "met", "Bob"], ["B-PER", "O", "B-PER"]),
         (["Ann", "Lee", "in", "Paris"], ["B-PER", "I-PER", "O", "B-LOC"])]
VALIDATION = [(["Bob", "in", "Paris"], ["B-PER", "O", "B-LOC"])]


@pytest.fixture
def ner_folder(tmp_path):
    """`DatasetDict.save_to_disk`, as conll2003 is after `load_dataset("conll2003").save_to_disk(folder)`."""
    folder = tmp_path / "conll"
    datasets.DatasetDict({"train": ner_dataset(TRAIN), "validation": ner_dataset(VALIDATION)}).save_to_disk(folder)
    return str(folder)


@pytest.fixture
def datasets_cache(tmp_path, monkeypatch):
    """An empty 🤗 datasets cache of the test's own, offline as a user's HF_HUB_OFFLINE=1 makes it (datasets reads
    the variable when imported: here huggingface_hub was imported before the session set it)."""
    cache = tmp_path / "hf_datasets"
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", cache)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    return cache


def tokenizer():
    return ElectraTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "ann", "met", "bob"])


def test_a_saved_dataset_dict_gives_each_task_split_with_class_names(ner_folder):
    task = make_task(FinetuningConfig(task="conll2003"), tokenizer(), files={"train": ner_folder, "dev": ner_folder})
    train, dev = task.load("train"), task.load("dev")  # dev: the "validation" split
    assert [s.words for s in train] == [("Ann", "met", "Bob"), ("Ann", "Lee", "in", "Paris")]  # -DOCSTART- skipped
    assert train[1].tags == ("B-PER", "I-PER", "O", "B-LOC") and dev[0].tags == ("B-PER", "O", "B-LOC")
    assert task.label_names[:3] == ["O", "B-LOC", "B-PER"]
    # A split named explicitly; `dev` also finds `valid`, and a missing split lists those there are.
    assert len(read_sentences(f"{ner_folder}@train")) == 2
    with pytest.raises(ValueError, match=r"^.*conll@test: no split 'test'; it has \['train', 'validation'\]: name "
                                         r"one as <source>@<split>$"):
        read_sentences(f"{ner_folder}@test")


def test_tag_columns_by_name_and_the_refusals_of_a_number_or_of_class_ids_without_names(ner_folder, tmp_path):
    assert read_sentences(f"{ner_folder}@train", tag_column="ner_tags")[0].tags == ("B-PER", "O", "B-PER")
    with pytest.raises(ValueError, match=r"conll@train: missing column\(s\) \['pos_tags'\] \(--tag_column\); the "
                                         r"file has \['id', 'tokens', 'ner_tags'\]"):
        read_sentences(f"{ner_folder}@train", tag_column="pos_tags")
    with pytest.raises(ValueError, match=r"--tag_column=2 numbers a CoNLL file's column; a dataset's is named "
                                         r"\(--tag_column=ner_tags\)"):
        read_sentences(f"{ner_folder}@train", tag_column=2)
    conll = tmp_path / "train.txt"
    conll.write_text("Ann B-PER\n")
    with pytest.raises(ValueError, match="--tag_column=ner_tags names a dataset's column; a CoNLL file's columns "
                                         "are numbered"):
        read_sentences(str(conll), tag_column="ner_tags")
    ids = tmp_path / "ids.parquet"  # written by pyarrow: class ids, and nothing naming them
    pq.write_table(pa.table({"tokens": [["Ann", "met"]], "ner_tags": [[1, 0]]}), ids)
    with pytest.raises(ValueError, match=r"ids.parquet:row 0: 'ner_tags' is \[1, 0\], not one tag name per word "
                                         r"\(2 words; class ids need a ClassLabel feature naming them\)"):
        read_sentences(str(ids))


def test_parquet_written_by_datasets_keeps_its_class_names_and_their_order(tmp_path):
    path = str(tmp_path / "reviews.parquet")
    features = datasets.Features({"review": datasets.Value("string"),
                                  "stars": datasets.ClassLabel(names=["pos", "neg", "mixed"])})
    datasets.Dataset.from_dict({"review": ["great", "awful", "fine", "good"], "stars": [0, 1, 0, 0]},
                               features=features).to_parquet(path)
    examples, names = read_text_file(path, ["review"], "stars")
    assert names == ("pos", "neg", "mixed") and examples.labels.tolist() == [0, 1, 0, 0]  # the dataset's ids
    assert examples.texts == (("great", "awful", "fine", "good"),)


def test_a_test_split_whose_labels_are_all_minus_one_is_unlabelled(tmp_path):
    """As GLUE's test splits on the hub: a ClassLabel column of -1 only."""
    features = datasets.Features({"sentence": datasets.Value("string"),
                                  "label": datasets.ClassLabel(names=["negative", "positive"])})
    folder = tmp_path / "sst2"
    datasets.DatasetDict({
        "train": datasets.Dataset.from_dict({"sentence": ["good", "bad"], "label": [1, 0]}, features=features),
        "test": datasets.Dataset.from_dict({"sentence": ["fine", "meh"], "label": [-1, -1]}, features=features),
    }).save_to_disk(folder)
    task = make_task(FinetuningConfig(task="text_classification"), tokenizer(),
                     files={"train": str(folder), "test": str(folder)}, text_columns=("sentence",))
    assert task.label_names == ("negative", "positive") and task.load("train").labels.tolist() == [1, 0]
    test = task.load("test")
    assert not task.scored("test", test) and test.labels.tolist() == [-1, -1]
    partly = tmp_path / "partly.parquet"  # -1 on one row only: a row without its label, refused as in a CSV
    datasets.Dataset.from_dict({"sentence": ["good", "bad"], "label": [1, -1]}, features=features).to_parquet(partly)
    with pytest.raises(ValueError, match=r"partly.parquet:row 1: no 'label' \(missing or null\)"):
        read_text_file(str(partly), ["sentence"], "label")


def test_squad_and_swag_in_the_hubs_layouts(tmp_path):
    squad_v2 = datasets.Dataset.from_dict({
        "id": ["q1", "q2"], "title": ["t", "t"], "context": ["Ann met Bob.", "Ann met Bob."],
        "question": ["Who met Bob?", "Who met Cy?"],
        "answers": [{"text": ["Ann"], "answer_start": [0]}, {"text": [], "answer_start": []}]})
    squad_v2.save_to_disk(tmp_path / "squad")  # a Dataset: no splits
    examples = read_squad(str(tmp_path / "squad"))
    assert [(e.qas_id, e.answers, e.is_impossible) for e in examples] == [("q1", (("Ann", 0),), False),
                                                                        ("q2", (), True)]
    moved = squad_v2.map(lambda row: {"answers": {"text": row["answers"]["text"],
                                                  "answer_start": [3] * len(row["answers"]["text"])}})
    moved.to_parquet(tmp_path / "moved.parquet")
    with pytest.raises(ValueError, match=r"moved.parquet: question 'q1': the answer 'Ann' is not at character 3"):
        read_squad(str(tmp_path / "moved.parquet"))
    assert read_squad(str(tmp_path / "moved.parquet"), on_bad_answer="skip").skipped_ids == ("q1",)
    flat = tmp_path / "flat.parquet"  # answers as a text: not the hub's layout
    pq.write_table(pa.table({"id": ["q1"], "question": ["Who?"], "context": ["Ann"], "answers": ["Ann"]}), flat)
    with pytest.raises(ValueError, match=r"flat.parquet:row 0: 'answers' is 'Ann', not \{'text': \[...\], "
                                         r"'answer_start': \[...\]\}"):
        read_squad(str(flat))
    swag = {"sent1": ["She opens the door."], "sent2": ["She"], "label": [1],
            **{f"ending{i}": [f"ending {i}."] for i in range(4)}}
    features = datasets.Features({**{name: datasets.Value("string") for name in swag if name != "label"},
                                  "label": datasets.ClassLabel(names=["0", "1", "2", "3"])})
    datasets.Dataset.from_dict(swag, features=features).to_parquet(tmp_path / "swag.parquet")
    choices = read_swag(str(tmp_path / "swag.parquet"))
    assert choices.labels.tolist() == [1] and choices.choices[0][1] == "She ending 1."


def test_a_folder_of_data_files_and_then_its_id_from_the_cache_offline(tmp_path, datasets_cache, monkeypatch):
    """`load_dataset(<folder>)` finds the splits by file name; after that, `load_dataset(<name>)` offline reads
    the prepared copy from the cache, as a hub id loaded once with network is read."""
    folder = tmp_path / "reviews"
    folder.mkdir()
    for split, rows in (("train", [("great", "pos"), ("awful", "neg")]), ("validation", [("fine", "pos")])):
        (folder / f"{split}.csv").write_text("text,label\n" + "".join(f"{t},{label}\n" for t, label in rows))
    examples, names = read_text_file(f"{folder}@validation", ["text"], "label", label_names=("neg", "pos"))
    assert examples.texts == (("fine",),) and examples.labels.tolist() == [1]
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")  # no folder "reviews" here: the name is a hub id
    examples, names = read_text_file("reviews@train", ["text"], "label")
    assert names == ("neg", "pos") and examples.texts == (("great", "awful"),)


def test_refusals_in_one_line_naming_the_source(tmp_path, datasets_cache, monkeypatch):
    path = str(tmp_path / "train.parquet")
    pq.write_table(pa.table({"review": ["good", "bad"], "stars": [5, 1], "count": [1, 2]}), path)
    with pytest.raises(ValueError, match=r"train.parquet: missing column\(s\) \['text'\] \(--text_columns\); the "
                                         r"file has \['review', 'stars', 'count'\]"):
        read_text_file(path, ["text"], "stars")
    with pytest.raises(ValueError, match=r"train.parquet:row 0: 'count' is a value of type int, not a text; write "
                                         "it as a string"):
        read_text_file(path, ["count"], "stars")
    pq.write_table(pa.table({"text": pa.array([], pa.string()), "label": pa.array([], pa.string())}), path)
    with pytest.raises(ValueError, match="train.parquet: no examples"):
        read_text_file(path, ["text"], "label")
    (tmp_path / "broken.parquet").write_text("text,label\n")
    with pytest.raises(ValueError, match=r"broken.parquet: not a Parquet file \("):
        read_table(str(tmp_path / "broken.parquet"))
    with pytest.raises(FileNotFoundError, match="missing.parquet: no such file"):
        read_table(str(tmp_path / "missing.parquet"))
    with pytest.raises(ValueError) as refusal:  # offline, never loaded: one line, no retries
        read_table("someone/no-such-dataset:default@train")
    message = str(refusal.value)
    assert "\n" not in message and message.startswith(
        "someone/no-such-dataset:default@train: no such file or folder, and no hub dataset 'someone/no-such-dataset' "
        "in the Hugging Face cache (offline: HF_HUB_OFFLINE is set; load it once with network)")
    monkeypatch.setitem(sys.modules, "datasets", None)  # as without the extra
    with pytest.raises(ValueError, match=r"^glue:sst2@train: no such file or folder, and reading it as a 🤗 hub "
                                         r"dataset id needs the datasets package \(pip install datasets, or pip "
                                         r"install \"\.\[datasets\]\" in an electra_tf checkout\)$"):
        read_table("glue:sst2@train")
    (tmp_path / "conll").mkdir()
    with pytest.raises(ValueError, match=r"conll@train: reading a 🤗 dataset folder needs the datasets package"):
        read_table(f"{tmp_path}/conll@train")


def test_electra_finetune_on_the_documented_dataset(tiny_pretrained_dir, tmp_path, run_tool, monkeypatch):
    """docs/finetuning.md's example as a user runs it: its block writes a `DatasetDict.save_to_disk` folder, and
    the tool trains on its train split, scores its validation split with the tags its ClassLabel names, and
    writes predictions as for a CoNLL file."""
    page = (Path(__file__).parents[2] / "docs" / "finetuning.md").read_text(encoding="utf-8")
    (block,) = [code for code in re.findall(r"```python\n(.*?)```", page, re.S) if 'save_to_disk("my_ner")' in code]
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "docs/finetuning.md", "exec"), {})
    code, out, err = run_tool("run_finetuning", "--task=conll2003", "--train_file=my_ner", "--dev_file=my_ner",
                              f"--init_checkpoint={tiny_pretrained_dir}", "--output_dir=runs/my_ner", "--epochs=1",
                              "--batch_size=2", "--max_seq_length=16", "--pad_to_max_length")
    assert code in (0, None), err[-3000:]
    results = json.loads((tmp_path / "runs/my_ner/trial_0/results.json").read_text())
    assert np.isfinite(results["scores"]["dev"]["f1"]) and results["data"]["dev_sentences"] == 2
    assert results["label_names"][0] == "O" and "S-PER" in results["label_names"]
    predicted = (tmp_path / "runs/my_ner/trial_0/conll2003_dev.txt").read_text().splitlines()
    assert [line.split("\t")[0] for line in predicted[:4]] == ["Ann", "met", "Bob", ""]
    assert "my_ner" in (tmp_path / "runs/my_ner/trial_0/model/README.md").read_text()  # the card names the data


def test_a_source_that_names_what_its_data_has_not_or_is_misspelt_is_one_line(tmp_path, monkeypatch):
    """A configuration or split named for data that has none (before: silently read whole), a split spec that
    does not parse (before: "unknown format ''; use csv, tsv or jsonl"), and a split saved with no rows (before:
    datasets' IndexError)."""
    monkeypatch.chdir(tmp_path)
    features = datasets.Features({"text": datasets.Value("string"), "label": datasets.ClassLabel(names=["n", "p"])})
    split = datasets.Dataset.from_dict({"text": ["good", "bad"], "label": [1, 0]}, features=features)
    datasets.DatasetDict({"train": split, "validation": split}).save_to_disk("splits")
    split.save_to_disk("one")
    split.to_parquet("one.parquet")
    assert read_text_file("one", ["text"], "label", label_names=("n", "p"))[0].labels.tolist() == [1, 0]
    make = make_task(FinetuningConfig(task="text_classification"), tokenizer(), text_columns=("text",),
                     files={"train": "one", "dev": "one"})
    assert make.path("dev") == "one"  # a folder of one table: no split added for the dev file
    for source, message in [
            ("one.parquet@test", "one.parquet@test: a Parquet file is one table, without configurations or splits; "
                                 "give one.parquet"),
            ("one.parquet:default", "one.parquet:default: a Parquet file is one table"),
            ("one@validation", "one@validation: a Dataset.save_to_disk folder is one table, without configurations "
                               "or splits; give one"),
            ("splits:sst2@train", "splits:sst2@train: a DatasetDict.save_to_disk folder has splits, not "
                                  "configurations; give splits@train")] + [
            (spec, f"{spec}: no such file or folder, nor a dataset as <id or folder>[:<config>][@<split>] (a config "
                   "or split is a name: letters, digits, '_', '.', '-')")
            for spec in ("splits@", "splits:", "@train", "splits@@train", "splits:a:b@train", "splits@ train")]:
        with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
            read_text_file(source, ["text"], "label")
    datasets.DatasetDict({"train": split, "validation": split.select([])}).save_to_disk("empty_dev")
    with pytest.raises(ValueError, match=r"^empty_dev@train: its split 'validation' was saved with no rows, which 🤗 "
                                         r"datasets cannot read back \(no examples\); save the dataset without it$"):
        read_text_file("empty_dev@train", ["text"], "label")
    tagged = datasets.Features({"tokens": datasets.Sequence(datasets.Value("string")),
                                "ner_tags": datasets.Sequence(datasets.ClassLabel(names=NER_NAMES))})
    datasets.Dataset.from_dict({"tokens": [["Ann", "met"]], "ner_tags": [[1, -1]]},
                               features=tagged).save_to_disk("untagged")
    with pytest.raises(ValueError, match=r"^untagged:row 0: 'ner_tags' is \['B-PER', None\], not one tag name per word "
                                         r"\(2 words; a class id of -1 \(no label\) is no tag\)$"):
        read_sentences("untagged")  # (before: "class ids need a ClassLabel feature naming them": it has one)
    (tmp_path / "spark.parquet").mkdir()  # a folder of parts, as Spark writes one (before: "no such file")
    for part, (text, label) in enumerate([("good", "p"), ("bad", "n")]):
        pq.write_table(pa.table({"text": [text], "label": [label]}), tmp_path / f"spark.parquet/part-{part}.parquet")
    (tmp_path / "spark.parquet" / "_SUCCESS").write_text("")
    assert read_text_file("spark.parquet", ["text"], "label")[0].texts == (("good", "bad"),)
