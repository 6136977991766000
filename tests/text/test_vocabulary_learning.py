"""Vocabulary learning for any script: words counted as the tokenizer sees them, every character above a count
threshold kept (no 1,000-character alphabet), no whitespace token, and the [UNK] rate the tool reports."""

import json
from pathlib import Path

from electra_tf.text.tokenizer import WordPieceTokenizer
from electra_tf.text.vocabulary import is_unreachable, load_vocabulary
from electra_tf.text.vocabulary_learning import build_vocabulary, learn_vocabulary, unknown_token_rate

CHINESE = Path(__file__).parents[1] / "fixtures" / "chinese" / "corpus.txt"


def _lines(path):
    return [line for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def test_every_word_of_the_corpus_is_tokenized_without_unk_by_its_own_vocabulary(tmp_path):
    # Full-width forms, ligatures, ß, accents, Hangul, emoji, zero-width and exotic spaces: the tokenizer applies
    # no NFKC fold, so neither may the learner (tensorflow-text's folded `，` to `,`, `ｔｈｅ` to `the`).
    texts = ["Ｔｈｅ ＡＢＣ，１９９８年！", "ﬁne straße café naïve Ångström", "한국어 텍스트 😀 x\u200by",
             "a\u2009b\u00a0c\u3000d\u2028e\x0bf\x85g", "e\u0301tude 北京，上海。"] * 3
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(texts) + "\n", encoding="utf-8")
    vocabulary = build_vocabulary([str(corpus)], 500)
    assert not [token for token in vocabulary if is_unreachable(token)]  # no "## " nor "##\xa0"
    assert {"，", "！", "１", "ﬁ", "ß", "😀"} <= set(vocabulary)
    assert unknown_token_rate(WordPieceTokenizer(vocabulary), texts) == 0.0


def test_every_character_seen_often_enough_gets_a_token_however_many_there_are():
    hanzi = [chr(0x4E00 + i) for i in range(1500)]
    counts = {**{character: 2 for character in hanzi}, "中文": 3, "x": 1}
    vocabulary = learn_vocabulary(counts, 5000, min_char_count=2)
    assert set(hanzi) <= set(vocabulary) and "x" not in vocabulary  # not only the 1,000 most frequent
    assert "##文" in vocabulary and "##中" not in vocabulary  # a ## form only for a character inside a word
    small = learn_vocabulary(counts, 1000, min_char_count=2)
    assert len(small) <= 1000 and {"中", "文", "##文"} <= set(small)  # the most frequent fit


def test_a_vocabulary_learned_on_the_chinese_sample_leaves_as_few_unk_as_bert_chinese(bert_chinese_vocab):
    lines = _lines(CHINESE)
    vocabulary = build_vocabulary([str(CHINESE)], 21128)
    learned = unknown_token_rate(WordPieceTokenizer(vocabulary), lines)
    reference = unknown_token_rate(WordPieceTokenizer(bert_chinese_vocab), lines)
    assert {"，", "。", "！", "？", "；", "“", "”", "１"} <= set(vocabulary)
    assert learned <= reference + 0.005, (learned, reference)
    assert not [token for token in vocabulary if token.startswith("##") and "\u4e00" <= token[2:] <= "\u9fff"]


def test_the_tool_reports_and_records_the_unk_rate_and_warns_when_high(tmp_path, run_tool):
    output = tmp_path / "zh" / "vocab.txt"
    code, out, err = run_tool("build_vocab", f"--input_files={CHINESE}", f"--output={output}", "--vocab_size=21128",
                              "--min_char_count=3", "--held_out_every=0")  # measured on the learned text
    assert code == 0, err[-2000:]
    report = json.loads((tmp_path / "zh" / "vocab_report.json").read_text(encoding="utf-8"))
    rate = unknown_token_rate(WordPieceTokenizer(str(output)), _lines(CHINESE))
    assert report["unknown_token_rate"] == rate > 0.02 and report["min_char_count"] == 3
    assert report["tokens"] == len(load_vocabulary(str(output)))
    assert f"[UNK] rate: {rate:.2%} of the tokens of the corpus's first " in out
    assert ("warning: more than 2% of the tokens are [UNK]: lower --min_char_count (characters seen fewer times "
            "have no token), raise --vocab_size, or check --lowercase") in out
    assert "lower --min_char_count for rarer characters" in out  # the note names the cause


def test_a_min_char_count_below_one_is_refused_before_any_work(tmp_path, run_tool, refused):
    refused(run_tool("build_vocab", f"--input_files={CHINESE}", f"--output={tmp_path}/v.txt", "--min_char_count=0"),
            "min_char_count must be at least 1, got 0")
    assert not list(tmp_path.iterdir())
