import pathlib

import numpy as np
import pytest
import tensorflow as tf

from electra_tf.data.tasks.tagging import (
    TaggedSentence,
    convert_tags,
    decode_tags,
    detect_scheme,
    label_names,
    read_conll,
    tag_spans,
    tagging_dataset,
)
from electra_tf.text.tokenizer import WordPieceTokenizer

VOCAB = pathlib.Path(__file__).parents[1] / "fixtures" / "tokenizer" / "vocab.txt"

CONLL_2003 = """-DOCSTART- -X- -X- O

EU NNP B-NP I-ORG
rejects VBZ B-VP O
German JJ B-NP I-MISC
call NN I-NP O
. . O O


Peter NNP B-NP I-PER
Blackburn NNP I-NP I-PER
-DOCSTART- -X- -X- O

Anna NNP B-NP I-PER
Bob NNP B-NP B-PER"""  # two blank lines, a document start without one, no final newline

CONLL_2000 = """Confidence NN B-NP
in IN B-PP
the DT B-NP
pound NN I-NP

is VBZ B-VP
widely RB I-VP
"""

# One sentence in the three encodings: adjacent PER chunks, single-token chunks, I- after O in IOB1.
IOB1 = ("I-PER", "I-PER", "B-PER", "O", "O", "I-LOC", "O", "I-ORG", "I-ORG", "I-ORG", "O", "I-MISC")
IOB2 = ("B-PER", "I-PER", "B-PER", "O", "O", "B-LOC", "O", "B-ORG", "I-ORG", "I-ORG", "O", "B-MISC")
BIOES = ("B-PER", "E-PER", "S-PER", "O", "O", "S-LOC", "O", "B-ORG", "I-ORG", "E-ORG", "O", "S-MISC")
BILOU = ("B-PER", "L-PER", "U-PER", "O", "O", "U-LOC", "O", "B-ORG", "I-ORG", "L-ORG", "O", "U-MISC")
SPANS = {("PER", 0, 2), ("PER", 2, 3), ("LOC", 5, 6), ("ORG", 7, 10), ("MISC", 11, 12)}


@pytest.fixture(scope="module")
def tokenizer():
    return WordPieceTokenizer(str(VOCAB))


def _write(tmp_path, content, name="data.txt"):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return str(path)


def _pieces(tokenizer, word):
    return tokenizer(tf.constant([word]))[0].numpy().tolist()


def test_read_conll_2003_ner_column(tmp_path):
    sentences = read_conll(_write(tmp_path, "\ufeff" + CONLL_2003))  # with a byte-order mark
    assert sentences == [
        TaggedSentence(("EU", "rejects", "German", "call", "."), ("I-ORG", "O", "I-MISC", "O", "O")),
        TaggedSentence(("Peter", "Blackburn"), ("I-PER", "I-PER")),
        TaggedSentence(("Anna", "Bob"), ("I-PER", "B-PER"))]


def test_read_conll_2000_chunk_and_pos_columns(tmp_path):
    path = _write(tmp_path, CONLL_2000)
    chunks = read_conll(path)
    assert [s.words for s in chunks] == [("Confidence", "in", "the", "pound"), ("is", "widely")]
    assert [s.tags for s in chunks] == [("B-NP", "B-PP", "B-NP", "I-NP"), ("B-VP", "I-VP")]
    assert read_conll(path, tag_column=1)[1].tags == ("VBZ", "RB")


@pytest.mark.parametrize("content, tag_column, message", [
    ("EU NNP B-NP I-ORG\nrejects VBZ B-VP\n", -1, r"data\.txt:2: 3 column\(s\), but line 1 has 4"),
    ("\nEU\nrejects\n", -1, r"data\.txt:2: too few columns"),
    ("EU NNP B-NP\n", 3, r"data\.txt:1: too few columns"),
    (b"EU NNP B-NP I-ORG\n\nrejects VBZ B-VP \xff\n", -1, r"data\.txt:3: not UTF-8"),
    ("-DOCSTART- -X- -X- O\n\n\n", -1, r"data\.txt: no sentences"),
    ("", -1, r"data\.txt: no sentences"),
])
def test_read_conll_bad_input_names_file_and_line(tmp_path, content, tag_column, message):
    with pytest.raises(ValueError, match=message):
        read_conll(_write(tmp_path, content), tag_column=tag_column)


SCHEMES = {"iob1": IOB1, "iob2": IOB2, "bioes": BIOES, "bilou": BILOU}


@pytest.mark.parametrize("scheme", SCHEMES)
def test_scheme_conversions(scheme):
    source = SCHEMES[scheme]
    assert tag_spans(source) == SPANS
    assert detect_scheme([["O"], source]) == scheme
    assert {name: convert_tags(source, name) for name in SCHEMES} == {name: list(t) for name, t in SCHEMES.items()}


def test_a_scheme_is_told_by_what_its_chunks_begin_with():
    assert detect_scheme([["O", "I-PER", "O"]]) == "iob1"  # I- after O: IOB1
    assert detect_scheme([["B-PER", "I-PER", "B-PER"]]) == "iob2"
    assert detect_scheme([["O"], []]) is None  # nothing tells
    assert detect_scheme([["B-NP", "NN"]]) == "none"  # not span tags (part of speech)
    with pytest.raises(ValueError, match=r"a tagger trains on tags in one of \('bioes', 'iob2', 'none'\), not 'iob1'"):
        label_names([TaggedSentence(("a",), ("I-PER",))], scheme="iob1")  # files may hold it; training reads it


def test_spans_of_hand_worked_edge_cases():
    assert convert_tags(["O", "I-NP"], "bioes") == ["O", "S-NP"]  # IOB1: I- after O starts a chunk
    assert convert_tags(["B-NP", "I-NP", "B-NP", "I-NP"], "bioes") == ["B-NP", "E-NP", "B-NP", "E-NP"]
    assert tag_spans(["I-PER", "I-LOC", "E-LOC", "I-LOC"]) == {("PER", 0, 1), ("LOC", 1, 3), ("LOC", 3, 4)}
    assert tag_spans([]) == set() and tag_spans(["O", "O"]) == set()
    with pytest.raises(ValueError, match="'X-PER'"):
        tag_spans(["O", "X-PER"])


def test_label_names_are_sorted_with_o_first():
    sentences = [TaggedSentence(("a", "b", "c"), ("I-PER", "O", "I-LOC")), TaggedSentence(("d",), ("I-PER",))]
    assert label_names(sentences) == ["O", "B-LOC", "B-PER", "E-LOC", "E-PER", "I-LOC", "I-PER", "S-LOC", "S-PER"]
    assert label_names(sentences[::-1], scheme="iob2") == ["O", "B-LOC", "B-PER", "I-LOC", "I-PER"]
    assert label_names([TaggedSentence(("a", "b"), ("NN", "DT"))], scheme="none") == ["O", "DT", "NN"]


def test_labels_sit_at_each_words_first_sub_token(tokenizer):
    words = ("Peter", "\u2295", "\x07", "the", "EU")  # 3 pieces, [UNK], no piece at all, 1 piece, 2 pieces
    pieces = [_pieces(tokenizer, word) for word in words]
    unk = tokenizer.token_to_id("[UNK]")
    assert [len(p) for p in pieces] == [3, 1, 0, 1, 2] and pieces[1] == [unk]
    sentence = TaggedSentence(words, ("I-PER", "O", "O", "O", "I-ORG"))
    names = label_names([sentence])
    dataset, stats = tagging_dataset([sentence], tokenizer, names, sequence_length=12)
    (inputs, labels, sample_weight), = list(dataset)

    ids = [tokenizer.cls_token_id, *pieces[0], unk, unk, *pieces[3], *pieces[4], tokenizer.sep_token_id]
    assert inputs["input_ids"].numpy().tolist() == [ids + [tokenizer.pad_token_id] * 2]
    assert inputs["attention_mask"].numpy().tolist() == [[1] * 10 + [0] * 2]
    assert inputs["token_type_ids"].numpy().tolist() == [[0] * 12]
    first_tokens = [1, 4, 5, 6, 7]
    expected_labels = np.zeros(12, np.int32)
    expected_labels[first_tokens] = [names.index(tag) for tag in ("S-PER", "O", "O", "O", "S-ORG")]
    assert labels.numpy().tolist() == [expected_labels.tolist()]
    assert sample_weight.numpy().tolist() == [[float(i in first_tokens) for i in range(12)]]
    assert stats["first_token_positions"][0].tolist() == first_tokens
    assert {k: v.dtype for k, v in inputs.items()} == dict.fromkeys(inputs, tf.int32)
    assert (labels.dtype, sample_weight.dtype) == (tf.int32, tf.float32)


@pytest.mark.parametrize("sequence_length, first_tokens", [(8, [1, 4, 5, -1, -1]), (7, [1, 4, -1, -1, -1])],
                         ids=["fills-exactly", "cuts-inside-a-word"])
def test_long_sentences_are_truncated_at_whole_words_and_counted(tokenizer, sequence_length, first_tokens):
    long = TaggedSentence(("Peter", "the", "EU", "the", "EU"), ("I-PER", "O", "I-ORG", "O", "I-ORG"))  # 3 1 2 1 2
    short = TaggedSentence(("the", "EU"), ("O", "I-ORG"))  # 3 pieces: always fits
    names = label_names([long])
    dataset, stats = tagging_dataset([long, short], tokenizer, names, sequence_length=sequence_length)
    inputs, labels, sample_weight = next(iter(dataset))

    kept = sum(position > 0 for position in first_tokens)
    assert (stats["truncated_words"], stats["truncated_sentences"], stats["words"]) == (5 - kept, 1, 7)
    assert [row.tolist() for row in stats["first_token_positions"]] == [first_tokens, [1, 2]]
    kept_pieces = [piece for word in long.words[:kept] for piece in _pieces(tokenizer, word)]
    padding = [tokenizer.pad_token_id] * (sequence_length - 2 - len(kept_pieces))
    assert inputs["input_ids"][0].numpy().tolist() == [
        tokenizer.cls_token_id, *kept_pieces, tokenizer.sep_token_id, *padding]
    assert sample_weight.numpy().sum(axis=1).tolist() == [kept, 2.0]
    assert decode_tags(labels, stats["first_token_positions"], names) == [
        ["S-PER", "O", "S-ORG", "O", "O"][:kept] + ["O"] * (5 - kept), ["O", "S-ORG"]]
    everywhere_per = np.full(labels.shape, names.index("S-PER"))  # padding too: cut words must still read "O"
    decoded = decode_tags(everywhere_per, stats["first_token_positions"], names)
    assert decoded[0] == ["S-PER"] * kept + ["O"] * (5 - kept)


@pytest.mark.parametrize("scheme", ["bioes", "iob2", "none"])
def test_dataset_labels_decode_back_to_the_tags(tokenizer, scheme):
    sentences = [TaggedSentence(("Peter", "Blackburn", "met", "Anna", "in", "Paris"), IOB1[:6]),
                 TaggedSentence(("the",), ("O",)),
                 TaggedSentence(("New", "York", "Times", "reported", "\x07", "fox"), IOB1[6:])]
    names = label_names(sentences, scheme)
    dataset, stats = tagging_dataset(sentences, tokenizer, names, sequence_length=32, batch_size=2, scheme=scheme)
    labels = np.concatenate([batch_labels for _, batch_labels, _ in dataset.as_numpy_iterator()])
    expected = [convert_tags(sentence.tags, scheme) for sentence in sentences]
    positions = stats["first_token_positions"]
    assert decode_tags(labels, positions, names) == expected
    assert decode_tags(np.eye(len(names))[labels] * 5.0, positions, names) == expected  # as logits


def test_shuffling_keeps_labels_aligned(tokenizer):
    sentences = [TaggedSentence(("the",) * n, ("I-PER",) * n) for n in range(1, 9)]
    names = label_names(sentences)
    dataset, _ = tagging_dataset(sentences, tokenizer, names, sequence_length=12, batch_size=8, shuffle=True)
    inputs, labels, sample_weight = next(iter(dataset))
    assert np.array_equal(inputs["attention_mask"].numpy().sum(1), sample_weight.numpy().sum(1) + 2)
    assert sorted(sample_weight.numpy().sum(1).tolist()) == list(range(1, 9))


def test_unknown_labels_are_an_error_listing_them(tokenizer):
    train = [TaggedSentence(("Peter", "met", "Anna"), ("I-PER", "O", "I-PER"))]
    dev = [TaggedSentence(("EU", "rejects", "German", "Peter"), ("I-ORG", "O", "I-MISC", "I-PER"))]
    with pytest.raises(ValueError, match=r"\['S-MISC', 'S-ORG'\]"):
        tagging_dataset(dev, tokenizer, label_names(train))
    with pytest.raises(ValueError, match=r"\['VBZ'\]"):
        tagging_dataset([TaggedSentence(("rejects",), ("VBZ",))], tokenizer, ["O", "NN"], scheme="none")


def test_decode_tags_checks_shapes():
    with pytest.raises(ValueError, match="3 classes but there are 2 labels"):
        decode_tags(np.zeros((1, 4, 3)), [np.array([1])], ["O", "S-PER"])
    with pytest.raises(ValueError, match="2 sentences"):
        decode_tags(np.zeros((1, 4), np.int32), [np.array([1]), np.array([1])], ["O", "S-PER"])
