"""Chinese lines longer than an example are split at their sentence ends (。！？；…, closing quotes after them)."""

import random

import pytest

from electra_tf.data.packing import DocumentPacker
from electra_tf.data.pretraining_data import tokenized_documents
from electra_tf.data.sentences import split_sentences
from electra_tf.text.tokenizer import WordPieceTokenizer
from electra_tf.text.vocabulary import save_vocabulary

SENTENCES = ["今天早上下了一场大雨。", "街上的行人都撑着伞，走向车站！", "你带伞了吗？", "我忘了带……",
             "只好在书店里等雨停。", "店主说：“雨很快就会停的。”", "我们一边看书一边聊天；", "时间过得很快。",
             "雨停了吗?", "停了！", "我们走吧（天已经黑了）。"]
LONG_LINE = "".join(SENTENCES) * 4
SENTENCE_END_CHARACTERS = set("。！？；…”）?")


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("vocab") / "vocab.txt")
    save_vocabulary(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + sorted(set(LONG_LINE)), path)
    return WordPieceTokenizer(path)


@pytest.mark.parametrize("text, sentences", [
    ("".join(SENTENCES), SENTENCES),
    ("他说：“好。”然后走了！『真的？』她问。", ["他说：“好。”", "然后走了！", "『真的？』", "她问。"]),
    ("等等……再说吧", ["等等……", "再说吧"]),
    ("一。 二。\n三", ["一。", "二。", "三"]),
    ("中文 3.14 和 e.g. 不是句末", ["中文 3.14 和 e.g. 不是句末"]),
])
def test_cjk_sentences_end_at_full_stops_with_their_closing_quotes(text, sentences):
    assert split_sentences(text) == sentences


@pytest.mark.parametrize("text", ["Wait!really? no; fine… ok", "It is 3.14. and so on", "Hello！world"])
def test_english_is_split_as_before(text):
    # Half-width !?;… end a sentence only after a CJK ideograph; English keeps its rule (a space and a capital).
    # A full-width mark ends one anywhere: it is CJK punctuation.
    expected = {"Hello！world": ["Hello！", "world"]}.get(text, [text])
    assert split_sentences(text) == expected


def test_the_sentences_of_a_chinese_line_have_the_line_s_ids(tokenizer):
    ((_, (line,)),) = tokenized_documents([(0, [LONG_LINE])], tokenizer, split_longer_than=40)
    assert len(line) == 4 * len(SENTENCES)
    assert [t for sentence in line for t in sentence] == tokenizer.tokenize(LONG_LINE).numpy().tolist()


def _segment_texts(tokenizer, examples):
    """The text of every segment of the examples (A, then B if any)."""
    vocabulary = tokenizer.get_vocabulary()
    texts = []
    for example in examples:
        ids = example.input_ids[1:example.num_tokens - 1]
        sep = ids.index(tokenizer.sep_token_id) if tokenizer.sep_token_id in ids else len(ids)
        texts += ["".join(vocabulary[t] for t in segment) for segment in (ids[:sep], ids[sep + 1:]) if segment]
    return texts


@pytest.mark.parametrize("max_length", [16, 24, 40])
def test_a_long_chinese_line_packed_with_long_lines_sentences_ends_every_example_at_a_sentence_end(
        tokenizer, max_length):
    ((_, document),) = tokenized_documents([(0, [LONG_LINE])], tokenizer, split_longer_than=max_length - 3)
    packer = DocumentPacker(max_length, tokenizer.cls_token_id, tokenizer.sep_token_id, random.Random(0),
                            long_lines="sentences")
    texts = _segment_texts(tokenizer, packer.pack(document))
    assert sorted("".join(texts)) == sorted(LONG_LINE)  # nothing dropped (A and B may swap sentences)
    if max(map(len, SENTENCES)) <= max_length - 3:  # every sentence fits: every segment ends at a sentence end
        assert all(text[-1] in SENTENCE_END_CHARACTERS for text in texts), texts
    else:
        # A sentence longer than an example is cut (once per example it spans), not dropped.
        assert sum(text[-1] not in SENTENCE_END_CHARACTERS for text in texts) == 4
    assert packer.counts.written == packer.counts.read


def test_split_packing_fills_every_example_and_cuts_the_sentence_that_overflows(tokenizer):
    """The default mode: a sentence overflowing an example goes on in the next, so examples are full."""
    ((_, document),) = tokenized_documents([(0, [LONG_LINE])], tokenizer, split_longer_than=37)
    packer = DocumentPacker(40, tokenizer.cls_token_id, tokenizer.sep_token_id, random.Random(0))
    examples = packer.pack(document)
    assert sorted("".join(_segment_texts(tokenizer, examples))) == sorted(LONG_LINE)
    assert all(e.num_text_tokens == 37 for e in examples[:-1])
