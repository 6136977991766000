"""GLUE (TSV files and TFDS mock data), text-file and SWAG loaders, and their in-graph encoding."""

import numpy as np
import pytest
import tensorflow_datasets as tfds

from electra_tf.data.tasks import classification
from electra_tf.data.tasks.classification import (
    GLUE_TASKS,
    TextExamples,
    classification_dataset,
    count_truncated,
    glue_task,
    read_glue_tfds,
    read_glue_tsv,
    read_text_file,
)
from electra_tf.data.tasks.multiple_choice import choice_dataset, read_swag
from electra_tf.text.tokenizer import WordPieceTokenizer

VOCAB = "tests/fixtures/tokenizer/vocab.txt"


@pytest.fixture(scope="module")
def tokenizer():
    return WordPieceTokenizer(VOCAB)


def _write(path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_glue_tsv_files_as_the_glue_download_lays_them_out(tmp_path):
    _write(tmp_path / "CoLA" / "train.tsv", ["gj04\t1\t\tThe sailors rode the breeze clear.",
                                             'gj04\t0\t*\tThe "more" we eat.'])
    _write(tmp_path / "CoLA" / "test.tsv", ["index\tsentence", "0\tBill whistled past the house."])
    train = read_glue_tsv(str(tmp_path), "cola", "train")
    assert train.texts == (("The sailors rode the breeze clear.", 'The "more" we eat.'),)
    assert train.labels.tolist() == [1, 0]
    test = read_glue_tsv(str(tmp_path), "cola", "test")
    assert test.ids == ("0",) and test.labels.tolist() == [-1] and not test.labelled

    _write(tmp_path / "MNLI" / "dev_mismatched.tsv", [
        "index\tpromptID\tpairID\tgenre\ts1b\ts2b\ts1p\ts2p\tsentence1\tsentence2\tlabel1\tgold_label",
        "0\t1\t1\tfiction\t-\t-\t-\t-\tA man sleeps.\tA person rests.\tentailment\tentailment",
        "1\t2\t2\tfiction\t-\t-\t-\t-\tA man sleeps.\tA man runs.\tcontradiction\tcontradiction"])
    mnli = read_glue_tsv(str(tmp_path), "mnli", "dev_mismatched")
    assert mnli.num_segments == 2 and mnli.labels.tolist() == [0, 2]

    _write(tmp_path / "STS-B" / "dev.tsv", [
        "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore",
        "0\tmain\tf\t2012\t1\tnone\tnone\tA plane takes off.\tAn air plane is taking off.\t5.000"])
    sts = read_glue_tsv(str(tmp_path), "sts-b", "dev")
    assert sts.labels.dtype == np.float32 and sts.labels.tolist() == [5.0]
    assert sts.swapped().texts[0] == ("A plane takes off.", "An air plane is taking off.")


def test_glue_tsv_bad_input(tmp_path):
    _write(tmp_path / "RTE" / "train.tsv", ["index\tsentence1\tsentence2\tlabel", "0\ta\tb\tmaybe"])
    with pytest.raises(ValueError, match=r"labels \['maybe'\] are not in the declared set"):
        read_glue_tsv(str(tmp_path), "rte", "train")
    _write(tmp_path / "QNLI" / "train.tsv", ["index\tquestion\tlabel", "0\ta\tentailment"])
    with pytest.raises(ValueError, match=r"missing column\(s\) \['sentence'\]"):
        read_glue_tsv(str(tmp_path), "qnli", "train")
    with pytest.raises(FileNotFoundError, match="SST-2"):
        read_glue_tsv(str(tmp_path), "sst2", "dev")
    with pytest.raises(ValueError, match="unknown GLUE task"):
        glue_task("glue_of_the_gods")
    _write(tmp_path / "WNLI" / "train.tsv", ["index\tsentence1\tsentence2\tlabel", "0\t \tb\t1"])
    with pytest.raises(ValueError, match=r"WNLI/train\.tsv:2: 'sentence1' is empty"):
        read_text_file(str(tmp_path / "WNLI" / "train.tsv"), ["sentence1", "sentence2"], "label")


@pytest.mark.parametrize("name, split", [("cola", "dev"), ("mnli", "dev_mismatched"), ("stsb", "train"),
                                         ("ax", "test"), ("qqp", "test")])
def test_glue_from_tfds_mock_data(name, split):
    with tfds.testing.mock_data(num_examples=6, policy=tfds.testing.MockPolicy.USE_CODE):
        examples = read_glue_tfds(name, split)
    task = GLUE_TASKS[name]
    assert len(examples) == 6 and examples.num_segments == len(task.tfds_text)
    if task.label_names is None:
        assert examples.labels.dtype == np.float32
    else:
        assert set(examples.labels.tolist()) <= set(range(task.num_labels)) | {-1}


def test_every_glue_task_is_declared():
    assert sorted(GLUE_TASKS) == ["ax", "cola", "mnli", "mrpc", "qnli", "qqp", "rte", "sst2", "stsb", "wnli"]


@pytest.mark.parametrize("suffix", ["csv", "tsv", "jsonl"])
def test_text_files_in_three_formats(tmp_path, suffix):
    rows = [("id", "premise", "hypothesis", "label"), ("a", "It rains.", "It is wet.", "yes"),
            ("b", "It rains.", "It is dry.", "no")]
    path = tmp_path / f"data.{suffix}"
    if suffix == "jsonl":
        import json
        path.write_text("\n".join(json.dumps(dict(zip(rows[0], r))) for r in rows[1:]))
    else:
        separator = "," if suffix == "csv" else "\t"
        path.write_text("\n".join(separator.join(r) for r in rows))
    examples, names = read_text_file(str(path), ["premise", "hypothesis"], "label", id_column="id")
    assert names == ("no", "yes") and examples.labels.tolist() == [1, 0] and examples.ids == ("a", "b")
    with pytest.raises(ValueError, match=r"labels \['no'\] are not in the declared set \['yes', 'maybe'\]"):
        read_text_file(str(path), ["premise"], "label", label_names=["yes", "maybe"])
    with pytest.raises(ValueError, match=r"missing column\(s\) \['text'\]"):
        read_text_file(str(path), ["text"], "label")


def test_text_file_bad_input(tmp_path):
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(ValueError, match="empty file"):
        read_text_file(str(tmp_path / "empty.csv"), ["text"], "label")
    (tmp_path / "latin1.csv").write_bytes(b"text,label\ncaf\xe9,1\n")
    with pytest.raises(ValueError, match="not UTF-8"):
        read_text_file(str(tmp_path / "latin1.csv"), ["text"], "label")
    (tmp_path / "bad.jsonl").write_text('{"text": "a", "label": 1}\n{"text": \n')
    with pytest.raises(ValueError, match="bad.jsonl:2: not JSON"):
        read_text_file(str(tmp_path / "bad.jsonl"), ["text"], "label")
    (tmp_path / "scores.csv").write_text("text,score\na,1.5\nb,high\n")
    with pytest.raises(ValueError, match=r"scores\.csv:3: regression label 'high' is not a number"):
        read_text_file(str(tmp_path / "scores.csv"), ["text"], "score", regression=True)


def test_classification_dataset_encodes_in_graph_and_counts_truncation(tokenizer):
    long_text = " ".join(["word"] * 50)
    examples = TextExamples((("the cat sat", long_text), ("on the mat", "a dog")), np.array([1, 0]), ("0", "1"))
    # [CLS] a [SEP] b [SEP] leaves 13 tokens for the pair: only the 50-word one is cut (it is logged too).
    assert count_truncated(examples, tokenizer, 16) == 1 and count_truncated(examples, tokenizer, 256) == 0
    (inputs, labels), = list(classification_dataset(examples, tokenizer, sequence_length=16, batch_size=2))
    encoded = tokenizer.encode(["the cat sat"], ["on the mat"], sequence_length=16)
    np.testing.assert_array_equal(inputs["input_ids"][:1], encoded["input_ids"])
    assert inputs["input_ids"].shape == (2, 16) and inputs["token_type_ids"].numpy()[0].max() == 1
    assert labels.numpy().tolist() == [1, 0]


def test_swag_loader_and_dataset(tmp_path, tokenizer):
    path = _write(tmp_path / "val.csv", [
        "video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,ending2,ending3,label",
        "v,1,x,The man opens the door.,He,gold,walks in.,eats the door.,flies.,sings.,0",
        "v,2,x,She sits down.,She,gold,stands up.,reads a book.,is a door.,melts.,1"])
    examples = read_swag(str(path))
    assert examples.num_choices == 4 and examples.choices[0][0] == "He walks in."
    (inputs, labels), = list(choice_dataset(examples, tokenizer, sequence_length=12, batch_size=2))
    assert inputs["input_ids"].shape == (2, 4, 12) and labels.numpy().tolist() == [0, 1]
    pair = tokenizer.encode(["She sits down."], ["She reads a book."], sequence_length=12)["input_ids"]
    np.testing.assert_array_equal(inputs["input_ids"][1, 1], pair[0])
    bad = _write(tmp_path / "bad.csv", ["sent1,sent2,ending0,ending1,ending2,ending3,label", "a,b,c,d,e,f,7"])
    with pytest.raises(ValueError, match="label outside 0..3"):
        read_swag(str(bad))
    with pytest.raises(ValueError, match=r"missing column\(s\) \['ending3'\]"):
        read_swag(str(_write(tmp_path / "short.csv", ["sent1,sent2,ending0,ending1,ending2", "a,b,c,d,e"])))


_LONG = "word " * 40_000  # a 200 kB field: past csv's default limit of 128 KiB


_UNREADABLE = [
    ("extra.csv", "text,label\nHello, world,function\n", {},
     r"extra\.csv:2: 3 field\(s\), but the header has 2 \(\['text', 'label'\]\): does a field hold a comma "
     r"\(quote it: \"Hello, world\"\), or is one missing\?"),
    ("short.csv", "text,label\ngood,1\nbad\n", {}, r"short\.csv:3: 1 field\(s\), but the header has 2"),
    ("tabs.tsv", "text\tlabel\na\tb\tc\n", {}, r"tabs\.tsv:2: 3 field\(s\), .*does a field hold a tab"),
    ("quote.csv", 'text,label\n"open quote,1\nnext,0\n', {},
     r"quote\.csv:2: not readable as CSV \(unexpected end of data\): is a quote left open\?"),
    ("twice.csv", "text,label,text\na,1,b\n", {},
     r"twice\.csv:1: the header names column\(s\) \['text'\] more than once"),
    ("null.jsonl", '{"text": "a", "label": "x"}\n{"text": "b", "label": null}\n', {},
     r"null\.jsonl:2: no 'label' \(missing or null\)"),
    ("empty_label.csv", "text,label\na,x\nb,\n", {},
     r"empty_label\.csv:3: 'label' is '', a missing value, not a class"),
    ("nan_label.csv", "text,label\na,x\nb,NaN\n", {}, r"nan_label\.csv:3: 'label' is 'NaN', a missing value"),
    ("nan_label.jsonl", '{"text": "a", "label": 1}\n{"text": "b", "label": NaN}\n', {},
     r"nan_label\.jsonl:2: 'label' is nan, not a class"),
    ("nan_score.csv", "text,score\na,1.5\nb,nan\n", {"label_column": "score", "regression": True},
     r"nan_score\.csv:3: regression label 'nan' is not a finite number; fix or remove the row"),
    ("inf_score.jsonl", '{"text": "a", "score": Infinity}\n', {"label_column": "score", "regression": True},
     r"inf_score\.jsonl:1: regression label inf is not a finite number"),
    ("list.jsonl", '{"text": ["a", "b"], "label": 1}\n', {},
     r"list\.jsonl:1: 'text' is a JSON list, not a text; write it as a string"),
    ("number.jsonl", '{"text": "fine", "label": 1}\n{"text": 42, "label": 0}\n', {},
     r"number\.jsonl:2: 'text' is a JSON int, not a text"),
    ("invisible.csv", "text,label\na,1\n\u200b\u200d \ufeff,0\n", {},
     r"invisible\.csv:3: 'text' is empty \(or holds only invisible characters\)"),
    ("columns.csv", "review,stars\na,1\n", {},
     r"columns\.csv: missing column\(s\) \['text'\] \(--text_columns\); the file has \['review', 'stars'\]"),
    ("no_label.csv", "text,stars\na,1\n", {},
     r"no_label\.csv: missing column\(s\) \['label'\] \(--label_column\); the file has \['text', 'stars'\]"),
    ("names.csv", "text,label\na,x\n", {"label_names": ["x", "y", "x"]},
     r"label_names \['x', 'y', 'x'\] name \['x'\] more than once"),
]


@pytest.mark.parametrize("name, content, options, message", _UNREADABLE, ids=[case[0] for case in _UNREADABLE])
def test_a_task_file_that_cannot_be_read_right_is_refused_naming_its_line(tmp_path, name, content, options,
                                                                          message):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    options = {"label_column": "label", **options}
    with pytest.raises(ValueError, match=message):
        read_text_file(str(path), ["text"], **options)


@pytest.mark.parametrize("content", [
    '{"text": "a", "label": 1}\n{"text": "b", "label": "1"}\n{"text": "c", "label": 1.0}\n'
    '{"text": "d", "label": 0}\n',
    '{"text": "a", "label": "1"}\n{"text": "b", "label": "1 "}\n{"text": "c", "label": " 1"}\n'
    '{"text": "d", "label": "0"}\n',
], ids=["json-types", "spaces"])
def test_labels_written_differently_are_one_class_and_a_warning_says_so(tmp_path, content, caplog):
    path = tmp_path / "labels.jsonl"
    path.write_text(content, encoding="utf-8")
    examples, names = read_text_file(str(path), ["text"], "label")
    assert names == ("0", "1") and examples.labels.tolist() == [1, 1, 1, 0]
    assert "labels written differently are read as one class: '1' (from " in caplog.text


def test_a_csv_field_over_128_kb_is_read_and_an_absurd_one_refused(tmp_path, monkeypatch):
    path = tmp_path / "long.csv"
    path.write_text(f"text,label\nshort,0\n{_LONG},1\n", encoding="utf-8")
    examples, _ = read_text_file(str(path), ["text"], "label")
    assert len(examples.texts[0][1]) == len(_LONG) and examples.labels.tolist() == [0, 1]
    monkeypatch.setattr(classification, "CSV_FIELD_LIMIT", 1 << 17)
    with pytest.raises(ValueError, match=r"long\.csv:3: not readable as CSV \(a field longer than 0\.125 MiB"):
        read_text_file(str(path), ["text"], "label")
