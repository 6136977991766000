"""The room's `ElectraTokenizer` called as transformers' tokenizer: every call of the fixture
(`tools/make_tokenizer_call_fixtures.py`, recorded from transformers 4.x's `BertTokenizerFast` and
`ElectraTokenizerFast`) gives transformers' output, alignment (word and sequence ids, offsets, the char/token/word
maps) or refusal; the calls of our own API and the in-graph ones are unchanged on the room class."""

import json
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf

from electra_tf import ElectraConfig, ElectraForSequenceClassification
from electra_tf.transformers.batch_encoding import BatchEncoding
from electra_tf.transformers.tokenizer import ElectraTokenizer

FIXTURES = Path(__file__).parents[1] / "fixtures" / "tokenizer"
FIXTURE = json.loads((FIXTURES / "call_outputs.json").read_text(encoding="utf-8"))
VOCABULARIES = {"chinese": str(Path(__file__).parents[2] / FIXTURE["vocabularies"]["chinese"])}
TOKENIZERS = {name: ElectraTokenizer(VOCABULARIES.get(name, str(FIXTURES / "vocab.txt")), **options)
              for name, options in FIXTURE["settings"].items()}
TINY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "i", "love", "natural", "language", "processing", "!"]
# transformers' refusals that are the Rust library's type errors (or a Python IndexError), not a sentence about
# the input: ours name the argument instead (test_bad_input_is_refused_in_one_line_naming_the_argument).
INTERNAL_ERRORS = ("TextEncodeInput must be", "PreTokenizedInputSequence must be", "list index out of range")


def replay(tokenizer, method, args, kwargs):
    if method == "tokenize_to_strings":  # (the first fixture's name for `tokenize` on a text)
        method = "tokenize"
    return (tokenizer if method in ("__call__", "aligned_call") else getattr(tokenizer, method))(*args, **kwargs)


def as_recorded(value):
    """Our output in the fixture's JSON form (NumPy arrays as {"dtype", "shape", "values"}, tuples as lists)."""
    if isinstance(value, np.ndarray):
        return {"dtype": str(value.dtype), "shape": list(value.shape), "values": value.tolist()}
    if isinstance(value, dict):
        return {str(key): as_recorded(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_recorded(item) for item in value]
    return value


def alignment(batch):
    """What the fixture records of each row (see `alignment` in tools/make_tokenizer_call_fixtures.py)."""
    rows = []
    for row in range(len(batch.encodings)):
        tokens, sequence_ids, word_ids = batch.tokens(row), batch.sequence_ids(row), batch.word_ids(row)
        assert [batch.token_to_word(row, t) for t in range(len(tokens))] == word_ids
        assert [batch.token_to_sequence(row, t) for t in range(len(tokens))] == sequence_ids
        sequences = sorted({s for s in sequence_ids if s is not None})
        words = {s: sorted({w for w, q in zip(word_ids, sequence_ids) if q == s and w is not None}) for s in sequences}
        chars = max((end for _, end in batch[row].offsets), default=0) + 1
        for s in sequences:  # char_to_word is char_to_token then token_to_word
            assert [batch.char_to_word(row, c, s) for c in range(chars)] == [
                None if t is None else word_ids[t] for t in (batch.char_to_token(row, c, s) for c in range(chars))]
        rows.append({
            "tokens": tokens, "word_ids": word_ids, "sequence_ids": sequence_ids,
            "token_to_chars": [batch.token_to_chars(row, t) for t in range(len(tokens))],
            "char_to_token": {s: [batch.char_to_token(row, c, s) for c in range(chars)] for s in sequences},
            "word_to_tokens": {s: [batch.word_to_tokens(row, w, s) for w in range(max(words[s], default=-1) + 2)]
                               for s in sequences},
            "word_to_chars": {s: [batch.word_to_chars(row, w, s) for w in words[s]] for s in sequences}})
    return rows


def test_every_recorded_call_gives_transformers_output_alignment_or_refusal():
    differences = []
    for call in FIXTURE["calls"]:
        tokenizer = TOKENIZERS[call["setting"]]
        try:
            output = replay(tokenizer, call["method"], call["args"], call["kwargs"])
            got = {"output": as_recorded(output)}
            if call["method"] == "aligned_call":
                got["alignment"] = as_recorded(alignment(output))
        except (ValueError, TypeError) as error:
            got = {"error": str(error)}
            if call.get("error", "").startswith(INTERNAL_ERRORS):
                got = {"error": call["error"]} if "\n" not in str(error) else got
        expected = {key: call[key] for key in ("output", "alignment", "error") if key in call}
        if got != expected:
            differences.append((call["setting"], call["method"], call["args"], call["kwargs"], expected, got))
    assert not differences, f"{len(differences)} of {len(FIXTURE['calls'])} calls differ, e.g. {differences[:2]}"
    assert len(FIXTURE["calls"]) > 700 and sum("error" in call for call in FIXTURE["calls"]) > 100
    assert sum(call["method"] == "aligned_call" and "alignment" in call for call in FIXTURE["calls"]) >= 40


def test_the_properties_are_transformers():
    tokenizer = TOKENIZERS["uncased"]
    for name, expected in FIXTURE["properties"].items():
        assert (len(tokenizer) if name == "len" else getattr(tokenizer, name)) == expected, name


def test_the_transformers_snippet_runs():
    tokenizer = ElectraTokenizer(TINY)
    tokens = tokenizer("I love natural language processing!", return_tensors="tf")
    assert tokens.input_ids.shape == [1, 8] and tokens.input_ids.dtype == tf.int32
    assert tokens["attention_mask"].numpy().tolist() == [[1] * 8]
    assert list(tokens.keys()) == ["input_ids", "token_type_ids", "attention_mask"]
    assert dict(**tokens).keys() == tokens.keys() == tokens.to_dict().keys()
    with pytest.raises(AttributeError, match="no 'labels' in this BatchEncoding"):
        tokens.labels
    # A BatchEncoding goes into a Keras model as a dict does: called, and through predict.
    config = ElectraConfig(vocab_size=len(TINY), embedding_size=8, hidden_size=8, num_layers=1, num_heads=1,
                           intermediate_size=8)
    model = ElectraForSequenceClassification(config, num_labels=2)
    expected = model(tokens.to_dict())["logits"].numpy()
    np.testing.assert_allclose(model(tokens)["logits"], expected, atol=1e-6)
    np.testing.assert_allclose(model.predict(tokenizer(["I love language"], return_tensors="np"),
                                             verbose=0)["logits"].shape, (1, 2))
    assert [tensor.shape for tensor in keras.tree.flatten(tokens)] == [[1, 8]] * 3


def test_tensors_np_and_lists():
    tokenizer = ElectraTokenizer(TINY)
    batch = tokenizer(["i love", "language"], padding=True, return_tensors="np")
    assert batch.input_ids.dtype == np.int64 and batch.input_ids.tolist() == [[2, 5, 6, 3], [2, 8, 3, 0]]
    assert tokenizer("i love").input_ids == [2, 5, 6, 3]  # one text: flat lists, as transformers
    assert tokenizer(["i love", "language"], return_offsets_mapping=True, padding=True,
                     return_tensors="np")["offset_mapping"].shape == (2, 4, 2)


@pytest.mark.parametrize("call, message", [
    (lambda t: t(None), "You need to specify either `text` or `text_target`.$"),
    (lambda t: t(123), "text input must be of type `str` \\(single example\\), `list\\[str\\]`"),
    (lambda t: t("i", text_pair=5), "text input must be of type `str`"),
    (lambda t: t(["a", None]), "text\\[1\\]: None is not a str nor a \\(text, pair\\) of them$"),
    (lambda t: t(["a", 1]), "text\\[1\\]: 1 is not a str nor a \\(text, pair\\) of them$"),
    (lambda t: t([[]]), "text\\[0\\]: \\[\\] is not a str nor a \\(text, pair\\) of them$"),
    (lambda t: t([["a", "b"], ["c"]]), "text\\[1\\]: 'c' is not a str nor a \\(text, pair\\) of them$"),
    (lambda t: t(["i", "love"], ["language"]),
     "batch length of `text`: 2 does not match batch length of `text_pair`: 1.$"),
    (lambda t: t("i love", ["a", "b"]), "text_pair: one str for one text$"),
    (lambda t: t(["i"], is_split_into_words=True, text_pair=["b", 3]), "text_pair: one list of words for one text$"),
    (lambda t: t([]), "text: an empty batch"),
    (lambda t: t(tf.constant(["i"]), padding=True), "tensors: call tokenizer.tokenize\\)$"),
    (lambda t: t("i love", padding="longest_first"),
     "padding='longest_first': not one of True, False, 'do_not_pad', 'longest', 'max_length'$"),
    (lambda t: t("i love", truncation="longest"),
     "truncation='longest': not one of True, False, 'do_not_truncate', 'longest_first', 'only_first', 'only_second'$"),
    (lambda t: t("i love", max_length=-1), "max_length=-1: not a count of tokens"),
    (lambda t: t("i love", stride="2"), "stride='2': not a count of tokens"),
    (lambda t: t("i love", padding=True, padding_side="middle"), "Unknown `direction`: `middle`"),
    (lambda t: t("i love", return_tensors="pt"), "return_tensors='pt': electra_tf gives 'tf'"),
    (lambda t: t(["i love", "language"], return_tensors="tf"),
     "return_tensors='tf': the rows of input_ids have different lengths; pass padding=True"),
    (lambda t: t.decode([2, 99]), "ids: 99 is not a token id of this vocabulary \\(0..10\\)$"),
    (lambda t: t.decode("i love"), "token_ids: token ids \\(ints\\), not text: to tokenize text call the tokenizer$"),
    (lambda t: t.decode([[2, 5], [2, 6]]), "token_ids: one sequence of int token ids, not shape \\(2, 2\\)"),
    (lambda t: t.batch_decode("i love"), "sequences: a batch of token id sequences, not a str$"),
    (lambda t: t.convert_ids_to_tokens(["i"]), "ids: token ids \\(ints\\), not text"),
    (lambda t: t.pad([{"attention_mask": [1]}]), "You should supply an encoding or a list of encodings to this method "
                                                 "that includes input_ids, but you provided \\['attention_mask'\\]$"),
    (lambda t: t.pad("i love"), "includes input_ids, but you provided str$"),
    (lambda t: ElectraTokenizer(TINY, padding_side="top"), "Unknown `direction`: `top`"),
])
def test_bad_input_is_refused_in_one_line_naming_the_argument(call, message):
    """Before any tokenization (transformers' words where it has a sentence; where it has a library's type error
    ours names the argument and the element)."""
    with pytest.raises(ValueError, match=message) as error:
        call(ElectraTokenizer(TINY))
    assert "\n" not in str(error.value)


def test_encode_of_a_batch_takes_no_transformers_options():
    with pytest.raises(TypeError, match="encode\\(\\) of a batch .* takes no add_special_tokens"):
        ElectraTokenizer(TINY).encode(["i love"], add_special_tokens=False)


def test_the_question_answering_recipe_finds_the_answer_through_offsets_and_sequence_ids():
    """run_qa.py's `prepare_train_features`: windows of the context, an answer's characters to its tokens."""
    tokenizer = ElectraTokenizer(str(FIXTURES / "vocab.txt"))
    question, context = "Who jumps?", "The quick brown fox jumps over the lazy dog, and the dog sleeps on."
    answer_start = context.index("the lazy dog")
    answer_end = answer_start + len("the lazy dog")
    features = tokenizer([question], [context], truncation="only_second", max_length=24, stride=6,
                         return_overflowing_tokens=True, return_offsets_mapping=True, padding="max_length")
    found = []
    for row, offsets in enumerate(features["offset_mapping"]):
        assert features["overflow_to_sample_mapping"][row] == 0
        sequence_ids = features.sequence_ids(row)
        context_tokens = [i for i, s in enumerate(sequence_ids) if s == 1]
        if offsets[context_tokens[0]][0] <= answer_start and offsets[context_tokens[-1]][1] >= answer_end:
            start = next(i for i in context_tokens if offsets[i][0] <= answer_start < offsets[i][1])
            end = next(i for i in context_tokens if offsets[i][0] < answer_end <= offsets[i][1])
            found.append(tokenizer.decode(features["input_ids"][row][start:end + 1]))
    assert len(features["input_ids"]) > 2 and found and set(found) == {"the lazy dog"}


def test_the_token_classification_recipe_aligns_labels_with_word_ids():
    """The NER guide's `tokenize_and_align_labels`: one label per word, -100 on special tokens and later pieces."""
    tokenizer = ElectraTokenizer(str(FIXTURES / "vocab.txt"))
    words, tags = [["Héllo", "McDonald's", "résumé"], ["the", "fox"]], [[1, 2, 0], [0, 3]]
    batch = tokenizer(words, is_split_into_words=True, truncation=True)
    for row, word_tags in enumerate(tags):
        word_ids, previous, labels = batch.word_ids(row), None, []
        for word in word_ids:
            labels.append(-100 if word is None or word == previous else word_tags[word])
            previous = word
        assert [label for label in labels if label != -100] == word_tags
        assert len(labels) == len(batch["input_ids"][row]) and labels[0] == labels[-1] == -100


def test_the_fill_mask_snippet_finds_one_mask_and_padding_side_and_pad_follow_the_tokenizer():
    tokenizer = ElectraTokenizer(TINY, padding_side="left")
    inputs = tokenizer("i love [MASK] processing !", return_tensors="tf")
    assert inputs.input_ids.numpy().tolist() == [[2, 5, 6, 4, 9, 10, 3]]
    assert np.argwhere(inputs.input_ids.numpy()[0] == tokenizer.mask_token_id).ravel().tolist() == [3]
    features = [tokenizer("i love"), tokenizer("language")]
    assert tokenizer.pad(features, return_tensors="np")["input_ids"].tolist() == [[2, 5, 6, 3], [0, 2, 8, 3]]
    assert tokenizer(["i love", "language"], padding=True).attention_mask == [[1, 1, 1, 1], [0, 1, 1, 1]]
    assert tokenizer.tokenize("i love", add_special_tokens=True) == ["[CLS]", "i", "love", "[SEP]"]
    assert len(tokenizer) == tokenizer.vocab_size == len(TINY) and tokenizer.model_max_length == 512
    assert ElectraTokenizer.from_config(tokenizer.get_config()).padding_side == "left"
    assert tokenizer.get_special_tokens_mask([2, 5, 3], already_has_special_tokens=True) == [1, 0, 1]


def test_todays_calls_are_unchanged():
    tokenizer = ElectraTokenizer(TINY)
    texts = tf.constant(["i love language", "natural processing !"])
    assert tokenizer(texts).to_list() == tokenizer.tokenize(texts).to_list() == [[5, 6, 8], [7, 9, 10]]
    assert tokenizer(tf.constant("i love")).numpy().tolist() == [5, 6]
    graph = tf.function(tokenizer, input_signature=[tf.TensorSpec([None], tf.string)])
    assert graph(texts).to_list() == [[5, 6, 8], [7, 9, 10]]
    assert [row.numpy().tolist() for row in tf.data.Dataset.from_tensor_slices(texts).map(tokenizer)] == [[5, 6, 8],
                                                                                                [7, 9, 10]]
    packed = tokenizer.encode(["i love"], ["language"], 8)
    assert packed["input_ids"].numpy().tolist() == [[2, 5, 6, 3, 8, 3, 0, 0]]
    assert tokenizer.encode("i love", sequence_length=5)["input_ids"].numpy().tolist() == [[2, 5, 6, 3, 0]]
    assert tokenizer.get_config() == ElectraTokenizer.from_config(tokenizer.get_config()).get_config()
    assert "model_max_length" not in tokenizer.get_config()  # a default tokenizer serializes as before
    assert keras.saving.get_registered_name(ElectraTokenizer) == "electra_tf>ElectraTokenizer"  # old files' name
    # Python text in a traced graph is tokenized at tracing, as transformers' would be.
    assert tf.function(lambda: tokenizer("i love", return_tensors="tf")["input_ids"])().numpy().tolist() == [
        [2, 5, 6, 3]]


def test_decode_takes_arrays_and_tensors_and_batch_decode_a_batch():
    tokenizer = ElectraTokenizer(TINY)
    batch = tokenizer(["i love natural language processing!", "i"], padding=True, return_tensors="tf")
    assert tokenizer.batch_decode(batch.input_ids, skip_special_tokens=True) == [
        "i love natural language processing!", "i"]
    assert tokenizer.decode(batch.input_ids[1].numpy()) == "[CLS] i [SEP] [PAD] [PAD] [PAD] [PAD] [PAD]"


def test_save_pretrained_round_trips_and_keeps_model_max_length(tmp_path):
    tokenizer = ElectraTokenizer(TINY, lowercase=False, model_max_length=64)
    paths = tokenizer.save_pretrained(str(tmp_path / "tokenizer"))
    assert [Path(path).name for path in paths] == ["tokenizer_config.json", "vocab.txt"]
    assert json.loads(Path(paths[0]).read_text())["model_max_length"] == 64
    again = ElectraTokenizer.from_pretrained(str(tmp_path / "tokenizer"))
    assert again.get_vocabulary() == TINY and not again.lowercase and again.model_max_length == 64
    Path(paths[0]).write_text(json.dumps({"model_max_length": 10**30}))  # transformers' "unbounded"
    assert ElectraTokenizer.from_pretrained(str(tmp_path / "tokenizer")).model_max_length == 512
    assert ElectraTokenizer.from_config(tokenizer.get_config()).model_max_length == 64
    assert len(tokenizer("i " * 100, truncation=True).input_ids) == 64
