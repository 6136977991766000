"""Bad inputs of every kind, as a user meets them: the rows of docs/bad_inputs.md that no other test checks,
and a check that every row of that table names a test that exists.

The tools run in-process (`run_tool` calls their absl `main`), so no test here pays for a fresh TensorFlow.
"""

import ast
import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from electra_tf import (
    ElectraConfig,
    ElectraDiscriminator,
    ElectraForSequenceClassification,
    ElectraGenerator,
    ElectraModel,
    ElectraTokenizer,
    FinetuningConfig,
    PretrainingConfig,
    load_run_config,
)
from electra_tf.checkpoints.ours import RUN_CONFIG, run_config_file
from electra_tf.config import generator_config
from electra_tf.data.packing import Example
from electra_tf.data.tfrecord_dataset import pretraining_dataset
from electra_tf.data.pretraining_data import MANIFEST, build_pretraining_shards, shard_name
from electra_tf.data.tasks.classification import read_text_file
from electra_tf.data.tfrecord import write_shard
from electra_tf.finetuning import finetune, make_task
from electra_tf.text.vocabulary import load_vocabulary

ROOT = Path(__file__).parent.parent
CATALOGUE = ROOT / "docs" / "bad_inputs.md"
HF_FIXTURES = ROOT / "tests" / "fixtures" / "hf"


@pytest.fixture
def vocab_file(tmp_path, fixture_vocab):
    return shutil.copyfile(fixture_vocab, tmp_path / "vocab.txt")


def _write(path, content):
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
    return str(path)


# === The catalogue itself ===

def catalogue_rows():
    """`(area, bad input, what the user sees, test)` of every row of the table in docs/bad_inputs.md."""
    rows = []
    for line in CATALOGUE.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if len(cells) == 4 and not set(cells[0]) <= set("-: ") and cells[0] != "area":
            rows.append(tuple(cells))
    return rows


def test_every_row_of_the_catalogue_names_a_test_that_exists():
    rows = catalogue_rows()
    assert len(rows) >= 30
    areas = {area for area, *_ in rows}
    assert {"corpus", "vocabulary", "config", "checkpoint", "TFRecords", "task file", "run", "serving"} <= areas
    defined = {}
    for area, bad_input, seen, test in rows:
        assert bad_input and seen, (area, bad_input)
        references = re.findall(r"`(tests/[\w/]+\.py)::(\w+)`", test)
        assert references, f"row {bad_input!r} names no test (`tests/file.py::test_name`)"
        for path, name in references:
            if path not in defined:
                tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
                defined[path] = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
            assert name in defined[path] and name.startswith("test_"), f"{path}::{name} (row {bad_input!r})"


# === Corpora ===

def test_build_vocab_on_a_corpus_in_another_encoding_drops_the_bad_bytes(tmp_path, run_tool):
    corpus = _write(tmp_path / "latin1.txt", "Un café au lait, naïve.\n\nDéjà vu.\n".encode("latin-1"))
    result = run_tool("build_vocab", f"--input_files={corpus}", f"--output={tmp_path}/vocab.txt", "--vocab_size=60")
    assert result[0] == 0, result[2][-2000:]
    vocabulary = load_vocabulary(str(tmp_path / "vocab.txt"))
    assert {"c", "##f", "v", "##u"} <= set(vocabulary) and not {"\ufffd", "é", "ï"} & set("".join(vocabulary))


@pytest.mark.parametrize("content", [b"\n \n\t\n", bytes([0, 1, 2, 0x7F, 0xFF, 0xFE]) * 500], ids=["empty", "binary"])
def test_build_vocab_on_a_corpus_without_words(tmp_path, content, refused, run_tool):
    corpus = _write(tmp_path / "corpus.txt", content)
    result = run_tool("build_vocab", f"--input_files={corpus}", f"--output={tmp_path}/vocab.txt")
    refused(result, "the corpus holds no words: is it empty?")
    assert not (tmp_path / "vocab.txt").exists()


def test_a_binary_file_is_packed_as_text_with_one_warning(tmp_path, vocab_file, capsys):
    rng = np.random.default_rng(0)
    corpus = _write(tmp_path / "image.png", b"\x89PNG\r\n\x1a\n" + rng.integers(0, 256, 20_000, np.uint8).tobytes())
    counts = build_pretraining_shards([corpus], str(vocab_file), str(tmp_path / "data"), max_seq_length=32)
    out = capsys.readouterr().out
    assert out.count("were not valid UTF-8; bad bytes were replaced by U+FFFD") == 1 and "image.png, line" in out
    assert sum(c["examples"] for c in counts.values()) >= 1  # garbage in, garbage packed: nothing crashes


def test_a_huge_line_is_packed_whole_or_cut_with_long_lines_truncate(tmp_path, vocab_file):
    corpus = _write(tmp_path / "huge.txt", "the " * 20_000 + "\n")  # one 80 kB line without a sentence end
    (shard,) = build_pretraining_shards([corpus], str(vocab_file), str(tmp_path / "split"), max_seq_length=32).values()
    assert shard["documents"] == 1 and shard["tokens"] == shard["tokens_written"] == 20_000
    # Full examples of 29 tokens (32 - [CLS] [SEP] [SEP]), a few shorter ones (the 5 % of short targets).
    assert 20_000 / 29 < shard["examples"] < 1.05 * 20_000 / 29 and shard["tokens_dropped"] == {}
    (shard,) = build_pretraining_shards([corpus], str(vocab_file), str(tmp_path / "truncate"), max_seq_length=32,
                                        long_lines="truncate").values()
    assert shard["examples"] == 1 and shard["tokens_written"] == 30
    assert shard["tokens_dropped"] == {"line_longer_than_an_example": 20_000 - 30}
    batch = next(iter(pretraining_dataset(str(tmp_path / "truncate" / "*tfrecord*"), 1, 32, training=False)))
    assert int(batch["attention_mask"].numpy().sum()) == 32


def test_a_shard_folder_with_shards_of_another_build_and_no_manifest_is_refused(tmp_path, vocab_file):
    corpus = _write(tmp_path / "corpus.txt", "One sentence here.\nAnother one.\n")
    out = tmp_path / "data"
    out.mkdir()
    write_shard(str(out / shard_name(0, 3)), [Example([2, 5, 3, 0], [1, 1, 1, 0], [0, 0, 0, 0])])
    with pytest.raises(ValueError, match=r"holds shards of another build and no manifest\.json .*"
                                         r"pretrain_data\.tfrecord-00000-of-00003"):
        build_pretraining_shards([corpus], str(vocab_file), str(out), max_seq_length=16, num_shards=2)
    assert sorted(os.listdir(out)) == [shard_name(0, 3)]


def test_a_damaged_manifest_is_named(tmp_path, vocab_file):
    corpus = _write(tmp_path / "corpus.txt", "One sentence here.\n")
    _write(tmp_path / "data" / MANIFEST, '{"settings": {"max_seq')
    with pytest.raises(ValueError, match=r"data/manifest\.json: not valid JSON \(.*\); use an empty"):
        build_pretraining_shards([corpus], str(vocab_file), str(tmp_path / "data"), max_seq_length=16)


def test_a_file_as_the_shard_folder_is_refused(tmp_path, vocab_file):
    corpus = _write(tmp_path / "corpus.txt", "One sentence here.\n")
    _write(tmp_path / "data", "not a folder")
    with pytest.raises(ValueError, match="data: a file, not a folder for the shards"):
        build_pretraining_shards([corpus], str(vocab_file), str(tmp_path / "data"), max_seq_length=16)


# === Vocabularies ===

def test_a_vocabulary_not_in_utf8(tmp_path):
    with pytest.raises(ValueError, match=r"vocab\.txt: a vocabulary file must be UTF-8"):
        load_vocabulary(_write(tmp_path / "vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\ncafé\n".encode("latin-1")))


def test_a_vocabulary_path_that_is_missing_or_a_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="No such file or directory"):
        ElectraTokenizer(str(tmp_path / "vocab.txt"))
    with pytest.raises(ValueError, match="a folder, not a vocab.txt file"):
        ElectraTokenizer(str(tmp_path))


def test_build_vocab_needs_room_beyond_the_special_tokens(tmp_path, refused, run_tool):
    corpus = _write(tmp_path / "corpus.txt", "some words\n")
    refused(run_tool("build_vocab", f"--input_files={corpus}", f"--output={tmp_path}/v.txt", "--vocab_size=5"),
            "vocab_size must exceed the 5 special tokens, got 5")


def test_build_vocab_creates_the_output_folder(tmp_path, run_tool):
    corpus = _write(tmp_path / "corpus.txt", "some words here\n")
    result = run_tool("build_vocab", f"--input_files={corpus}", f"--output={tmp_path}/new/folder/vocab.txt")
    assert result[0] == 0 and load_vocabulary(str(tmp_path / "new" / "folder" / "vocab.txt"))


def test_a_tokenizer_json_that_is_not_bert_wordpiece(tmp_path):
    folder = tmp_path / "tokenizer"
    _write(folder / "tokenizer.json", json.dumps({"model": {"type": "WordPiece"}}))
    with pytest.raises(ValueError, match=r"tokenizer\.json: its WordPiece model has no vocab"):
        ElectraTokenizer.from_pretrained(str(folder))
    _write(folder / "tokenizer.json", json.dumps({"model": {"type": "BPE", "vocab": {"a": 0}}}))
    with pytest.raises(ValueError, match=r"tokenizer\.json: not a BERT WordPiece tokenizer \(model type 'BPE'\)"):
        ElectraTokenizer.from_pretrained(str(folder))


def test_a_vocabulary_larger_than_the_model_is_refused_before_training(tmp_path, tiny_pretrained_dir):
    model_dir = shutil.copytree(tiny_pretrained_dir, tmp_path / "model")
    with open(model_dir / "vocab.txt", "a", encoding="utf-8") as f:
        f.writelines(f"extra{i}\n" for i in range(10))
    train = _write(tmp_path / "train.csv", "text,label\n" + "".join(f"extra{i % 10} words,{i % 2}\n" for i in range(8)))
    config = FinetuningConfig.for_task("text_classification", "small", batch_size=4, max_seq_length=16)
    task = make_task(config, ElectraTokenizer.from_pretrained(str(model_dir)), files={"train": train})
    with pytest.raises(ValueError, match=r"the vocabulary has 1428 tokens but .* embeds 1418: is it the vocab\.txt "
                                         "the model was trained with"):
        finetune(task, str(model_dir), task.load("train"))


def test_export_refuses_a_vocabulary_of_another_size_in_one_line(tmp_path, tiny_pretrained_dir, refused, run_tool):
    smaller = tmp_path / "vocab.txt"
    smaller.write_text("".join(line for line in open(os.path.join(tiny_pretrained_dir, "vocab.txt"))
                               if not line.startswith("##")), encoding="utf-8")
    code, out, err = run_tool("export_model", f"--model={tiny_pretrained_dir}", f"--vocab={smaller}",
                              f"--export_dir={tmp_path / 'exports'}")
    refused((code, out, err), f"the vocabulary {smaller} has ")
    assert f"tokens but the model {tiny_pretrained_dir} embeds 1418: is it the vocab.txt the model was trained " \
        "with?" in err and err.count("\n") == 1
    assert not (tmp_path / "exports").exists()


def test_a_vocab_size_flag_that_disagrees_with_the_vocabulary(tmp_path, vocab_file, refused, run_tool):
    refused(run_tool("run_pretraining", "--config=electra_tiny", f"--vocab_file={vocab_file}",
                     f"--train_text_files={vocab_file}", f"--model_dir={tmp_path}/run", "--vocab_size=999"),
            f"--vocab_size=999 but {vocab_file} holds 1418 tokens")


# === Configs ===

def test_null_for_a_field_that_needs_a_value():
    with pytest.raises(ValueError, match=r"ElectraConfig\.hidden_size: expected int, got None"):
        ElectraConfig.from_dict({"hidden_size": None})
    with pytest.raises(ValueError, match=r"FinetuningConfig\.batch_size: expected int, got None"):
        FinetuningConfig(batch_size=None)
    assert PretrainingConfig(max_predictions_per_seq=None).predictions_per_seq == 19  # optional: derived


def test_a_run_config_file_that_is_not_utf8_or_has_a_bad_value_is_named(tmp_path):
    path = _write(tmp_path / "run.json", b'{"model": {"hidden_act": "\xe9lu"}}')
    with pytest.raises(ValueError, match=r"run\.json: not UTF-8 \(invalid continuation byte at byte 26\)"):
        load_run_config(path)
    _write(tmp_path / "run.json", json.dumps({"model": {"num_layers": 0}}))
    with pytest.raises(ValueError, match=r"run\.json: ElectraConfig\.num_layers: must be >= 1, got 0"):
        load_run_config(path)


def test_a_config_flag_out_of_range_stops_the_tool(tmp_path, vocab_file, refused, run_tool):
    refused(run_tool("run_pretraining", "--config=electra_tiny", f"--vocab_file={vocab_file}",
                     f"--train_text_files={vocab_file}", f"--model_dir={tmp_path}/run", "--mask_prob=1.5"),
            "PretrainingConfig.mask_prob: must be in (0, 1), got 1.5")
    assert not (tmp_path / "run").exists()


def test_a_huggingface_config_with_values_of_the_wrong_type(tmp_path):
    folder = shutil.copytree(HF_FIXTURES / "discriminator", tmp_path / "hf")
    values = json.loads((folder / "config.json").read_text())
    for key, value, message in (("hidden_dropout_prob", [0.1],
                                 r"float\(\) argument must be a string or a real number, not 'list'"),
                                ("num_hidden_layers", None, r"ElectraConfig\.num_layers: expected int, got None"),
                                ("hidden_size", "256", r"ElectraConfig\.hidden_size: expected int, got '256'")):
        (folder / "config.json").write_text(json.dumps({**values, key: value}))
        with pytest.raises(ValueError, match=rf"hf/config\.json: {message}"):
            ElectraDiscriminator.from_pretrained(str(folder))


# === Checkpoints ===

def test_a_damaged_keras_file(tmp_path, tiny_pretrained_dir):
    whole = (Path(tiny_pretrained_dir) / "discriminator.keras").read_bytes()
    for name, content in (("truncated.keras", whole[:len(whole) // 2]), ("text.keras", b"not a zip archive")):
        path = _write(tmp_path / name, content)
        with pytest.raises(ValueError, match=f"{name}: not a .keras file \\(those are zip archives\\): truncated"):
            ElectraModel.from_pretrained(path)


def test_a_keras_model_that_is_not_ours(tmp_path):
    import keras

    inputs = keras.Input((3,))
    path = str(tmp_path / "dense.keras")
    keras.Model(inputs, keras.layers.Dense(2)(inputs)).save(path)
    with pytest.raises(ValueError, match=r"dense\.keras: a Keras model, but not one of electra_tf's"):
        ElectraModel.from_pretrained(path)


def test_our_folder_whose_config_does_not_match_its_model(tmp_path, tiny_pretrained_dir):
    folder = shutil.copytree(tiny_pretrained_dir, tmp_path / "final")
    values = json.loads((folder / "run_config.json").read_text())
    values["model"]["num_layers"] = 3
    (folder / "run_config.json").write_text(json.dumps(values))
    with pytest.raises(ValueError, match="final: discriminator.keras does not match run_config.json"):
        ElectraModel.from_pretrained(str(folder))


def test_a_broken_sharded_safetensors_index(tmp_path):
    folder = shutil.copytree(HF_FIXTURES / "discriminator", tmp_path / "hf")
    (folder / "model.safetensors").rename(folder / "model-00001-of-00001.safetensors")
    index = folder / "model.safetensors.index.json"
    for content, message in (("{oops", "not valid JSON"), ("{}", "no weight_map"),
                             (json.dumps({"weight_map": {"w": "../../elsewhere.safetensors"}}),
                              "shard files must sit beside the index")):
        index.write_text(content)
        with pytest.raises(ValueError, match=rf"model\.safetensors\.index\.json: {message}"):
            ElectraDiscriminator.from_pretrained(str(folder))


def test_an_unreadable_google_checkpoint(tmp_path, tiny_pretrained_dir):
    from electra_tf.checkpoints.convert import convert

    _write(tmp_path / "garbage" / "model.ckpt.index", b"not an sstable")
    with pytest.raises(ValueError, match=r"model\.ckpt: not a readable TensorFlow checkpoint \(.*\); it is truncated"):
        ElectraModel.from_pretrained(str(tmp_path / "garbage"))
    prefix = convert(tiny_pretrained_dir, str(tmp_path / "google" / "model.ckpt"), to="google")[0]
    data = Path(prefix + ".data-00000-of-00001")
    data.write_bytes(data.read_bytes()[:data.stat().st_size // 2])
    with pytest.raises(ValueError, match=r"model\.ckpt: variable .* is unreadable \(.*\); the checkpoint is truncated"):
        ElectraModel.from_pretrained(prefix)


# === TFRecords ===

def _int64s(values):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=values))


def _records(path, records):
    with tf.io.TFRecordWriter(str(path)) as writer:
        for record in records:
            writer.write(record if isinstance(record, bytes) else tf.train.Example(
                features=tf.train.Features(feature=record)).SerializeToString())
    return str(path)


@pytest.mark.parametrize("record, message", [
    ({"text": _int64s([1, 2])}, r"records have features \['text'\]; expected \['input_ids', 'input_mask', "
                                r"'segment_ids'\] or \['input_word_ids', 'input_mask', 'input_type_ids'\]"),
    ({name: tf.train.Feature(float_list=tf.train.FloatList(value=[1.0] * 8))
      for name in ("input_ids", "input_mask", "segment_ids")}, r"features \(.*\) must be int64 lists, found"),
    (b"\x08\x96\x01 not a protocol buffer", r"the records are not tf\.train\.Example protos"),
    ({"input_ids": _int64s([1] * 8), "input_mask": _int64s([1] * 7), "segment_ids": _int64s([0] * 8)},
     r"features \('input_ids', 'input_mask', 'segment_ids'\) have different lengths \[7, 8\]"),
], ids=["other_features", "float_features", "not_examples", "unequal_lengths"])
def test_tfrecords_of_another_kind_are_named(tmp_path, record, message):
    path = _records(tmp_path / "data.tfrecord", [record])
    with pytest.raises(ValueError, match=rf"data\.tfrecord: {message}"):
        pretraining_dataset(path, batch_size=2, seq_length=8)


def test_a_record_unlike_the_first_stops_pretraining_with_its_problem(tmp_path, vocab_file, run_tool):
    def record(n):
        return {"input_ids": _int64s([2] + [7] * (n - 2) + [3]), "input_mask": _int64s([1] * n),
                "segment_ids": _int64s([0] * n)}

    data = _records(tmp_path / "mixed.tfrecord", [record(16)] + [record(12)] * 15)  # the first one fits
    result = run_tool("run_pretraining", "--config=electra_tiny", f"--vocab_file={vocab_file}",
                      f"--train_files={data}", f"--model_dir={tmp_path}/run", "--max_seq_length=16", "--batch_size=4",
                      "--train_steps=4", "--hidden_size=32", "--num_heads=2", "--intermediate_size=64")
    code, _, err = result
    assert code == 2, err[-3000:]
    assert re.search(r"error: a TFRecord record unlike the first one read \(int64 features of length 16 expected\): "
                     r"Name: <unknown>, Key: \w+, Index: \d+\.  Number of int64 values != expected\.  Values size: 12 "
                     r"but output shape: \[16\]; the last checkpoint is kept\. Rebuild the shards", err), err[-3000:]


# === Task files ===

def test_a_text_classification_file_with_three_text_columns_or_an_unknown_format(tmp_path):
    path = _write(tmp_path / "data.csv", "a,b,c,label\nx,y,z,1\n")
    with pytest.raises(ValueError, match=r"text_columns: one column \(single texts\) or two \(pairs\), got "
                                         r"\['a', 'b', 'c'\]"):
        read_text_file(path, ["a", "b", "c"], "label")
    with pytest.raises(ValueError, match=r"data\.xlsx: unknown format 'xlsx'; use csv, tsv or jsonl"):
        read_text_file(_write(tmp_path / "data.xlsx", "PK\x03\x04"), ["a"], "label")


def test_the_same_column_as_both_texts_of_a_pair_or_as_text_and_label_is_refused(tmp_path, fixture_vocab):
    train = "text,label\nx,1\ny,0\n"
    with pytest.raises(ValueError, match=r"^text_columns \['text', 'text'\] name 'text' twice; a pair is two columns"):
        _classification_task(tmp_path, fixture_vocab, train=train, text_columns=["text", "text"])
    with pytest.raises(ValueError, match=r"^label_column 'label' is also one of text_columns \['text', 'label'\]: "
                                         "the model would read its labels"):
        _classification_task(tmp_path, fixture_vocab, train=train, text_columns=["text", "label"])


def _classification_task(tmp_path, fixture_vocab, max_seq_length=16, **files_and_options):
    files = {split: _write(tmp_path / f"{split}.csv", content) for split, content in files_and_options.items()
             if split in ("train", "dev", "test")}
    options = {k: v for k, v in files_and_options.items() if k not in files}
    config = FinetuningConfig.for_task("text_classification", "small", batch_size=2, max_seq_length=max_seq_length)
    return make_task(config, ElectraTokenizer(fixture_vocab), files=files, **options)


@pytest.mark.parametrize("options, message", [
    ({"train": "text,label\na,same\nb,same\n"},
     r"train\.csv: every label is 'same'; a classifier needs two classes or more: declare them with --label_names "
     r"\(e\.g\. --label_names=same,other\), or pass --regression for scores"),
    ({"train": "text,label\na,x\n", "label_names": ["x"]}, r"--label_names: every label is 'x'"),
    ({"train": "text,label\na,x\n", "label_names": ["x", "y", "x"]},
     r"label_names \['x', 'y', 'x'\] name \['x'\] more than once"),
], ids=["one-class-file", "one-declared-label", "repeated-label-names"])
def test_a_classifier_of_one_class_or_repeated_label_names_is_refused(tmp_path, fixture_vocab, options, message):
    with pytest.raises(ValueError, match=message):
        _classification_task(tmp_path, fixture_vocab, **options).load("train")


def test_a_label_found_only_in_the_dev_file_suggests_label_names(tmp_path, fixture_vocab):
    task = _classification_task(tmp_path, fixture_vocab, train="text,label\na,x\nb,y\n", dev="text,label\nc,z\n")
    task.load("train")
    with pytest.raises(ValueError, match=r"dev\.csv: labels \['z'\] are not in the declared set \['x', 'y'\], those "
                                         r"of the training file .*train\.csv; declare every label with "
                                         r"--label_names=x,y,z"):
        task.load("dev")


def test_texts_longer_than_the_model_are_counted_for_results_json(tmp_path, fixture_vocab):
    long_text = " ".join(["the"] * 40)
    task = _classification_task(tmp_path, fixture_vocab, train=f"text,label\n{long_text},x\nshort,y\nb,x\n",
                                test=f"text\n{long_text}\n{long_text}\n")
    assert {**task.data_stats("train", task.load("train")), **task.data_stats("test", task.load("test"))} == {
        "train_examples": 3, "train_truncated": 1, "test_examples": 2, "test_truncated": 2}


def test_label_names_are_the_training_files_whichever_split_is_read_first(tmp_path, fixture_vocab):
    task = _classification_task(tmp_path, fixture_vocab, train="text,label\na,y\nb,x\nc,w\n", dev="text,label\nc,x\n")
    assert len(task.load("dev")) == 1  # first: before, the dev file's labels (['x']) became the task's
    assert task.label_names == ("w", "x", "y") and task.load("train").labels.tolist() == [2, 1, 0]


def test_fewer_training_examples_than_a_batch(tmp_path, fixture_vocab):
    train = _write(tmp_path / "train.csv", "text,label\na b,0\nc d,1\n")
    config = FinetuningConfig.for_task("text_classification", "small", batch_size=32, max_seq_length=16)
    task = make_task(config, ElectraTokenizer(fixture_vocab), files={"train": train})
    with pytest.raises(ValueError, match="2 training examples make no batch of 32"):
        finetune(task, "unused: refused before the model is built", task.load("train"))


# === Runs: every split, flag and input checked before the first write ===

@pytest.mark.parametrize("extra, message", [
    (["--test_file={tmp}/missing.csv"], "{tmp}/missing.csv: no such file"),
    (["--test_file={tmp}/test.csv"], "{tmp}/test.csv:3: 2 field(s), but the header has 1"),
    (["--dev_file={tmp}/unlabelled.csv"], "{tmp}/unlabelled.csv: missing column(s) ['label'] (--label_column); the "
                                          "file has ['text']"),
    (["--max_seq_length=1000"],
     "--max_seq_length=1000 but {model} has 128 positions; pass --max_seq_length=128 or less"),
    (["--output_dir={tmp}/train.csv"], "{tmp}/train.csv/trial_0: Not a directory (a file stands where a folder is "
                                       "needed)"),
], ids=["missing-test-file", "bad-test-line", "unlabelled-dev", "longer-than-the-model", "output-dir-is-a-file"])
def test_a_finetuning_run_checks_every_split_and_its_length_before_it_trains(tmp_path, tiny_pretrained_dir, extra,
                                                                              message, refused, run_tool):
    _write(tmp_path / "test.csv", "text\nfine\nHello, world\n")
    _write(tmp_path / "unlabelled.csv", "text\nfine\n")
    values = {"tmp": tmp_path, "model": tiny_pretrained_dir}
    result = run_tool("run_finetuning", *_finetune_flags(tmp_path, tiny_pretrained_dir),
                      *[flag.format(**values) for flag in extra])
    refused(result, message.format(**values))
    assert "fine-tuning" not in result[1] and not (tmp_path / "out" / "trial_0").exists()


@pytest.mark.parametrize("tool, flag", [
    ("run_pretraining", "--save_every=0"), ("run_pretraining", "--eval_every=0"), ("run_pretraining", "--log_every=0"),
    ("run_pretraining", "--keep_checkpoints=0"), ("run_pretraining", "--eval_steps=-1"),
    ("run_finetuning", "--eval_every=0"), ("run_finetuning", "--log_every=-5"),
    ("build_pretraining_data", "--max_seq_length=3"), ("build_pretraining_data", "--num_shards=0"),
])
def test_counts_of_zero_or_less_are_flag_errors(tool, flag, run_tool):
    from absl import flags

    required = {"run_pretraining": ["--vocab_file=v", "--model_dir=m"],
                "run_finetuning": ["--task=sst2", "--init_checkpoint=c", "--output_dir=o"],
                "build_pretraining_data": ["--input_files=i", "--vocab_file=v", "--output_dir=o"]}[tool]
    name = flag.split("=")[0]
    with pytest.raises(flags.IllegalFlagValueError, match=f"{name} must be >= "):
        run_tool(tool, *required, flag)


def test_a_pretraining_config_too_short_to_pack_names_max_seq_length():
    with pytest.raises(ValueError, match=r"PretrainingConfig\.max_seq_length: must be >= 5 \(\[CLS\] A \[SEP\] B "
                                         r"\[SEP\], as examples are packed\), got 3"):
        PretrainingConfig(max_seq_length=3)


def test_shards_of_another_length_are_refused_before_the_model_dir_is_written(tmp_path, vocab_file, refused,
                                                                             run_tool):
    corpus = _write(tmp_path / "corpus.txt", "One sentence here.\nAnother one follows.\n\nA second document.\n")
    build_pretraining_shards([corpus], str(vocab_file), str(tmp_path / "data"), max_seq_length=16)
    shards = f"{tmp_path}/data/*.tfrecord*"
    result = run_tool("run_pretraining", "--config=electra_tiny", f"--vocab_file={vocab_file}",
                      f"--train_files={shards}", f"--model_dir={tmp_path}/run", "--max_seq_length=32")
    refused(result, f"{shards}: records have length 16, but the sequence length is 32 "
                    "(pass --max_seq_length=16, or build shards of length 32)")
    assert not (tmp_path / "run" / RUN_CONFIG).exists()  # so the corrected command is not "another config"


def test_an_init_checkpoint_of_another_config_leaves_no_run_config(tmp_path, vocab_file, write_pretrained_dir,
                                                                   refused, run_tool):
    final = write_pretrained_dir(tmp_path / "final")  # a pre-training's final/: both networks, a tiny config
    ElectraGenerator(generator_config(*load_run_config(run_config_file(final)))).save(f"{final}/generator.keras")
    result = run_tool("run_pretraining", "--config=electra_tiny", f"--vocab_file={vocab_file}",
                      f"--train_text_files={vocab_file}", f"--model_dir={tmp_path}/run", "--max_seq_length=16",
                      "--batch_size=2", f"--init_checkpoint={final}")
    refused(result, f"--init_checkpoint {final}: {final} (electra_tf): its discriminator has another model config")
    assert not (tmp_path / "run" / RUN_CONFIG).exists()  # so the corrected command is not "another config"


# === Errors of the OS, csv, TensorFlow and safetensors: one line naming the path ===

def _tensorflow_error(name, message):
    return getattr(tf.errors, name)(None, None, message)


@pytest.mark.parametrize("error, line", [
    (PermissionError(13, "Permission denied", "/runs/out"),
     "/runs/out: Permission denied (check its permissions, or choose another path)"),
    (NotADirectoryError(20, "Not a directory", "/runs/file/trial_0"),
     "/runs/file/trial_0: Not a directory (a file stands where a folder is needed)"),
    (IsADirectoryError(21, "Is a directory", "/runs"),
     "/runs: Is a directory (a folder stands where a file is needed)"),
    (_tensorflow_error("PermissionDeniedError", "/data/train.txt; Permission denied"),
     "/data/train.txt; Permission denied"),
    (_tensorflow_error("NotFoundError", "/data/train.txt; No such file or directory"),
     "/data/train.txt; No such file or directory"),
    (_tensorflow_error("FailedPreconditionError", "/runs; Is a directory"), "/runs; Is a directory"),
    (__import__("csv").Error("line contains NUL"), "line contains NUL"),
    (__import__("safetensors").SafetensorError("Error while deserializing header: HeaderTooLarge"),
     "Error while deserializing header: HeaderTooLarge"),
], ids=["PermissionError", "NotADirectoryError", "IsADirectoryError", "PermissionDeniedError", "NotFoundError",
        "FailedPreconditionError", "csv.Error", "SafetensorError"])
def test_file_errors_end_a_tool_in_one_line_naming_the_path(error, line, capsys):
    from electra_tf.tools.common import exits_cleanly_on_bad_input

    def main(argv):
        raise error

    with pytest.raises(SystemExit) as exit_info:
        exits_cleanly_on_bad_input(main)(["tool"])
    assert exit_info.value.code == 2 and capsys.readouterr().err == f"error: {line}\n"


@pytest.mark.parametrize("error", [OSError(28, "No space left on device", "/runs/out/model.keras"),
                                   __import__("safetensors").SafetensorError("I/O error: No space left on device "
                                                                             "(os error 28)")],
                         ids=["OSError", "SafetensorError"])
def test_a_full_disk_still_exits_74(error, capsys):
    from electra_tf.tools.common import WRITE_FAILED_EXIT_CODE, exits_cleanly_on_bad_input

    def main(argv):
        raise error

    with pytest.raises(SystemExit) as exit_info:
        exits_cleanly_on_bad_input(main)(["tool"])
    assert exit_info.value.code == WRITE_FAILED_EXIT_CODE and "error: a write failed (" in capsys.readouterr().err


def test_build_vocab_into_a_folder_names_the_file_to_give(tmp_path, refused, run_tool):
    corpus = _write(tmp_path / "corpus.txt", "some words here\n")
    refused(run_tool("build_vocab", f"--input_files={corpus}", f"--output={tmp_path}", "--overwrite"),
            f"--output={tmp_path} is a folder; give the vocabulary file's path, e.g. --output={tmp_path}/vocab.txt")


def test_a_checkpoint_path_that_is_missing_dangling_or_looping_says_so(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nothing: does not exist \(no file, folder or checkpoint prefix"):
        ElectraModel.from_pretrained(str(tmp_path / "nothing"))
    os.symlink(tmp_path / "gone", tmp_path / "dangling")
    with pytest.raises(FileNotFoundError, match=r"dangling: a symbolic link to .*gone, which does not exist"):
        ElectraModel.from_pretrained(str(tmp_path / "dangling"))
    os.symlink(tmp_path / "b", tmp_path / "a")
    os.symlink(tmp_path / "a", tmp_path / "b")
    with pytest.raises(ValueError, match=r"/a: its symbolic links loop"):
        ElectraModel.from_pretrained(str(tmp_path / "a"))


@pytest.fixture
def unreadable(monkeypatch):
    """`unreadable(path)`: opening `path` fails as a file without read permission does (tests run as root,
    which chmod does not stop)."""
    import builtins

    real_open, paths = builtins.open, set()

    def fake_open(file, *args, **kwargs):
        if os.fspath(file) in paths:
            raise PermissionError(13, "Permission denied", os.fspath(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake_open)
    return lambda path: paths.add(str(path))


def test_an_unreadable_weights_file_says_permission_denied(tmp_path, tiny_pretrained_dir, unreadable):
    from electra_tf.checkpoints.safetensors_io import read_safetensors

    keras_file = shutil.copyfile(Path(tiny_pretrained_dir) / "discriminator.keras", tmp_path / "model.keras")
    unreadable(keras_file)
    with pytest.raises(PermissionError, match="Permission denied") as error:
        ElectraModel.from_pretrained(str(keras_file))
    assert error.value.filename == str(keras_file)
    weights = HF_FIXTURES / "discriminator" / "model.safetensors"
    assert weights.is_file()
    unreadable(weights)
    with pytest.raises(PermissionError, match="Permission denied") as error:
        read_safetensors(str(weights))
    assert error.value.filename == str(weights)


# === Runs ===

def _finetune_flags(tmp_path, model_dir):
    train = _write(tmp_path / "train.csv", "text,label\n" + "".join(f"word {i},{i % 2}\n" for i in range(8)))
    return ["--task=text_classification", f"--train_file={train}", f"--init_checkpoint={model_dir}",
            f"--output_dir={tmp_path}/out", "--batch_size=4", "--max_seq_length=16"]


def test_finetuning_into_an_output_dir_of_another_run_is_refused(tmp_path, tiny_pretrained_dir, refused, run_tool):
    flags = _finetune_flags(tmp_path, tiny_pretrained_dir)
    other = {"seed": 0, "scores": {}, "predictions": {}, "run": {"config": {"learning_rate": 0.5}}}
    _write(tmp_path / "out" / "trial_0" / "results.json", json.dumps(other))
    refused(run_tool("run_finetuning", *flags), f"{tmp_path}/out/trial_0 holds a trial of another run (differing: [")
    assert json.loads((tmp_path / "out" / "trial_0" / "results.json").read_text()) == other


def test_a_damaged_trial_result_is_named(tmp_path, tiny_pretrained_dir, refused, run_tool):
    _write(tmp_path / "out" / "trial_0" / "results.json", '{"seed": 0, "sco')
    refused(run_tool("run_finetuning", *_finetune_flags(tmp_path, tiny_pretrained_dir)),
            f"{tmp_path}/out/trial_0/results.json: not valid JSON (")


def test_a_model_dir_with_a_damaged_config(tmp_path, vocab_file, refused, run_tool):
    _write(tmp_path / "run" / "config.json", '{"model": ')
    refused(run_tool("run_pretraining", "--config=electra_tiny", f"--vocab_file={vocab_file}",
                     f"--train_text_files={vocab_file}", f"--model_dir={tmp_path}/run"),
            f"{tmp_path}/run/config.json: not valid JSON (")


# === Serving requests (an export of a sentence-pair classifier) ===

@pytest.fixture(scope="module")
def served(tiny_pretrained_dir, tmp_path_factory):
    from electra_tf.export import export_model

    model = ElectraForSequenceClassification.from_pretrained(tiny_pretrained_dir, num_labels=2)
    tokenizer = ElectraTokenizer.from_pretrained(tiny_pretrained_dir)
    export_dir = str(tmp_path_factory.mktemp("exports"))
    path = export_model(model, tokenizer, export_dir, model_name="pairs", max_seq_length=16, text_pair=True,
                        label_names=["no", "yes"])
    return {"path": path, "model": model, "tokenizer": tokenizer, "export_dir": export_dir}


def _query(served, *texts, **inputs):
    from electra_tf.export import query_export

    return query_export(served["path"], *texts, **inputs)


def test_a_request_without_an_input_or_with_a_wrong_name(served):
    with pytest.raises(ValueError, match=r"serving_default takes \['text', 'text_pair'\], got 1 input\(s\)"):
        _query(served, ["only one text"])
    with pytest.raises(ValueError, match=r"serving_default takes \['text', 'text_pair'\], got \['text', 'texts'\]"):
        _query(served, text=["a"], texts=["b"])


def test_a_request_whose_inputs_have_different_batch_sizes(served):
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"text and text_pair need the same number of rows"):
        _query(served, ["one", "two"], ["three"])


def test_a_request_with_numbers_for_text(served):
    with pytest.raises(TypeError, match="Cannot convert .* to EagerTensor of dtype string"):
        _query(served, [1, 2], [3, 4])


def test_invalid_utf8_empty_long_and_zero_requests_are_answered(served):
    out = _query(served, [b"caf\xe9 \xff\xfe", "", "word " * 20_000], ["", "", "x"])
    assert out["label_id"].shape == (3,) and np.isfinite(out["probabilities"]).all()
    assert set(out["label"].tolist()) <= {"no", "yes"}  # query_export gives str
    none = _query(served, np.array([], object), np.array([], object))
    assert none["label_id"].shape == (0,) and none["probabilities"].shape == (0, 2)


def test_token_ids_outside_the_vocabulary(served):
    ids = np.full((1, 16), 5000, np.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0,0\] = 5000 is not in \[0, 1418\)"):
        _query(served, signature="serve_ids", input_ids=ids, attention_mask=np.ones_like(ids),
               token_type_ids=np.zeros_like(ids))


def test_a_request_of_serialized_examples_that_are_not_examples(served):
    with pytest.raises(tf.errors.InvalidArgumentError, match="Could not parse example input"):
        _query(served, signature="serve_examples", examples=np.array([b"not a tf.Example"], object))


def test_a_request_for_a_signature_the_export_does_not_have(served):
    with pytest.raises(KeyError, match="serve_text"):
        _query(served, signature="serve_text", text=["a"])


def test_exporting_over_an_existing_version(served):
    from electra_tf.export import export_model, versions

    with pytest.raises(FileExistsError, match=r"pairs/1 exists; pick another version or overwrite it"):
        export_model(served["model"], served["tokenizer"], served["export_dir"], model_name="pairs", version=1,
                     max_seq_length=16, text_pair=True)
    assert versions(os.path.join(served["export_dir"], "pairs")) == [1]


def test_the_export_holds_no_python_callback(served):
    from tensorflow.core.protobuf import saved_model_pb2

    saved = saved_model_pb2.SavedModel.FromString(Path(served["path"], "saved_model.pb").read_bytes())
    ops = {node.op for graph in saved.meta_graphs for node in graph.graph_def.node}
    ops |= {node.op for graph in saved.meta_graphs for function in graph.graph_def.library.function
            for node in function.node_def}
    assert "FastWordpieceTokenizeWithOffsets" in ops  # the tokenizer is in the graph, and the scan sees it
    assert not ops & {"PyFunc", "PyFuncStateless", "EagerPyFunc"}


def test_from_pretrained_takes_a_max_seq_length_within_the_positions_and_refuses_one_beyond(tmp_path):
    folder = str(HF_FIXTURES / "sequence_classification")  # 16 positions
    assert ElectraForSequenceClassification.from_pretrained(folder, max_seq_length=8).preprocessor.sequence_length == 8
    with pytest.raises(ValueError) as refused:
        ElectraForSequenceClassification.from_pretrained(folder, max_seq_length=999)
    assert str(refused.value) == (f"max_seq_length=999 but {folder} has 16 positions; pass max_seq_length=16 or "
                                  "less")
    saved = tmp_path / "saved"  # a folder whose electra_tf.json records a length beyond the positions
    shutil.copytree(folder, saved)
    (saved / "electra_tf.json").write_text(json.dumps({"max_seq_length": 999}))
    with pytest.raises(ValueError, match=r"^max_seq_length=999 \(its electra_tf.json\) but .* has 16 positions"):
        ElectraModel.from_pretrained(str(saved))
