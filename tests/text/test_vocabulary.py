"""vocab.txt files as editors save them (a byte-order mark, CRLF line endings, spaces around tokens), the
BERT-Chinese vocabulary (U+2028 tokens) read as transformers reads it, and tokenizer files whose casing does not fit
their vocabulary."""

import hashlib
import json
import logging
import shutil

import pytest
import tensorflow as tf

from electra_tf.checkpoints.tokenizer_files import tokenizer_arguments
from electra_tf.data.pretraining_data import MANIFEST, build_pretraining_shards
from electra_tf.checkpoints.tokenizer_files import load_tokenizer
from electra_tf.text.tokenizer import WordPieceTokenizer
from electra_tf.text.vocabulary import load_vocabulary, save_vocabulary, vocabulary_hash

TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox", "##es", "."]


def _variants(tmp_path):
    clean = "".join(token + "\n" for token in TOKENS)
    files = {"clean": clean.encode(), "bom": b"\xef\xbb\xbf" + clean.encode(),
             "crlf": clean.replace("\n", "\r\n").encode(),
             "bom_crlf_no_final_newline": b"\xef\xbb\xbf" + "\r\n".join(TOKENS).encode()}
    paths = {}
    for name, content in files.items():
        paths[name] = tmp_path / f"{name}.txt"
        paths[name].write_bytes(content)
    return paths


def test_a_bom_or_crlf_copy_is_the_same_vocabulary_with_the_same_hash(tmp_path, caplog):
    paths = _variants(tmp_path)
    with caplog.at_level(logging.WARNING, logger="electra_tf"):
        for name, path in paths.items():
            assert load_vocabulary(str(path)) == TOKENS, name
            assert vocabulary_hash(str(path)) == vocabulary_hash(TOKENS), name
    assert not caplog.records  # nothing to warn about
    tokenizer = WordPieceTokenizer(str(paths["bom_crlf_no_final_newline"]))
    assert tokenizer.tokenize("The foxes.").numpy().tolist() == [5, 6, 7, 8]


def test_spaces_around_tokens_are_stripped_with_one_warning(tmp_path, caplog):
    path = tmp_path / "vocab.txt"
    path.write_text("".join(f"{token} \n" if token in ("the", "fox") else token + "\n" for token in TOKENS))
    with caplog.at_level(logging.WARNING, logger="electra_tf"):
        assert load_vocabulary(str(path)) == TOKENS
    (record,) = caplog.records
    assert record.getMessage() == (f"{path}: 2 token(s) had spaces around them, which the tokenizer could never "
                                   "match; stripped (line 6: 'the ')")
    assert WordPieceTokenizer(str(path)).tokenize("the fox").numpy().tolist() == [5, 6]  # not [UNK]s


def test_a_padded_token_that_would_repeat_another_keeps_its_spaces_and_its_id(tmp_path, caplog):
    path = tmp_path / "vocab.txt"
    path.write_text("".join(token + "\n" for token in TOKENS) + "the \n\t\n\n")  # and a blank line
    with caplog.at_level(logging.WARNING, logger="electra_tf"):
        assert load_vocabulary(str(path)) == TOKENS + ["the ", "\t", ""]
        load_vocabulary(str(path))  # read again (as tools do): no new warning
    (record,) = caplog.records
    assert record.getMessage() == (f"{path}: 3 token(s) the tokenizer never produces (empty, or holding whitespace "
                                   "or a control character) kept at their ids (line 10: 'the ')")
    assert WordPieceTokenizer(str(path)).tokenize("the  fox\t").numpy().tolist() == [5, 6]


def test_shards_accept_a_crlf_copy_of_their_vocabulary(tmp_path):
    paths = _variants(tmp_path)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("The foxes.\nThe fox.\n")
    out = tmp_path / "data"
    build_pretraining_shards([str(corpus)], str(paths["clean"]), str(out), max_seq_length=8)
    manifest = json.loads((out / MANIFEST).read_text())
    # What electra_tf/pretraining/run.py compares (`check_shard_vocabulary`): the manifest's hash and the vocabulary's.
    assert manifest["settings"]["vocab_sha256"] == vocabulary_hash(str(paths["crlf"]))
    shutil.copyfile(paths["crlf"], paths["clean"])  # the same build, resumed with the CRLF copy: same settings
    build_pretraining_shards([str(corpus)], str(paths["clean"]), str(out), max_seq_length=8)


@pytest.mark.parametrize("tokens, warned", [(TOKENS, True), (TOKENS + ["The"], False)])
def test_a_cased_tokenizer_file_on_an_uncased_vocabulary_warns_once(tmp_path, caplog, tokens, warned):
    vocab = {token: i for i, token in enumerate(tokens)}
    tokenizer_json = {"model": {"type": "WordPiece", "vocab": vocab, "continuing_subword_prefix": "##"},
                      "normalizer": {"type": "BertNormalizer", "lowercase": False, "strip_accents": None}}
    (tmp_path / "tokenizer.json").write_text(json.dumps(tokenizer_json))
    with caplog.at_level(logging.WARNING, logger="electra_tf"):
        vocabulary, lowercase, _ = tokenizer_arguments(str(tmp_path))
        tokenizer_arguments(str(tmp_path / "tokenizer.json"))
    assert vocabulary == tokens and lowercase is False
    messages = [record.getMessage() for record in caplog.records]
    assert len(messages) == (2 if warned else 0)  # one line per read
    if warned:
        assert messages[0] == (f"{tmp_path}: the tokenizer files say lowercase/do_lower_case false, but the vocabulary "
                               "has no capital letters (an uncased one): capitalised words will be [UNK]; pass "
                               "lowercase=True (--lowercase) unless that is meant")


def test_the_bert_chinese_vocabulary_keeps_its_line_separator_tokens_at_their_ids(bert_chinese_vocab, tmp_path,
                                                                                   caplog):
    original = tmp_path / "original" / "vocab.txt"  # a path of its own: its one warning is not given yet
    original.parent.mkdir()
    shutil.copyfile(bert_chinese_vocab, original)
    with caplog.at_level(logging.WARNING, logger="electra_tf"):
        vocabulary = load_vocabulary(str(original))
        WordPieceTokenizer(str(original))
    assert len(vocabulary) == 21128 and vocabulary[100:104] == ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert vocabulary[343] == "\u2028" and vocabulary[13502] == "##\u2028" and vocabulary[13503] == "##一"
    assert [record.getMessage() for record in caplog.records] == [
        f"{original}: 2 token(s) the tokenizer never produces (empty, or holding whitespace or a control "
        "character) kept at their ids (line 344: '\\u2028')"]
    copy = tmp_path / "vocab.txt"
    save_vocabulary(vocabulary, str(copy))
    assert copy.read_bytes() == original.read_bytes()
    assert vocabulary_hash(str(original)) == hashlib.sha256(copy.read_bytes()).hexdigest()


def test_chinese_text_gets_the_ids_of_its_characters_with_the_bert_chinese_vocabulary(bert_chinese_vocab):
    vocabulary = load_vocabulary(bert_chinese_vocab)
    ids = {token: index for index, token in enumerate(vocabulary)}
    tokenizer = WordPieceTokenizer(bert_chinese_vocab)
    texts = ["江泽民在北京。", "江泽民在北京会见了The Year 1998年的朋友！", "北京\u2028上海", "the year 1998."]
    expected = [[ids[c] for c in "江泽民在北京。"],
                [*(ids[c] for c in "江泽民在北京会见了"), ids["the"], ids["year"], ids["1998"],
                 *(ids[c] for c in "年的朋友！")],
                [ids[c] for c in "北京上海"],
                [ids["the"], ids["year"], ids["1998"], ids["."]]]
    assert tokenizer.tokenize(texts).to_list() == expected  # a mixed batch: the ASCII row on its own path
    assert [tokenizer.tokenize(text).numpy().tolist() for text in texts] == expected
    assert tokenizer.tokenize_by_rules(tf.constant(texts)).to_list() == expected


def test_a_tokenizer_saved_in_a_keras_file_keeps_the_line_separator_tokens(bert_chinese_vocab, tmp_path):
    tokenizer = WordPieceTokenizer(bert_chinese_vocab)
    tokenizer.save_assets(str(tmp_path))  # what a .keras archive or a keras-hub preset holds
    restored = WordPieceTokenizer()
    restored.load_assets(str(tmp_path))
    assert restored.get_vocabulary() == tokenizer.get_vocabulary()


def test_a_tokenizer_json_with_line_separator_tokens_reads_as_its_vocab_txt(bert_chinese_vocab, tmp_path):
    vocabulary = load_vocabulary(bert_chinese_vocab)
    tokenizer_json = {"model": {"type": "WordPiece", "vocab": {token: i for i, token in enumerate(vocabulary)}},
                      "normalizer": {"type": "BertNormalizer", "lowercase": True, "strip_accents": None}}
    (tmp_path / "tokenizer.json").write_text(json.dumps(tokenizer_json), encoding="utf-8")
    assert load_tokenizer(str(tmp_path)).get_vocabulary() == vocabulary


def test_a_token_holding_a_line_break_is_refused_before_it_is_written(tmp_path):
    with pytest.raises(ValueError, match=r"v.txt: token\(s\) holding a line break at id\(s\) \[5\] \(e.g. 'a\\nb'\)"):
        save_vocabulary(TOKENS[:5] + ["a\nb"], str(tmp_path / "v.txt"))
    assert not (tmp_path / "v.txt").exists()
