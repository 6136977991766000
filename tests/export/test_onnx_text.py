"""ONNX exports that take raw text (`text_model.onnx`, `electra_tf.export.onnx_text`).

The tokenizer graph alone gives the package tokenizer's ids on every text of the tokenizer-call
fixtures (recorded from transformers by `tools/make_tokenizer_call_fixtures.py`), and transformers'
own recorded ids on its plain calls, on Chinese text with the BERT-Chinese-style vocabulary and on a
sample of every plane's code points; the text model beside `model.onnx` gives that model's outputs on
those ids, and `query_export` sends it raw text.
"""

import collections
import contextlib
import io
import json
import os
import re
from pathlib import Path

import keras
import numpy as np
import pytest

from electra_tf import ElectraForSequenceClassification, ElectraForTokenClassification
from electra_tf.checkpoints.tokenizer_files import load_tokenizer
from electra_tf.export.client import query_export
from electra_tf.export.ids_folder import INFO_FILE
from electra_tf.export.onnx import MODEL_FILE, export_onnx
from electra_tf.export.onnx_text import TABLE_RANGES, TEXT_MODEL_FILE, run_model, session, tokenizer_model
from electra_tf.models.base import INPUT_NAMES
from electra_tf.text.tokenizer import WordPieceTokenizer
from electra_tf.util.atomic import read_json

FIXTURES = Path(__file__).parents[1] / "fixtures"
CALLS = json.loads((FIXTURES / "tokenizer" / "call_outputs.json").read_text(encoding="utf-8"))
VOCABULARIES = {"chinese": str(Path(__file__).parents[2] / CALLS["vocabularies"]["chinese"])}
TEXTS = ["The cat sat on the mat.", "a gripping film", "Héllo, Wörld! 北京欢迎你。", "no"]
LABELS = ["neg", "pos", "mixed"]
MAX_LEN = 16


def _tokenizer(setting):
    options = {key: value for key, value in CALLS["settings"][setting].items() if key != "padding_side"}
    return WordPieceTokenizer(VOCABULARIES.get(setting, str(FIXTURES / "tokenizer" / "vocab.txt")), **options)


def _strings(value):
    if isinstance(value, str):
        return [value]
    return [text for item in value for text in _strings(item)] if isinstance(value, (list, tuple)) else []


def _recorded_texts():
    """Every string in the arguments of the fixture's calls, once each."""
    return sorted({text for call in CALLS["calls"]
                   for text in _strings(call["args"]) + _strings(list(call["kwargs"].values()))})


def _differences(tokenizer, length, texts, pairs=None):
    """Rows where the tokenizer graph's inputs differ from `tokenizer.encode`'s (cut to the graph's length)."""
    names = ("text",) if pairs is None else ("text", "text_pair")
    graph = run_model(tokenizer_model(tokenizer, length, names), dict(zip(names, [texts, pairs])))
    ours = {name: value.numpy() for name, value in tokenizer.encode(texts, pairs, sequence_length=length).items()}
    longest = graph["input_ids"].shape[1]
    assert not ours["attention_mask"][:, longest:].any()
    return [row for row in range(len(texts))
            if any((graph[name][row] != ours[name][row, :longest]).any() for name in INPUT_NAMES)]


@pytest.mark.parametrize("setting", ["uncased", "cased", "chinese"])
def test_the_tokenizer_graph_gives_our_ids_on_every_recorded_text(setting):
    tokenizer, texts = _tokenizer(setting), _recorded_texts()
    assert len(texts) > 100
    for length in (512, 24):  # whole texts, and truncated ones
        assert _differences(tokenizer, length, texts) == []
        assert _differences(tokenizer, length, texts, texts[::-1]) == []


def test_the_tokenizer_graph_gives_transformers_recorded_ids():
    """Every recorded `tokenizer(text)` / `tokenizer(text, pair)` call of transformers without other options
    than truncation at a length of 3 or more (but pairs it had to cut: ours are cut as in training, the first
    text keeping an odd token, transformers' `longest_first` gives it to the longer; and an empty pair, no pair
    to transformers): the graph at that length gives the recorded ids."""
    groups = collections.defaultdict(list)  # (setting, length, pair) → calls, run as one batch
    for call in CALLS["calls"]:
        kwargs, args, length = call["kwargs"], call["args"], call["kwargs"].get("max_length", 512)
        cut = {"max_length": length, "truncation": kwargs.get("truncation")}
        if (call["method"] == "__call__" and "output" in call and kwargs in ({}, cut)
                and cut["truncation"] in (None, True, "longest_first")
                and length >= 3 and len(args) in (1, 2) and all(isinstance(arg, str) for arg in args)
                and not (len(args) == 2 and ("" in args or len(call["output"]["input_ids"]) == length))):
            groups[call["setting"], length, len(args) == 2].append(call)
    for (setting, length, pair), calls in groups.items():
        names = ("text", "text_pair")[:1 + pair]
        graph = run_model(tokenizer_model(_tokenizer(setting), length, names),
                          {name: [call["args"][i] for call in calls] for i, name in enumerate(names)})
        for row, call in enumerate(calls):
            size = len(call["output"]["input_ids"])
            assert not graph["attention_mask"][row, size:].any(), call
            for name in INPUT_NAMES:
                assert graph[name][row, :size].tolist() == call["output"][name], (call, name)
    assert sum(map(len, groups.values())) > 40


def test_chinese_text_with_the_bert_chinese_vocabulary(bert_chinese_vocab):
    """CJK ideographs one token each, full-width punctuation and digits, Latin words among Chinese."""
    lines = (FIXTURES / "chinese" / "corpus.txt").read_text(encoding="utf-8").split("\n")
    texts = [line for line in lines if line.strip()][:200] + ["２０１９年，iPhone销量（约3.5亿台）！", "Ｃａｆé 北京"]
    tokenizer = WordPieceTokenizer(bert_chinese_vocab)
    assert _differences(tokenizer, 128, texts) == []


def test_every_plane_of_the_table_in_a_sample_of_code_points():
    """Every 61st code point, alone and inside words (uncased and cased): the same ids as ours."""
    characters = [chr(c) for start, end in (*TABLE_RANGES, (0x30000, 0x110000)) for c in range(start, end, 61)
                  if not 0xD800 <= c < 0xE000 and c]  # (NUL ends the text for the extensions' ops: docs/serving.md)
    texts = characters + [f"Ab{c}cD é{c}" for c in characters]
    for setting in ("uncased", "cased"):
        assert _differences(_tokenizer(setting), 16, texts) == []


@pytest.fixture(scope="module")
def classifier_exports(tiny_pretrained_dir, tmp_path_factory, run_tool):
    """(folder of a 3-class classifier, ONNX fp32 export, ONNX int8 export) exported by the tool."""
    keras.utils.set_random_seed(0)
    model = ElectraForSequenceClassification.from_pretrained(tiny_pretrained_dir, num_labels=3)
    rng = np.random.default_rng(0)
    for weight in model.weights:
        weight.assign(weight.numpy() + rng.normal(0.0, 0.05, weight.shape).astype("float32"))
    folder = str(tmp_path_factory.mktemp("classifier") / "model")
    model.save_pretrained(folder, tokenizer=load_tokenizer(tiny_pretrained_dir), label_names=LABELS,
                          max_seq_length=MAX_LEN)
    export_dir = str(tmp_path_factory.mktemp("exports"))
    paths = {}
    for name, argv in {"fp32": [], "int8": ["--precision=int8"]}.items():
        code, out, err = run_tool("export_model", f"--model={folder}", f"--export_dir={export_dir}",
                                  f"--model_name={name}", "--format=onnx", *argv)
        assert code in (0, None), err[-3000:]
        paths[name] = os.path.join(export_dir, name, "1")
        assert f"raw text in: {paths[name]}/{TEXT_MODEL_FILE} (inputs text;" in out
    return paths


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_the_text_model_gives_the_id_models_outputs(classifier_exports, precision):
    folder = classifier_exports[precision]
    info = read_json(os.path.join(folder, INFO_FILE))
    assert info["text_model"] == TEXT_MODEL_FILE and "onnxruntime_extensions" in info["built_with"]
    assert f"# raw text in: {TEXT_MODEL_FILE}" in Path(folder, "README.md").read_text()  # the model card says so
    ids = {name: value.numpy() for name, value in load_tokenizer(folder).encode(TEXTS, sequence_length=MAX_LEN).items()}
    text = run_model(os.path.join(folder, TEXT_MODEL_FILE), {"text": TEXTS})
    longest = text["input_ids"].shape[1]
    assert longest <= MAX_LEN and (text["input_ids"] == ids["input_ids"][:, :longest]).all()
    assert (text["attention_mask"] == ids["attention_mask"][:, :longest]).all()
    plain = session(os.path.join(folder, MODEL_FILE))
    reference = dict(zip([output.name for output in plain.get_outputs()],
                         plain.run(None, {name: value[:, :longest] for name, value in ids.items()})))
    np.testing.assert_allclose(text["probabilities"], reference["probabilities"], atol=1e-6)
    assert (text["label_id"] == reference["label_id"]).all()


def test_query_export_sends_raw_text_to_an_onnx_export(classifier_exports):
    folder = classifier_exports["fp32"]
    outputs = query_export(folder, TEXTS)
    assert [LABELS[i] for i in outputs["label_id"]] == outputs["label"].tolist()
    assert outputs["probabilities"].shape == (len(TEXTS), len(LABELS))
    np.testing.assert_allclose(query_export(folder, text=TEXTS[:1])["probabilities"], outputs["probabilities"][:1],
                               atol=1e-6)
    empty = query_export(folder, [])
    assert empty["probabilities"].shape == (0, len(LABELS)) and empty["label"].shape == (0,)
    with pytest.raises(ValueError, match=r"text_model.onnx takes \['text'\], got 2 input\(s\)"):
        query_export(folder, TEXTS, TEXTS)


def test_a_pair_classifier_takes_text_pairs(tiny_pretrained_dir, tmp_path):
    keras.utils.set_random_seed(0)
    model = ElectraForSequenceClassification.from_pretrained(tiny_pretrained_dir, num_labels=2)
    tokenizer = load_tokenizer(tiny_pretrained_dir)
    folder = export_onnx(model, tokenizer, str(tmp_path), max_seq_length=MAX_LEN, text_pair=True)
    pairs = TEXTS[::-1]
    outputs = query_export(folder, TEXTS, pairs)
    ids = tokenizer.encode(TEXTS, pairs, sequence_length=MAX_LEN)
    longest = outputs["input_ids"].shape[1]
    assert (outputs["input_ids"] == ids["input_ids"].numpy()[:, :longest]).all()
    reference = model({name: value[:, :longest] for name, value in ids.items()})["logits"]
    np.testing.assert_allclose(outputs["logits"], reference, atol=1e-4)


def test_text_model_refusals(tiny_pretrained_dir, run_tool, refused, tmp_path):
    tagger = ElectraForTokenClassification.from_pretrained(tiny_pretrained_dir, num_labels=3)
    with pytest.raises(ValueError, match=r"^--text_model: a tagging model's serving_default cuts raw text its own"):
        export_onnx(tagger, load_tokenizer(tiny_pretrained_dir), str(tmp_path), text_model=True)
    assert not os.path.exists(tmp_path / "electra")
    path = export_onnx(tagger, load_tokenizer(tiny_pretrained_dir), str(tmp_path), max_seq_length=MAX_LEN)
    assert read_json(os.path.join(path, INFO_FILE))["text_model"] is None  # the default: only where it can be
    assert not os.path.exists(os.path.join(path, TEXT_MODEL_FILE))
    assert TEXT_MODEL_FILE not in Path(path, "README.md").read_text()
    refused(run_tool("export_model", f"--model={tiny_pretrained_dir}", f"--export_dir={tmp_path}", "--format=litert",
                     "--text_model"), "--text_model is for --format=onnx, not --format=litert")


def test_the_documented_text_model_example_runs(classifier_exports):
    text = (Path(__file__).parents[2] / "docs" / "serving.md").read_text(encoding="utf-8")
    code = re.search(r"<!-- tested: tests/export/test_onnx_text.py -->\n```python\n(.*?)```", text, re.S)[1]
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        exec(code.replace('"exports/my_task_onnx/1"', repr(classifier_exports["int8"])), {})
    labels = re.match(r"\[(.*)\] \[\[", printed.getvalue(), re.S)[1]
    assert all(label.strip(" '") in LABELS for label in labels.split(","))


def test_query_export_refuses_what_is_no_text_before_onnx_runtime_sees_it(tiny_pretrained_dir, tmp_path):
    """None, numbers, nested lists, bytes that are not UTF-8, lone surrogates and pairs of unequal rows: one line
    naming the input and row (ONNX Runtime sent None and numbers as the text 'None', '1', bytes as "b'...'",
    and failed in the tokenizer's Split node on unequal rows). Valid UTF-8 bytes are decoded."""
    model = ElectraForSequenceClassification.from_pretrained(tiny_pretrained_dir, num_labels=2)
    folder = export_onnx(model, load_tokenizer(tiny_pretrained_dir), str(tmp_path), max_seq_length=MAX_LEN,
                         text_pair=True)
    for texts, pairs, message in [
            (None, ["a"], r"^text takes a text or a list of texts, got None \(NoneType\)$"),
            (["a", None], ["b", "c"], r"^text\[1\] is None \(NoneType\), not a text$"),
            ([1, 2], ["b", "c"], r"^text\[0\] is 1 \(int\), not a text$"),
            ([["a", "b"]], ["c"], r"^text\[0\] is \['a', 'b'\] \(list\), not a text$"),
            (["a"], [b"caf\xe9"], r"^text_pair\[0\] is not UTF-8 text \(unexpected end of data at position 3\)$"),
            (["a\ud800"], ["b"], r"^text\[0\] is not UTF-8 text \(surrogates not allowed at position 1\)$"),
            (["a", "b"], ["c"], r"^text and text_pair need the same number of rows \(one pair per row\), got 2 "
                                r"and 1$")]:
        with pytest.raises(ValueError, match=message):
            query_export(folder, texts, pairs)
    decoded = query_export(folder, ["café".encode("utf-8")], "x")["input_ids"]
    assert (decoded == query_export(folder, ["café"], ["x"])["input_ids"]).all()
    column = query_export(folder, np.array(["café", "a"]), iter(["x", "y"]))["input_ids"]  # (or a pandas Series)
    assert (column[:1, :decoded.shape[1]] == decoded).all()
    with pytest.raises(ValueError, match=r"^text takes a text or a list of texts, got \{'a': 'b'\} \(dict\)$"):
        query_export(folder, {"a": "b"}, ["c"])
