"""Property-based tests (hypothesis): the tokenizer on arbitrary Unicode text and bytes, the packer
(`ExampleBuilder`) on arbitrary documents, and the masking rules on random id batches.

Each property is checked against a simple independent statement of the rule, not against the code's own
arithmetic where that can be avoided. `max_examples` stays modest: every tokenizer call runs TensorFlow ops.
"""

import random
import unicodedata

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from electra_tf.data.packing import ExampleBuilder
from electra_tf.pretraining.masking import mask_tokens
from electra_tf.text.normalization import bert_normalize
from electra_tf.text.tokenizer import WordPieceTokenizer
from electra_tf.text.vocabulary import load_vocabulary

# No example database: nothing is written into the tree.
PROPERTY = settings(max_examples=40, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

FIXTURE_VOCAB = "tests/fixtures/tokenizer/vocab.txt"
VOCABULARY = load_vocabulary(FIXTURE_VOCAB)
TOKENIZER = WordPieceTokenizer(FIXTURE_VOCAB)
CASED = WordPieceTokenizer(FIXTURE_VOCAB, lowercase=False)

# Text with every kind of character: letters of many scripts, marks, CJK, emoji, punctuation, symbols,
# controls, format characters, all Unicode whitespace (surrogates cannot be encoded, so they are left out).
unicode_text = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=60)
# ... with the characters tokenization treats specially made frequent.
SPECIAL_CHARACTERS = (" \t\n\r\u00a0\u2009\u3000\u200b\u00ad\x00\x0b\x1f\x7f\ufffd"
                      ".,!?'\"-$+<=>^|~`中文한글👍🏽éÉßİǅ\u0301")
mixed_text = st.text(alphabet=st.one_of(st.characters(exclude_categories=("Cs",)),
                                        st.sampled_from(SPECIAL_CHARACTERS),
                                        st.sampled_from("abcdefghij ABC")), max_size=60)


def ids(tokenizer, text):
    return tokenizer(tf.constant(text)).numpy().tolist()


def is_bert_whitespace(character):
    """What BERT's basic tokenizer splits on: tab, newline, carriage return and Unicode Z* (spaces,
    line and paragraph separators). Other controls (\\x0b, \\x1c, U+0085, ...) are removed, not split on."""
    return character in "\t\n\r" or unicodedata.category(character).startswith("Z")


def split_keeping(text, is_delimiter, keep):
    """`text` cut at every delimiter character; the delimiters are kept as pieces of their own when `keep`."""
    pieces, current = [], ""
    for character in text:
        if is_delimiter(character):
            pieces.append(current)
            if keep:
                pieces.append(character)
            current = ""
        else:
            current += character
    return pieces + [current]


@PROPERTY
@given(st.one_of(unicode_text, mixed_text))
def test_the_tokenizer_never_fails_and_gives_ids_of_the_vocabulary(text):
    for tokenizer in (TOKENIZER, CASED):
        tokens = ids(tokenizer, text)
        assert all(0 <= token < len(VOCABULARY) for token in tokens)
        # Special tokens never come out of text (the text "[CLS]" is punctuation and letters).
        assert not {VOCABULARY.index(s) for s in ("[PAD]", "[CLS]", "[SEP]", "[MASK]")} & set(tokens)


@PROPERTY
@given(st.binary(max_size=40))
def test_arbitrary_bytes_are_tokenized_without_an_error(data):
    tokens = TOKENIZER(tf.constant(data)).numpy().tolist()
    assert all(0 <= token < len(VOCABULARY) for token in tokens)


@PROPERTY
@given(st.lists(st.one_of(unicode_text, mixed_text), min_size=1, max_size=5))
def test_a_batch_gives_the_ids_of_each_text_alone(texts):
    batch = TOKENIZER(tf.constant(texts)).to_list()
    assert batch == [ids(TOKENIZER, text) for text in texts]


@PROPERTY
@given(st.one_of(unicode_text, mixed_text))
def test_no_token_spans_whitespace(text):
    """Tokenizing a text gives the concatenated tokens of its whitespace-separated chunks."""
    chunks = split_keeping(text, is_bert_whitespace, keep=False)
    assert ids(TOKENIZER, text) == [token for chunk in chunks for token in ids(TOKENIZER, chunk)]


@PROPERTY
@given(st.one_of(unicode_text, mixed_text))
def test_no_token_spans_ascii_punctuation_and_each_mark_is_its_own_token(text):
    """ASCII punctuation and symbols are words of their own: cutting the text around them changes nothing."""
    punctuation = set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
    pieces = split_keeping(text, punctuation.__contains__, keep=True)
    assert ids(TOKENIZER, text) == [token for piece in pieces for token in ids(TOKENIZER, piece)]
    for mark in set(text) & punctuation:
        expected = [VOCABULARY.index(mark)] if mark in VOCABULARY else [VOCABULARY.index("[UNK]")]
        assert ids(TOKENIZER, mark) == expected


@PROPERTY
@given(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=60))
def test_uncased_ascii_ignores_case(text):
    assert ids(TOKENIZER, text) == ids(TOKENIZER, text.upper()) == ids(TOKENIZER, text.lower())


@PROPERTY
@given(st.one_of(unicode_text, mixed_text))
def test_normalised_text_is_clean_and_tokenizes_as_the_original(text):
    once = bert_normalize(tf.constant(text)).numpy()
    normalised = once.decode("utf-8")
    categories = {unicodedata.category(c) for c in normalised}
    # No controls, format or private-use characters, no accents (Mn), no whitespace but the space.
    assert not categories & {"Cc", "Cf", "Co", "Mn", "Zl", "Zp"}
    assert not set(normalised) & {"\ufffd"} and all(c == " " for c in normalised if unicodedata.category(c) == "Zs")
    assert tf.strings.lower(once, encoding="utf-8").numpy() == once  # lower-cased (TensorFlow's mapping)
    assert ids(TOKENIZER, once) == ids(TOKENIZER, text)  # a fixed point for the tokenizer


# Whole words of the vocabulary that tokenize to themselves (not ##pieces, specials or punctuation-bearing).
_words = [token for token in VOCABULARY if not token.startswith("##") and not token.startswith("[")]
WHOLE_WORDS = [word for word, tokens in zip(_words, TOKENIZER(tf.constant(_words)).to_list())
               if tokens == [VOCABULARY.index(word)]]


@PROPERTY
@given(st.lists(st.sampled_from(WHOLE_WORDS), max_size=12))
def test_words_of_the_vocabulary_round_trip_through_detokenize(words):
    text = " ".join(words)
    tokens = ids(TOKENIZER, text)
    assert tokens == [VOCABULARY.index(word) for word in words]
    assert TOKENIZER.detokenize(tf.constant(tokens, tf.int32)) == text


@PROPERTY
@given(st.lists(st.one_of(unicode_text, mixed_text), min_size=1, max_size=3),
       st.lists(st.one_of(unicode_text, mixed_text), min_size=3, max_size=3), st.integers(3, 24),
       st.booleans())
def test_encode_packs_cls_a_sep_b_sep_and_truncates_only_what_does_not_fit(texts, pairs, length, paired):
    pairs = pairs[:len(texts)] if paired else None
    batch = {k: v.numpy() for k, v in TOKENIZER.encode(texts, pairs, sequence_length=length).items()}
    cls, sep, pad = TOKENIZER.cls_token_id, TOKENIZER.sep_token_id, TOKENIZER.pad_token_id
    for row, text in enumerate(texts):
        input_ids, mask, types = (batch[k][row].tolist() for k in ("input_ids", "attention_mask", "token_type_ids"))
        assert len(input_ids) == len(mask) == len(types) == length
        n = sum(mask)
        assert mask == [1] * n + [0] * (length - n) and input_ids[n:] == [pad] * (length - n)
        assert types[n:] == [0] * (length - n)
        first = ids(TOKENIZER, text)
        if pairs is None:
            kept = min(len(first), length - 2)
            assert input_ids[:n] == [cls] + first[:kept] + [sep] and types[:n] == [0] * n
            continue
        second = ids(TOKENIZER, pairs[row])
        budget = length - 3
        # Round robin: one token to A, one to B, ... within the budget; a short segment keeps all of its tokens.
        if len(first) + len(second) <= budget:
            kept_a, kept_b = len(first), len(second)
        else:
            kept_a = min(len(first), max((budget + 1) // 2, budget - len(second)))
            kept_b = min(len(second), budget - kept_a)
        assert input_ids[:n] == [cls] + first[:kept_a] + [sep] + second[:kept_b] + [sep]
        assert types[:n] == [0] * (kept_a + 2) + [1] * (kept_b + 1)


# === The packer ===

CLS, SEP = 101, 102
documents_strategy = st.lists(  # documents → sentences → lengths; empty sentences too
    st.lists(st.integers(0, 40), min_size=0, max_size=8), min_size=1, max_size=6)


@PROPERTY
@given(documents_strategy, st.integers(5, 48), st.integers(0, 2**32 - 1))
def test_packed_examples_keep_the_layout_and_lose_tokens_only_to_truncation(lengths, max_length, seed):
    # Token t of the whole stream is 1000 + t: unique and in document order, never a special id.
    documents, counter = [], iter(range(1000, 10**9))
    for document in lengths:
        documents.append([[next(counter) for _ in range(n)] for n in document])
    builder = ExampleBuilder(max_length, CLS, SEP, random.Random(seed))
    emitted = []  # (example, the sentences it was built from, document index)
    window = []
    for d, document in enumerate(documents):
        for sentence in document:
            if sentence:
                window.append(sentence)
            example = builder.add_sentence(sentence)
            # An example is due once its sentences reach the target length (5 to max_length tokens).
            accumulated = sum(map(len, window))
            assert accumulated >= 5 if example is not None else accumulated < max_length
            if example is not None:
                emitted.append((example, window, d))
                window = []
        example = builder.end_document()
        assert (example is None) == (not window)  # an unfinished example never crosses the boundary
        if example is not None:
            emitted.append((example, window, d))
            window = []

    seen = []
    for example, sentences, d in emitted:
        ids_, mask, segments = example.input_ids, example.input_mask, example.segment_ids
        assert len(ids_) == len(mask) == len(segments) == max_length
        n = sum(mask)
        assert mask == [1] * n + [0] * (max_length - n) and ids_[n:] == [0] * (max_length - n)
        assert segments[n:] == [0] * (max_length - n)
        assert ids_[0] == CLS and ids_[n - 1] == SEP
        seps = [i for i in range(n) if ids_[i] == SEP]
        assert len(seps) in (1, 2) and CLS not in ids_[1:n]
        first, second = ids_[1:seps[0]], ids_[seps[0] + 1:n - 1] if len(seps) == 2 else []
        assert first  # [CLS] A [SEP] (B [SEP]): A is never empty, B is empty only with a single [SEP]
        assert len(seps) == 1 or second
        assert segments[:n] == [0] * (len(first) + 2) + [1] * (n - len(first) - 2)
        # Tokens come from this example's own sentences (one document), each segment in document order,
        # each sentence whole in one segment except for a truncated tail.
        stream = [t for sentence in sentences for t in sentence]
        assert set(first + second) <= set(stream) and len(set(first + second)) == len(first + second)
        assert first == sorted(first) and second == sorted(second)
        owner = {t: s for s, sentence in enumerate(sentences) for t in sentence}
        assert not {owner[t] for t in first} & {owner[t] for t in second}  # a sentence is in one segment
        for segment in (first, second):
            used = sorted({owner[t] for t in segment})
            kept = set(segment)
            for s in used[:-1]:  # all but the last sentence of a segment are whole
                assert all(t in kept for t in sentences[s])
            if used:  # the last one keeps a prefix
                last = sentences[used[-1]]
                assert [t for t in last if t in kept] == last[:len([t for t in last if t in kept])]
        # Tokens are lost only to truncation: the example is then full, or A alone took max_length - 3 or
        # more tokens and B was dropped (A is cut to max_length - 2, B to what is left after A and 3
        # special tokens, as in the original); truncation keeps at least max_length - 3 tokens.
        lost = set(stream) - set(first + second)
        if lost:
            assert n == max_length or (n == max_length - 1 and not second)
        assert len(first) + len(second) >= min(len(stream), max_length - 3)
        seen += first + second
    assert len(seen) == len(set(seen))


@PROPERTY
@given(st.integers(-3, 4))
def test_the_packer_refuses_lengths_below_five(max_length):
    with pytest.raises(ValueError, match=f"max_length must be at least 5, got {max_length}"):
        ExampleBuilder(max_length, CLS, SEP)


# === Masking ===

MASK_ID, VOCAB_SIZE = 4, 50
SPECIAL = (0, 2, 3, 4)  # [PAD] [CLS] [SEP] [MASK]


def random_batch(seed, batch_size, length):
    """Rows of [CLS] ids [SEP] and padding, with [SEP], [MASK] and [CLS] also inside the text."""
    rng = np.random.default_rng(seed)
    ids_ = np.zeros((batch_size, length), np.int32)
    for row in range(batch_size):
        n = int(rng.integers(2, length + 1))
        ids_[row, :n] = rng.choice(np.arange(1, VOCAB_SIZE), size=n)
        ids_[row, 0], ids_[row, n - 1] = 2, 3
    return ids_, (ids_ != 0).astype(np.int32)


@PROPERTY
@given(st.integers(0, 2**32 - 1), st.integers(1, 4), st.integers(2, 24), st.floats(0.01, 0.99),
       st.data(), st.sampled_from([(0.85, 0.0), (0.8, 0.1), (0.0, 1.0), (1.0, 0.0)]), st.booleans())
def test_masking_rules_on_random_batches(seed, batch_size, length, mask_prob, data, rates, with_replacement):
    max_predictions = data.draw(st.integers(1, length), label="max_predictions")
    ids_, mask = random_batch(seed, batch_size, length)
    keys = tf.constant(np.random.default_rng(seed + 1).integers(0, 2**63, size=batch_size, dtype=np.uint64))
    arguments = dict(mask_prob=mask_prob, max_predictions=max_predictions, mask_token_id=MASK_ID,
                     special_token_ids=SPECIAL, vocab_size=VOCAB_SIZE, mask_token_rate=rates[0],
                     random_token_rate=rates[1], with_replacement=with_replacement)
    out = mask_tokens(tf.constant(ids_), tf.constant(mask), keys, **arguments)
    masked, positions, weights, labels = (np.asarray(x) for x in out)
    assert positions.shape == weights.shape == labels.shape == (batch_size, max_predictions)
    for row in range(batch_size):
        real = int(mask[row].sum())
        candidates = {i for i in range(real) if ids_[row, i] not in SPECIAL}
        # The count rule: max(1, min(P, round(n * mask_prob))) over all real tokens, [CLS]/[SEP] included
        # (float32 and round-half-to-even, as tf.round), never more than there are candidates.
        wanted = int(np.clip(np.round(np.float32(real) * np.float32(mask_prob)), 1, max_predictions))
        used = int(weights[row].sum())
        assert set(weights[row].tolist()) <= {0.0, 1.0} and weights[row, :used].all()  # used slots first
        chosen = positions[row, :used].tolist()
        assert set(chosen) <= candidates  # never a special token nor padding
        if with_replacement:
            assert used == (wanted if candidates else 0)  # draws may repeat a position
        else:
            assert used == min(wanted, len(candidates))
            assert len(set(chosen)) == used  # unique (in random order: not sorted)
        assert (positions[row, used:] == 0).all()
        assert labels[row, :used].tolist() == [int(ids_[row, p]) for p in chosen]
        changed = {i for i in range(length) if masked[row, i] != ids_[row, i]}
        assert changed <= set(chosen)
        for p in set(chosen):
            assert masked[row, p] in (MASK_ID, ids_[row, p]) or rates[1] > 0
            assert 0 <= masked[row, p] < VOCAB_SIZE
            if rates == (1.0, 0.0):
                assert masked[row, p] == MASK_ID
        # Each row's draws depend on its key only: masked alone, it is masked the same way.
        alone = mask_tokens(tf.constant(ids_[row:row + 1]), tf.constant(mask[row:row + 1]), keys[row:row + 1],
                            **arguments)
        np.testing.assert_array_equal(np.asarray(alone.input_ids)[0], masked[row])
        np.testing.assert_array_equal(np.asarray(alone.positions)[0], positions[row])
