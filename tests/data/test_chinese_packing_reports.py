"""What a shard build and a vocabulary build tell about Chinese text: sentence-whole packing by default, the share of
examples cut mid-sentence, the characters a vocabulary lacks, the words whole-word masking masks as one."""

import json
import pathlib

import pytest

from electra_tf.data.pretraining_data import (
    MANIFEST,
    build_pretraining_shards,
    corpus_is_cjk,
    mid_sentence_rate,
)
from electra_tf.text.vocabulary import save_vocabulary
from electra_tf.text.vocabulary_learning import build_vocabulary

CHINESE = pathlib.Path(__file__).parents[1] / "fixtures" / "chinese"
CORPUS = str(CHINESE / "corpus.txt")
# Marks the BERT-Chinese vocabulary lacks (its [UNK] on news text is mostly these).
QUOTES_DASHES_ELLIPSES = ["“", "”", "—", "…"]


@pytest.fixture(scope="module")
def sample_vocab(tmp_path_factory):
    """A vocabulary learned on the whole sample (every character has its token)."""
    path = tmp_path_factory.mktemp("zh") / "vocab.txt"
    save_vocabulary(build_vocabulary([CORPUS], 21128), str(path))
    return str(path)


def manifest(folder):
    return json.loads((folder / MANIFEST).read_text(encoding="utf-8"))


def test_chinese_packs_whole_sentences_by_default(sample_vocab, tmp_path):
    assert corpus_is_cjk([CORPUS]) and corpus_is_cjk([CORPUS], language="en") is False
    rates = {}
    for long_lines in (None, "split"):
        folder = tmp_path / str(long_lines)
        shards = build_pretraining_shards([CORPUS], sample_vocab, str(folder), max_seq_length=64, num_shards=2,
                                          long_lines=long_lines)
        written = manifest(folder)
        assert written["mid_sentence_rate"] == mid_sentence_rate(shards)
        rates[written["settings"]["long_lines"]] = written["mid_sentence_rate"]
    # The sample's long lines hold several sentences: cut where an example is full, most examples end inside one
    # (78 % on the sample); packed as whole sentences, only a sentence longer than an example is cut.
    assert set(rates) == {"sentences", "split"}
    assert rates["split"] > 0.5 and rates["sentences"] < 0.05


def test_other_text_keeps_split_unless_the_language_is_cjk(fixture_vocab, tmp_path):
    english = tmp_path / "english.txt"
    english.write_text(" ".join(["The cat sat on the mat. It was warm."] * 30) + "\n", encoding="utf-8")
    for language, expected in ((None, "split"), ("zh", "sentences"), ("zh-Hant", "sentences"), ("en", "split")):
        folder = tmp_path / f"out_{language}"
        build_pretraining_shards([str(english)], fixture_vocab, str(folder), max_seq_length=32, language=language)
        assert manifest(folder)["settings"]["long_lines"] == expected, language


def test_shards_name_the_characters_the_vocabulary_lacks(sample_vocab, tmp_path, run_tool):
    vocabulary = [token for token in open(sample_vocab, encoding="utf-8").read().split("\n")[:-1]
                  if token not in QUOTES_DASHES_ELLIPSES]
    lacking = tmp_path / "vocab.txt"
    save_vocabulary(vocabulary, str(lacking))
    code, out, err = run_tool("build_pretraining_data", f"--input_files={CORPUS}", f"--vocab_file={lacking}",
                              f"--output_dir={tmp_path / 'data'}", "--max_seq_length=64", "--num_shards=2")
    assert code == 0, err
    text = open(CORPUS, encoding="utf-8").read()
    expected = {mark: text.count(mark) for mark in QUOTES_DASHES_ELLIPSES}  # each a word of its own
    totals = manifest(tmp_path / "data")["totals"]
    assert totals["unknown_words"] == expected and totals["tokens_unknown"] == sum(expected.values())
    assert f"most often unknown: “ ({expected['“']}), ” ({expected['”']}), " in out
    assert "examples ending mid-sentence: " in out and "(--long_lines=sentences)" in out


def test_whole_word_shards_count_the_words_masked_as_one(sample_vocab, tmp_path, run_tool):
    pytest.importorskip("jieba")
    code, out, err = run_tool("build_pretraining_data", f"--input_files={CORPUS}", f"--vocab_file={sample_vocab}",
                              f"--output_dir={tmp_path / 'data'}", "--max_seq_length=64", "--whole_word_masking")
    assert code == 0, err
    words = manifest(tmp_path / "data")["totals"]["whole_words"]
    # jieba makes many two-character words of the sample, each masked whole; every token is in one word.
    assert 0.3 < words["words_of_several_tokens"] / words["words"] < 0.7
    assert words["tokens_in_words_of_several_tokens"] >= 2 * words["words_of_several_tokens"]
    assert "masking unit: the word (jieba for CJK text); " in out


def test_the_vocabulary_tool_measures_unknowns_on_held_out_lines(tmp_path, run_tool):
    code, out, err = run_tool("build_vocab", f"--input_files={CORPUS}", "--vocab_size=21128",
                              f"--output={tmp_path / 'vocab.txt'}")
    assert code == 0, err
    report = json.loads((tmp_path / "vocab_report.json").read_text(encoding="utf-8"))
    assert report["unknown_token_rate_held_out_every"] == 10 and report["unknown_token_rate"] > 0
    # Characters seen only in the held-out lines have no token: they are the unknown words reported.
    vocabulary = set((tmp_path / "vocab.txt").read_text(encoding="utf-8").split("\n"))
    assert report["unknown_words"] and not set(report["unknown_words"]) & vocabulary
    assert "held-out lines" in out and "not learned from" in out and "most often unknown: " in out
    code, out, err = run_tool("build_vocab", f"--input_files={CORPUS}", "--vocab_size=21128", "--held_out_every=0",
                              f"--output={tmp_path / 'all.txt'}")
    assert code == 0 and "[UNK] rate: 0.00%" in out and "learned from: a flattering figure" in out
