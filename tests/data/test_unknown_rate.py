"""electra-build-pretraining-data prints and records the share of [UNK] among the tokens it writes, with a warning
above 2 %; --whole_word_masking without jieba on Chinese text stops it in one line."""

import json
import sys

import numpy as np
import pytest

from electra_tf.data.tfrecord_dataset import pretraining_dataset
from electra_tf.data.pretraining_data import MANIFEST
from electra_tf.text.vocabulary import save_vocabulary

TEXT = ("江泽民主席在北京会见了美国总统克林顿。今天早上下了一场大雨，街上的行人都撑着伞。"
        "我们一边看书一边聊天，时间过得很快。")
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


@pytest.fixture()
def corpus(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text(f"{TEXT}\n\n{TEXT * 3}\n", encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("missing, printed", [
    ("", "[UNK]: 0.00% of the tokens written"),
    ("伞", "[UNK]: 1.72% of the tokens written; most often unknown: 伞 (4)"),  # 1 of the text's 58 characters
    ("，。", "warning: [UNK] is 8.62% of the tokens written (above 2%); most often unknown: 。 (12), ， (8): "
           "--vocab_file does not cover this text; learn one on it (electra-build-vocab) or check "
           "--lowercase/--strip_accents"),
])
def test_the_unknown_rate_of_the_tokens_written_is_printed_and_recorded(corpus, tmp_path, run_tool, missing,
                                                                          printed):
    vocab = tmp_path / "vocab.txt"
    save_vocabulary(SPECIAL + sorted(set(TEXT) - set(missing)), str(vocab))
    code, out, err = run_tool("build_pretraining_data", f"--input_files={corpus}", f"--vocab_file={vocab}",
                              f"--output_dir={tmp_path / 'out'}", "--max_seq_length=32", "--num_shards=2")
    assert code in (0, None), err[-2000:]
    assert printed in out.splitlines()
    manifest = json.loads((tmp_path / "out" / MANIFEST).read_text())
    ids = np.concatenate([batch["input_ids"].numpy().ravel() for batch in pretraining_dataset(
        str(tmp_path / "out"), batch_size=1, seq_length=32, training=False)])
    assert manifest["totals"]["tokens_unknown"] == int(np.sum(ids == 1)) == sum(TEXT.count(c) for c in missing) * 4
    assert manifest["totals"]["unknown_words"] == {c: TEXT.count(c) * 4 for c in missing}  # the words that became [UNK]
    assert manifest["unknown_token_rate"] == manifest["totals"]["tokens_unknown"] / manifest["totals"][
        "tokens_written"]


def test_whole_word_masking_without_jieba_on_chinese_text_is_one_line(corpus, tmp_path, run_tool, refused,
                                                                      monkeypatch):
    vocab = tmp_path / "vocab.txt"
    save_vocabulary(SPECIAL + sorted(set(TEXT)), str(vocab))
    monkeypatch.setitem(sys.modules, "jieba", None)  # `import jieba` raises ImportError
    result = run_tool("build_pretraining_data", f"--input_files={corpus}", f"--vocab_file={vocab}",
                      f"--output_dir={tmp_path / 'out'}", "--whole_word_masking")
    refused(result, "--whole_word_masking: the corpus holds CJK text, whose words need the jieba word segmenter: "
                    'pip install jieba, or pip install ".[chinese]" in an electra_tf checkout\n')
    assert result[2].count("\n") == 1 and not (tmp_path / "out").exists()
