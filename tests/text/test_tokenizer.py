"""The core in-graph `WordPieceTokenizer` against Hugging Face `BertTokenizerFast` (fixture from
tools/make_tokenizer_fixtures.py), its fused path (tf-text's end-to-end WordPiece) against BERT's rules written as
string ops, and its one convention: strings in, ids out (Python strings too)."""

import json
from pathlib import Path

import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from electra_tf.text.tokenizer import WordPieceTokenizer

FIXTURES = Path(__file__).parents[1] / "fixtures" / "tokenizer"
FIXTURE = json.loads((FIXTURES / "bert_tokenizer_fast.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("setting", sorted(FIXTURE["settings"]))
def test_ids_equal_bert_tokenizer_fast(setting):
    options = FIXTURE["settings"][setting]
    tokenizer = WordPieceTokenizer(str(FIXTURES / "vocab.txt"), **options)
    texts = FIXTURE["texts"]
    ours = tokenizer(tf.constant(texts)).to_list()
    mismatches = [(text, expected, got) for text, expected, got in zip(texts, FIXTURE["ids"][setting], ours)
                  if expected != got]
    assert not mismatches, f"{len(mismatches)} of {len(texts)} differ, e.g. {mismatches[:3]}"


def test_in_graph_and_eager_ids_agree():
    tokenizer = WordPieceTokenizer(str(FIXTURES / "vocab.txt"))
    texts = FIXTURE["texts"][:50]
    graph = tf.function(tokenizer, input_signature=[tf.TensorSpec([None], tf.string)])
    dataset = tf.data.Dataset.from_tensor_slices(texts).batch(10).map(tokenizer)
    from_dataset = [row for batch in dataset for row in batch.to_list()]
    assert graph(tf.constant(texts)).to_list() == tokenizer(tf.constant(texts)).to_list() == from_dataset
    assert tokenizer(texts[:3]).to_list() == tokenizer.tokenize(texts[:3]).to_list() == from_dataset[:3]
    assert tokenizer(texts[0]).numpy().tolist() == from_dataset[0]
    assert tokenizer.encode(texts[0], texts[1], sequence_length=8)["input_ids"].numpy().tolist() == [
        [2, *from_dataset[0][:3], 3, *from_dataset[1][:2], 3]]


@pytest.mark.perf
def test_eager_encode_is_one_graph_call_with_the_featurization_s_outputs():
    from electra_tf.text import featurize

    tokenizer = WordPieceTokenizer(str(FIXTURES / "vocab.txt"))
    texts, pairs = tf.constant(FIXTURE["texts"][:8]), tf.constant(FIXTURE["texts"][8:16])
    for arguments in ((texts,), (texts, pairs)):
        eager, expected = tokenizer.encode(*arguments, sequence_length=24), featurize.encode(tokenizer, 24, *arguments)
        assert {name: value.numpy().tolist() for name, value in eager.items()} == {
            name: value.numpy().tolist() for name, value in expected.items()}
    assert {key for key in tokenizer._graphs if key[0] == "encode"} == {("encode", 24, False, True),
                                                                        ("encode", 24, True, True)}
    tokenizer.set_vocabulary(tokenizer.get_vocabulary()[:-1])  # a new vocabulary drops the traced calls
    assert "_graphs" not in tokenizer.__dict__


# Text of every kind of character, with ASCII, whitespace, controls, accents, CJK and unassigned code points
# made frequent; surrogates cannot be encoded.
_SPECIAL = (" \t\n\r\x00\x07\x0b\x1f\x7f\x85\xa0\u2009\u3000\u200b\u00ad\ufffd"
            ".,!?'\"-$+<=>^|~`[]#中文한글👍🏽éÉßİǅﬁ\u0301\U0001e5ff")
_TEXT = st.text(alphabet=st.one_of(st.characters(exclude_categories=("Cs",)), st.sampled_from(_SPECIAL),
                                   st.sampled_from("abcdefghij ABC [SEP]")), max_size=40)
_ASCII = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=127), max_size=40)
_TOKENIZERS = {name: WordPieceTokenizer(str(FIXTURES / "vocab.txt"), **options)
               for name, options in FIXTURE["settings"].items()}


@settings(max_examples=40, deadline=None, database=None)
@given(st.lists(st.one_of(_TEXT, _ASCII, st.sampled_from(FIXTURE["texts"])), min_size=1, max_size=6),
       st.sampled_from(sorted(_TOKENIZERS)))
def test_the_fused_tokenizer_gives_the_ids_of_the_rules(texts, setting):
    tokenizer = _TOKENIZERS[setting]
    batch = tf.constant(texts)
    assert tokenizer.tokenize(batch).to_list() == tokenizer.tokenize_by_rules(batch).to_list()


@settings(max_examples=20, deadline=None, database=None)
@given(st.lists(st.binary(max_size=30), min_size=1, max_size=4))
def test_the_fused_tokenizer_gives_the_ids_of_the_rules_on_any_bytes(data):
    tokenizer = _TOKENIZERS["uncased"]
    assert tokenizer.tokenize(tf.constant(data)).to_list() == tokenizer.tokenize_by_rules(tf.constant(data)).to_list()


def test_long_words_are_unknown_by_characters_on_both_paths():
    tokenizer = _TOKENIZERS["uncased"]
    texts = tf.constant(["x" * 100, "x" * 101, "é" * 100, "é" * 101, "ab " + "中" * 120])
    fused = tokenizer.tokenize(texts).to_list()
    assert fused == tokenizer.tokenize_by_rules(texts).to_list()
    assert fused[0] != [1] and fused[1] == [1] and fused[2] != [1] and fused[3] == [1]


def test_the_fused_op_does_the_work_on_ascii_and_on_text_without_unknown_pieces(monkeypatch):
    tokenizer = WordPieceTokenizer(str(FIXTURES / "vocab.txt"))
    # The fallback marks the rows it tokenizes (it is traced into a graph, so it must give tensors, not raise).
    monkeypatch.setattr(tokenizer, "tokenize_by_rules", lambda texts: WordPieceTokenizer.tokenize_by_rules(
        tokenizer, texts) + 10_000)
    ids = tokenizer(tf.constant(["The foxes, 3$!", "Héllo Wörld", "中文 \U0001e5ff"])).to_list()
    assert [max(row) >= 10_000 for row in ids] == [False, False, True]
    graph = tf.function(tokenizer.tokenize, input_signature=[tf.TensorSpec([None], tf.string)])
    assert graph(tf.constant(["The foxes, 3$!", "中文 \U0001e5ff"])).to_list() == [ids[0], ids[2]]


@pytest.mark.perf
def test_a_graph_keeps_the_non_ascii_path_as_one_uninlined_call():
    """Inlined, the non-ASCII path's ops would all be visited (dead) on every ASCII batch (see `tokenize`)."""
    graph = tf.function(_TOKENIZERS["uncased"].tokenize, input_signature=[tf.TensorSpec([None], tf.string)])
    definition = graph.get_concrete_function().graph.as_graph_def()
    functions = {function.signature.name: function for function in definition.library.function}
    (cond,) = [node for node in definition.node if node.op in ("If", "StatelessIf")]
    fallback = functions[cond.attr["else_branch"].func.name]
    ops = [node for node in fallback.node_def if node.op not in ("Identity", "NoOp")]
    assert [node.op for node in ops] in (["PartitionedCall"], ["StatefulPartitionedCall"])
    assert functions[ops[0].attr["f"].func.name].attr["_noinline"].b


def test_vocabulary_entries_holding_whitespace_are_never_matched_across_a_space():
    """keras-hub's vocabulary learner keeps entries such as "## ": the fused op must not match them."""
    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "of", "the", "## ", "##f", "o", " the", "##\u00a0of"]
    tokenizer = WordPieceTokenizer(vocabulary)
    texts = tf.constant(["of the of", "the\u00a0of  the", "o f"])
    assert tokenizer(texts).to_list() == tokenizer.tokenize_by_rules(texts).to_list() == [[5, 6, 5], [6, 5, 6],
                                                                                        [9, 1]]


def test_a_tokenizer_saved_as_keras_hub_s_subclass_loads(tmp_path):
    """Before it was our own layer the tokenizer was keras-hub's `ElectraTokenizer` subclassed: its config (in
    `.keras` files of that time) and its vocabulary asset still load, U+2028 entries at their ids."""
    config = {"name": "electra_tokenizer", "trainable": True, "dtype": {
        "module": "keras", "class_name": "DTypePolicy", "config": {"name": "int32"}, "registered_name": None},
        "config_file": "tokenizer.json", "vocabulary": None, "sequence_length": None, "lowercase": True,
        "strip_accents": True, "split": True, "suffix_indicator": "##", "oov_token": "[UNK]", "special_tokens": None,
        "special_tokens_in_strings": False}
    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "\u2028", "the", "##\u2028", "fox"]
    (tmp_path / "vocabulary.txt").write_text("".join(f"{token}\n" for token in vocabulary), encoding="utf-8")
    tokenizer = WordPieceTokenizer.from_config(config)
    tokenizer.load_assets(str(tmp_path))
    assert tokenizer.get_vocabulary() == vocabulary and tokenizer.lowercase and tokenizer.strip_accents
    assert tokenizer(tf.constant(["The\u2028fox"])).to_list() == [[6, 8]]
    tokenizer.save_assets(str(tmp_path))
    assert (tmp_path / "vocabulary.txt").read_text(encoding="utf-8").split("\n")[:-1] == vocabulary
    with pytest.raises(ValueError, match="split can only be True"):
        WordPieceTokenizer(vocabulary, split=False)
