"""The one in-graph featurizer against independent references: the tokenizer, keras-hub's packer, SQuAD's rules."""

import json
import re
import sys
from pathlib import Path

import keras_hub
import numpy as np
import pytest
import tensorflow as tf

from electra_tf.text import featurize
from electra_tf.data.tasks import squad, tagging
from electra_tf.text.tokenizer import WordPieceTokenizer

FIXTURES = Path(__file__).parents[1] / "fixtures" / "tokenizer"
FIXTURE = json.loads((FIXTURES / "bert_tokenizer_fast.json").read_text(encoding="utf-8"))
# The parity texts, and what the data readers and serving must also survive.
EXTRA = ["", "   ", "\t\n", "a\x1cb c\x0bd\x85e", "ctrl\x00only \x00 here", "x" * 250, "é" * 120 + " ok",
         "👍🏽👍🏽 emoji-only 🤖", "中文字符測試", "  leading and trailing  "]
TEXTS = FIXTURE["texts"] + EXTRA


@pytest.fixture(scope="module")
def tokenizer():
    return WordPieceTokenizer(str(FIXTURES / "vocab.txt"))


def reference_spans(texts, tokenizer):
    """Per text, (ids, char starts, char ends) of its pieces, by the original's rule written plainly: a word's
    pieces spell its characters in turn when they add up (one [UNK] taking what is left), else each piece
    gets the whole word."""
    vocabulary, unknown = tokenizer.get_vocabulary(), tokenizer.token_to_id("[UNK]")
    spans = [[m.span() for m in re.finditer(r"\S+", text)] for text in texts]
    words = [text[a:b] for text, row in zip(texts, spans) for a, b in row]
    word_ids = iter(tokenizer(tf.constant(words, tf.string)).to_list() if words else [])
    result = []
    for row in spans:
        ids, starts, ends = [], [], []
        for begin, end in row:
            pieces = next(word_ids)
            lengths = [len(vocabulary[i][2:] if vocabulary[i].startswith("##") else vocabulary[i]) for i in pieces]
            known = sum(n for n, i in zip(lengths, pieces) if i != unknown)
            unknowns = pieces.count(unknown)
            if (unknowns == 0 and known == end - begin) or (unknowns == 1 and known < end - begin):
                position = begin
                for n, i in zip(lengths, pieces):
                    starts.append(position)
                    position += (end - begin - known) if i == unknown else n
                    ends.append(position)
            else:
                starts += [begin] * len(pieces)
                ends += [end] * len(pieces)
            ids += pieces
        result.append((ids, starts, ends))
    return result


@pytest.mark.parametrize("setting", sorted(FIXTURE["settings"]))
def test_word_pieces_give_the_tokenizers_ids_and_squads_character_spans(setting):
    tokenizer = WordPieceTokenizer(str(FIXTURES / "vocab.txt"), **FIXTURE["settings"][setting])
    texts = tf.constant(TEXTS)
    pieces = featurize.word_pieces(tokenizer, featurize.split_words(texts, featurize.BERT_WHITESPACE))
    assert pieces.ids.to_list() == tokenizer(texts).to_list()
    # Cut where Python's str.split() cuts, ids and spans are `squad.py`'s (also on the 100,000-char text).
    texts = TEXTS + ["word " * 20_000]
    pieces = featurize.word_pieces(tokenizer, featurize.split_words(tf.constant(texts)))
    expected = reference_spans(texts, tokenizer)
    for text, (ids, start, end), got_ids, got_start, got_end in zip(
            texts, expected, pieces.ids.to_list(), pieces.start.to_list(), pieces.end.to_list()):
        assert (got_ids, got_start, got_end) == (ids, start, end), text[:80]


def test_character_offsets_index_the_python_string():
    words = featurize.split_words(tf.constant(["  Ünï 👍🏽x\u3000中 b\u2028c "]))
    text = "  Ünï 👍🏽x\u3000中 b\u2028c "
    spans = list(zip(words.start.to_list()[0], words.end.to_list()[0]))
    assert [text[s:e] for s, e in spans] == text.split()
    assert [w.decode() for w in words.words.to_list()[0]] == text.split()


def test_python_whitespace_is_str_isspace():
    characters = [chr(c) for c in range(0x10000) if not 0xD800 <= c < 0xE000]
    words = featurize.split_words(tf.constant([f"a{c}b" for c in characters])).words.row_lengths().numpy()
    assert [c for c, n in zip(characters, words) if n != len(f"a{c}b".split())] == []


@pytest.mark.parametrize("sequence_length", [5, 16, 128])
def test_encode_packs_as_keras_hubs_packer(tokenizer, sequence_length):
    texts, pairs = tf.constant(TEXTS), tf.constant(TEXTS[7:] + TEXTS[:7])
    for second in (None, pairs):
        packer = keras_hub.layers.MultiSegmentPacker(
            sequence_length, start_value=tokenizer.cls_token_id, end_value=tokenizer.sep_token_id,
            pad_value=tokenizer.pad_token_id, truncate="waterfall" if second is None else "round_robin")
        segments = (tokenizer(texts),) if second is None else (tokenizer(texts), tokenizer(second))
        token_ids, segment_ids = packer(segments)
        got = featurize.encode(tokenizer, sequence_length, texts, second)
        np.testing.assert_array_equal(got["input_ids"].numpy(), token_ids.numpy())
        np.testing.assert_array_equal(got["token_type_ids"].numpy(), segment_ids.numpy())
        np.testing.assert_array_equal(got["attention_mask"].numpy(), token_ids.numpy() != tokenizer.pad_token_id)
        assert tokenizer.encode(texts, second, sequence_length=sequence_length)["input_ids"].numpy().tolist() == \
            got["input_ids"].numpy().tolist()


def test_length_aware_padding_fits_short_batches_in_8_and_keeps_the_fixed_paddings_ids(tokenizer):
    """A batch of short texts is padded to `SHORT_LENGTH` (8), not 16; longer ones to a multiple of 16."""
    for texts, width in ((["a b", "c"], featurize.SHORT_LENGTH), ([" ".join("abcdefgh")], 16)):
        got = featurize.encode(tokenizer, 128, tf.constant(texts), pad_to_max_length=False)
        fixed = featurize.encode(tokenizer, 128, tf.constant(texts))
        assert got["input_ids"].shape[1] == width
        for name, value in got.items():
            np.testing.assert_array_equal(value.numpy(), fixed[name].numpy()[:, :width])


def test_round_robin_budget_matches_keras_hub():
    packer = keras_hub.layers.MultiSegmentPacker(12, start_value=1, end_value=2, truncate="round_robin")
    for length_a in range(0, 14):
        for length_b in range(0, 14):
            a, b = tf.ragged.constant([[7] * length_a]), tf.ragged.constant([[8] * length_b])
            ids, _ = packer((a, b))
            expected = (int(np.sum(ids.numpy() == 7)), int(np.sum(ids.numpy() == 8)))
            got = featurize.fit_pair(length_a, length_b, 12 - 3)
            assert (int(got[0]), int(got[1])) == expected, (length_a, length_b)


def test_empty_batch_gives_empty_features(tokenizer):
    empty = tf.constant([], tf.string)
    inputs = featurize.encode(tokenizer, 8, empty, empty)
    assert inputs["input_ids"].shape == (0, 8)
    inputs, char_start, _ = featurize.squad_window(tokenizer, 8, 2, empty, empty)
    assert inputs["input_ids"].shape == char_start.shape == (0, 8)
    inputs, words, first = featurize.tagging_features(tokenizer, 8, empty)
    assert inputs["token_type_ids"].shape == (0, 8) and first.to_tensor().shape[0] == 0


def test_squad_window_is_the_first_window_of_squad_features(tokenizer):
    contexts = TEXTS[::3]
    questions = TEXTS[1::3][:len(contexts)]
    contexts = contexts[:len(questions)]
    examples = [squad.SquadExample(str(i), q, c) for i, (q, c) in enumerate(zip(questions, contexts))]
    features = squad.squad_features(examples, tokenizer, max_seq_length=40, doc_stride=16, max_query_length=12)
    first = np.array([np.flatnonzero(features.example_index == i)[0] for i in range(len(examples))])
    inputs, char_start, char_end = featurize.squad_window(tokenizer, 40, 12, tf.constant(questions),
                                                          tf.constant(contexts))
    for name in ("input_ids", "attention_mask", "token_type_ids"):
        np.testing.assert_array_equal(inputs[name].numpy(), getattr(features, name)[first], err_msg=name)
    np.testing.assert_array_equal(char_start.numpy(), features.token_char_start[first])
    np.testing.assert_array_equal(char_end.numpy(), features.token_char_end[first])


def test_tagging_features_are_the_tagging_datas(tokenizer):
    sentences = [tagging.TaggedSentence(tuple(text.split()), ("O",) * len(text.split()))
                 for text in TEXTS if text.split()]
    dataset, stats = tagging.tagging_dataset(sentences, tokenizer, ["O"], sequence_length=24, batch_size=1024)
    expected = next(iter(dataset))[0]
    texts = tf.constant([" ".join(sentence.words) for sentence in sentences])
    inputs, words, first = featurize.tagging_features(tokenizer, 24, texts)
    for name in expected:
        np.testing.assert_array_equal(inputs[name].numpy(), expected[name].numpy(), err_msg=name)
    assert [row.tolist() for row in stats["first_token_positions"]] == first.to_list()
    raw = featurize.raw_words(texts, words).numpy()
    assert [list(sentence.words) for sentence in sentences] == [[w.decode() for w in row[:len(sentence.words)]]
                                                                  for sentence, row in zip(sentences, raw)]


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
