"""Our tokenizer against Hugging Face `BertTokenizerFast` (fixture from tools/make_tokenizer_fixtures.py)."""

import json
from pathlib import Path

import pytest
import tensorflow as tf

from electra_tf.tokenization import ElectraTokenizer

FIXTURES = Path(__file__).parent / "fixtures" / "tokenizer"
FIXTURE = json.loads((FIXTURES / "bert_tokenizer_fast.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("setting", sorted(FIXTURE["settings"]))
def test_ids_equal_bert_tokenizer_fast(setting):
    options = FIXTURE["settings"][setting]
    tokenizer = ElectraTokenizer(str(FIXTURES / "vocab.txt"), **options)
    texts = FIXTURE["texts"]
    ours = tokenizer(tf.constant(texts)).to_list()
    mismatches = [(text, expected, got) for text, expected, got in zip(texts, FIXTURE["ids"][setting], ours)
                  if expected != got]
    assert not mismatches, f"{len(mismatches)} of {len(texts)} differ, e.g. {mismatches[:3]}"


def test_in_graph_and_eager_ids_agree():
    tokenizer = ElectraTokenizer(str(FIXTURES / "vocab.txt"))
    texts = FIXTURE["texts"][:50]
    graph = tf.function(tokenizer, input_signature=[tf.TensorSpec([None], tf.string)])
    dataset = tf.data.Dataset.from_tensor_slices(texts).batch(10).map(tokenizer)
    from_dataset = [row for batch in dataset for row in batch.to_list()]
    assert graph(tf.constant(texts)).to_list() == tokenizer(tf.constant(texts)).to_list() == from_dataset
