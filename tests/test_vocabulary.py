"""vocab.txt files as editors save them (a byte-order mark, CRLF line endings, spaces around tokens), and
tokenizer files whose casing does not fit their vocabulary."""

import json
import logging
import shutil

import pytest

from electra_tf.checkpoints.tokenizer_files import tokenizer_arguments
from electra_tf.data.pretraining_data import MANIFEST, build_pretraining_shards
from electra_tf.tokenization import ElectraTokenizer
from electra_tf.vocabulary import load_vocabulary, vocabulary_hash

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
    tokenizer = ElectraTokenizer(str(paths["bom_crlf_no_final_newline"]))
    assert tokenizer("The foxes.").numpy().tolist() == [5, 6, 7, 8]


def test_spaces_around_tokens_are_stripped_with_one_warning(tmp_path, caplog):
    path = tmp_path / "vocab.txt"
    path.write_text("".join(f"{token} \n" if token in ("the", "fox") else token + "\n" for token in TOKENS))
    with caplog.at_level(logging.WARNING, logger="electra_tf"):
        assert load_vocabulary(str(path)) == TOKENS
    (record,) = caplog.records
    assert record.getMessage() == (f"{path}: 2 token(s) had spaces around them, which the tokenizer could never "
                                   "match; stripped (line 6: 'the ')")
    assert ElectraTokenizer(str(path))("the fox").numpy().tolist() == [5, 6]  # not [UNK]s
    path.write_text("".join(token + "\n" for token in TOKENS) + "the \n")
    with pytest.raises(ValueError, match=r"1 duplicate token\(s\), e.g. \['the'\]"):
        load_vocabulary(str(path))


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
