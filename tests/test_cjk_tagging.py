"""Raw Chinese text is tagged per character: the serving graph, `pipeline("token-classification")` and
`model.predict` split it as a one-character-a-line NER file has it, and entities come back whole, with
character offsets, in whichever span scheme the model tags."""

import unicodedata

import numpy as np
import pytest
import tensorflow as tf

import electra_tf
from electra_tf import ElectraConfig, ElectraForTokenClassification, ElectraPreprocessor, ElectraTokenizer
from electra_tf.text import featurize
from electra_tf.export.signatures import make_serving_task
from electra_tf.text.normalization import CJK_PUNCTUATION

NEWS = "江泽民主席在北京会见了克林顿。"
MIXED = "ELECTRA模型（HFL）发布， Ann Smith lives in Paris, France."
LABELS = ["O", "B-PER", "E-PER", "I-PER", "S-PER", "B-LOC", "E-LOC", "I-LOC", "S-LOC", "L-PER"]  # (and BILOU's L-)


@pytest.fixture(scope="module")
def tiny(bert_chinese_vocab):
    """`(tokenizer, config)`: the BERT-Chinese-like vocabulary (21,128 tokens), and a tiny model config for it."""
    tokenizer = ElectraTokenizer(bert_chinese_vocab)
    return tokenizer, ElectraConfig(vocab_size=tokenizer.vocabulary_size(), embedding_size=8, hidden_size=16,
                                    num_layers=1, num_heads=2, intermediate_size=32, max_position_embeddings=64)


def _words(text):
    words = featurize.split_words(tf.constant([text]), own_words=featurize.CJK_WORDS)
    return [w.decode() for w in words.words[0].numpy()], words.start[0].numpy().tolist()


def test_cjk_characters_and_punctuation_are_words_english_words_stay_as_whitespace_cuts_them():
    assert _words(NEWS) == (list(NEWS), list(range(len(NEWS))))
    words, starts = _words(MIXED)
    assert words == ["ELECTRA", "模", "型", "（", "HFL", "）", "发", "布", "，", "Ann", "Smith", "lives", "in",
                     "Paris,", "France."]
    assert [MIXED[start:start + len(word)] for word, start in zip(words, starts)] == words
    english = "Ann Smith lives in Paris, France. U.S. “quoted” 1996-08-22"
    assert _words(english)[0] == english.split()  # unchanged: CoNLL-style words
    # The CJK punctuation class is Unicode's punctuation (P*) of the CJK and full-width blocks, no more.
    blocks = [(0x3000, 0x303F), (0xFE10, 0xFE1F), (0xFE30, 0xFE6F), (0xFF00, 0xFFEF)]
    characters = [chr(c) for first, last in blocks for c in range(first, last + 1)]
    matched = tf.strings.regex_full_match(tf.constant(characters), CJK_PUNCTUATION).numpy()
    assert [c for c, m in zip(characters, matched) if m] == [
        c for c in characters if unicodedata.category(c).startswith("P")]


def test_served_graph_pipeline_and_predict_tag_raw_chinese_per_character(tiny, tmp_path):
    tokenizer, config = tiny
    model = ElectraForTokenClassification(config, num_labels=len(LABELS),
                                          preprocessor=ElectraPreprocessor(tokenizer, 32))
    model.save_pretrained(tmp_path, tokenizer=tokenizer, label_names=LABELS, max_seq_length=32)
    served = make_serving_task(model, tokenizer, 32, label_names=LABELS).serve_text(text=tf.constant([NEWS, MIXED]))
    assert served["num_words"].numpy().tolist() == [len(NEWS), 15]
    assert [w.decode() for w in served["words"][0].numpy()] == list(NEWS)
    assert served["word_start"][0].numpy().tolist() == list(range(len(NEWS)))
    # model.predict on the raw text: the same ids, so its logits at each character's token give the same labels.
    logits = model.predict([NEWS])["logits"][0]
    assert served["label_id"][0].numpy().tolist() == logits[1:len(NEWS) + 1].argmax(-1).tolist()
    words = electra_tf.pipeline("token-classification", str(tmp_path), aggregation_strategy="none",
                                ignore_labels=())(NEWS)
    assert [w["entity"] for w in words] == [name.decode() for name in served["label"][0].numpy()]
    assert [(w["word"], w["start"], w["end"]) for w in words] == [(c, i, i + 1) for i, c in enumerate(NEWS)]


@pytest.fixture(scope="module")
def tagger(tiny, tmp_path_factory):
    """A pipeline whose model tags every word I-PER (its classifier's bias says so)."""
    tokenizer, config = tiny
    model = ElectraForTokenClassification(config, num_labels=len(LABELS))
    kernel, bias = model.get_layer("classifier").get_weights()
    bias[LABELS.index("I-PER")] = 100.0
    model.get_layer("classifier").set_weights([np.zeros_like(kernel), bias])
    folder = tmp_path_factory.mktemp("tagger")
    model.save_pretrained(folder, tokenizer=tokenizer, label_names=LABELS, max_seq_length=32)
    return electra_tf.pipeline("token-classification", str(folder))


def test_an_entity_of_chinese_characters_is_the_text_between_its_offsets(tagger):
    assert tagger(NEWS) == [{"entity_group": "PER", "score": pytest.approx(1.0), "word": NEWS, "start": 0,
                             "end": len(NEWS)}]


@pytest.mark.parametrize("tags", [
    ["B-PER", "I-PER", "E-PER"],  # BIOES
    ["B-PER", "I-PER", "L-PER"],  # BILOU
    ["B-PER", "I-PER", "I-PER"],  # IOB2
    ["I-PER", "I-PER", "I-PER"],  # IOB1
])
def test_entities_group_in_every_span_scheme(tagger, tags):
    tags = tags + ["O", "O", "O", "B-LOC", "E-LOC", "O", "O", "O", "S-PER", "B-PER", "E-PER", "O"]
    ids = np.array([[LABELS.index(tag) for tag in tags]])
    outputs = {"num_words": np.array([len(tags)]), "label_id": ids, "probability": np.full(ids.shape, 0.5),
               "word_start": np.arange(len(tags))[None], "word_end": np.arange(1, len(tags) + 1)[None]}
    assert tagger._entities(NEWS, outputs, 0) == [
        {"entity_group": "PER", "score": 0.5, "word": "江泽民", "start": 0, "end": 3},
        {"entity_group": "LOC", "score": 0.5, "word": "北京", "start": 6, "end": 8},
        {"entity_group": "PER", "score": 0.5, "word": "克", "start": 11, "end": 12},
        {"entity_group": "PER", "score": 0.5, "word": "林顿", "start": 12, "end": 14}]
