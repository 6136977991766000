"""`ElectraTokenizer` called as transformers' tokenizer: every call of the fixture
(`tools/make_tokenizer_call_fixtures.py`, recorded from `BertTokenizerFast`) gives transformers' output or
refusal; the calls of today's API and the in-graph ones are unchanged."""

import json
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf

from electra_tf import ElectraConfig, ElectraForSequenceClassification
from electra_tf.transformers.batch_encoding import BatchEncoding
from electra_tf.text.tokenizer import ElectraTokenizer

FIXTURES = Path(__file__).parents[1] / "fixtures" / "tokenizer"
FIXTURE = json.loads((FIXTURES / "call_outputs.json").read_text(encoding="utf-8"))
TOKENIZERS = {name: ElectraTokenizer(str(FIXTURES / "vocab.txt"), **options)
              for name, options in FIXTURE["settings"].items()}
TINY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "i", "love", "natural", "language", "processing", "!"]


def replay(tokenizer, method, args, kwargs):
    if method == "tokenize_to_strings":  # transformers' `tokenize` gives token strings, ours ids
        return tokenizer.convert_ids_to_tokens(tokenizer.encode(*args, add_special_tokens=False, **kwargs))
    return (tokenizer if method == "__call__" else getattr(tokenizer, method))(*args, **kwargs)


def as_recorded(value):
    """Our output in the fixture's JSON form (NumPy arrays as {"dtype", "shape", "values"})."""
    if isinstance(value, np.ndarray):
        return {"dtype": str(value.dtype), "shape": list(value.shape), "values": value.tolist()}
    if isinstance(value, dict):
        assert isinstance(value, BatchEncoding)
        return {key: as_recorded(item) for key, item in value.items()}
    return value


def test_every_recorded_call_gives_transformers_output_or_refusal():
    differences = []
    for call in FIXTURE["calls"]:
        tokenizer = TOKENIZERS[call["setting"]]
        try:
            got = {"output": as_recorded(replay(tokenizer, call["method"], call["args"], call["kwargs"]))}
        except ValueError as error:
            got = {"error": str(error)}
        expected = {key: call[key] for key in ("output", "error") if key in call}
        if got != expected:
            differences.append((call["method"], call["args"], call["kwargs"], expected, got))
    assert not differences, f"{len(differences)} of {len(FIXTURE['calls'])} calls differ, e.g. {differences[:2]}"
    assert len(FIXTURE["calls"]) > 500 and sum("error" in call for call in FIXTURE["calls"]) > 50


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
    with pytest.raises(ValueError, match="return_tensors='tf': the texts have different lengths; pass padding=True"):
        tokenizer(["i love", "language"], return_tensors="tf")
    with pytest.raises(ValueError, match="return_tensors='pt': electra_tf gives 'tf'"):
        tokenizer("i", return_tensors="pt")


@pytest.mark.parametrize("kwargs, message", [
    ({"padding": "longest_first"},
     "padding='longest_first': not one of True, False, 'do_not_pad', 'longest', 'max_length'$"),
    ({"truncation": "longest"}, "truncation='longest': not one of True, False, 'do_not_truncate', 'longest_first', "
                                "'only_first', 'only_second'$"),
    ({"max_length": -1}, "max_length=-1: not a count of tokens"),
    ({"text_pair": ["a", "b"]}, "text: a str, a list of str or a list of \\(text, pair\\)"),
])
def test_bad_arguments_are_refused_in_one_line(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ElectraTokenizer(TINY)("i love", **kwargs)


def test_bad_batches_are_refused_in_one_line():
    tokenizer = ElectraTokenizer(TINY)
    with pytest.raises(ValueError, match="text_pair: a list of 2 str, one per text"):
        tokenizer(["i", "love"], ["language"])
    with pytest.raises(ValueError, match="text: an empty batch"):
        tokenizer([])
    with pytest.raises(ValueError, match="tensors: call tokenizer.tokenize"):
        tokenizer(tf.constant(["i"]), padding=True)
    with pytest.raises(ValueError, match="ids: 99 is not a token id of this vocabulary \\(0..10\\)"):
        tokenizer.decode([2, 99])
    with pytest.raises(TypeError, match="encode\\(\\) of a batch .* takes no add_special_tokens"):
        tokenizer.encode(["i love"], add_special_tokens=False)


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
