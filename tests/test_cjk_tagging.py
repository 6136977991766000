"""Raw Chinese text is tagged as the model was trained: the serving graph and `pipeline("token-classification")`
cut it into words of the unit the fine-tuning run recorded (each CJK character; or, for MSRA-style files, every
character, digits and Latin letters too), and entities come back with character offsets, in whichever span
scheme the model tags."""

import json
import os
import unicodedata

import numpy as np
import pytest
import tensorflow as tf

import electra_tf
from electra_tf import ElectraConfig, ElectraForTokenClassification, ElectraPreprocessor, ElectraTokenizer
from electra_tf.text import featurize
from electra_tf.checkpoints.convert import load_model
from electra_tf.data.tasks.tagging import read_conll
from electra_tf.export.signatures import make_serving_task
from electra_tf.finetuning import make_task
from electra_tf.finetuning.run import RunOptions, run_finetuning
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
    entity, = tagger(NEWS, aggregation_strategy="simple")
    assert (entity["entity_group"], entity["start"], entity["end"]) == ("PER", 0, len(NEWS))
    assert entity["word"] == " ".join(NEWS)  # transformers' word: the tokens, joined as its tokenizer joins them


@pytest.mark.parametrize("tags", [
    ["B-PER", "I-PER", "E-PER"],  # BIOES
    ["B-PER", "I-PER", "L-PER"],  # BILOU
    ["B-PER", "I-PER", "I-PER"],  # IOB2
    ["I-PER", "I-PER", "I-PER"],  # IOB1
])
def test_entities_group_in_every_span_scheme(tagger, tags):
    tags = tags + ["O", "O", "O", "B-LOC", "E-LOC", "O", "O", "O", "S-PER", "B-PER", "E-PER", "O"]
    characters = [{"entity": tag, "score": 0.5, "word": NEWS[i], "start": i, "end": i + 1}
                  for i, tag in enumerate(tags)]
    assert [(e["entity_group"], NEWS[e["start"]:e["end"]]) for e in tagger.group_entities(characters)
            if e["entity_group"] != "O"] == [("PER", "江泽民"), ("LOC", "北京"), ("PER", "克"), ("PER", "林顿")]


# MSRA-style sentences (one character a line, digits and Latin letters too), with numbers and product names.
MSRA_LINES = ["周杰花了5999元买了iPhone。", "赵强在48号店卖出９９２XR。", "上海有ELECTRA模型。"]
QUERY = "周杰在上海花了５９９９元买了992XR和iPhone 48台。"


def _msra_file(path, sentences):
    """`char<TAB>tag` lines (周杰 PER, 上海 LOC, others O), a blank line after each sentence."""
    tags = {"周": "B-PER", "杰": "I-PER", "赵": "B-PER", "强": "I-PER", "上": "B-LOC", "海": "I-LOC"}
    path.write_text("".join("".join(f"{c}\t{tags.get(c, 'O')}\n" for c in sentence if not c.isspace()) + "\n"
                            for sentence in sentences), encoding="utf-8")
    return str(path)


def test_a_tagger_trained_per_character_is_served_per_character(tiny, tmp_path):
    """A fine-tuning run on MSRA-style files records `word_unit: "char"` in its model folder; the serving graph
    and the pipeline then cut raw text into characters (`5999`, `iPhone`, `５９９９` included) with offsets into it,
    and tag each as the run's own prediction on that sentence written one character a line (as dev is scored)."""
    tokenizer, config = tiny
    initial = tmp_path / "initial"
    electra_tf.ElectraForPreTraining(config).save_pretrained(initial, tokenizer=tokenizer)
    sample = os.path.join(os.path.dirname(__file__), "fixtures", "chinese", "ner_train.txt")
    sentences = ["".join(s.words) for s in read_conll(sample)][:24] + MSRA_LINES
    train, dev = _msra_file(tmp_path / "train.txt", sentences), _msra_file(tmp_path / "dev.txt", MSRA_LINES)
    run_finetuning("conll2003", RunOptions(init_checkpoint=str(initial), output_dir=str(tmp_path / "run"),
                                           train_file=train, dev_file=dev), epochs=1.0, max_seq_length=48,
                   batch_size=8)
    folder = tmp_path / "run" / "trial_0" / "model"
    info = json.loads((folder / "electra_tf.json").read_text(encoding="utf-8"))
    assert info["word_unit"] == "char"

    characters = [(c, i) for i, c in enumerate(QUERY) if not c.isspace()]
    records = electra_tf.pipeline("ner", str(folder), ignore_labels=[])(QUERY)
    assert [(QUERY[r["start"]:r["end"]], r["start"]) for r in records] == characters  # 5999 is 5, 9, 9, 9
    model, _ = load_model(str(folder))
    served = make_serving_task(model, tokenizer, 48, label_names=info["label_names"], word_unit=info["word_unit"])
    outputs = served.serve_text(text=tf.constant([QUERY]))
    assert outputs["word_start"][0].numpy().tolist()[:len(characters)] == [i for _, i in characters]
    labels = [name.decode() for name in outputs["label"][0].numpy()[:len(characters)]]
    assert [r["entity"] for r in records] == labels
    # The run's own featurization of the sentence as an MSRA-style file gives the same tags.
    task = make_task(electra_tf.config.FinetuningConfig.for_task("conll2003", "small", max_seq_length=48),
                     tokenizer, files={"train": train, "dev": _msra_file(tmp_path / "query.txt", [QUERY])})
    assert task.predict(model, task.load("dev"))[0] == labels
    # `predict` on raw text reads the same words: every character's first piece, in order, gets the same label.
    loaded = electra_tf.ElectraForTokenClassification.from_pretrained(str(folder))
    assert loaded.preprocessor.word_unit == "char"
    logits = loaded.predict([QUERY]).logits[0]
    predicted = [info["label_names"][i] for i in logits.argmax(-1)[1:len(characters) + 1]]
    assert predicted == labels  # (the tiny vocabulary gives each character one piece)
    # Cut as before word units were recorded, `５９９９`, `992XR` and `iPhone` were one word each.
    before = make_serving_task(model, tokenizer, 48, word_unit="cjk_char").serve_text(text=tf.constant([QUERY]))
    words = [word.decode() for word in before["words"][0].numpy()[:int(before["num_words"][0])]]
    assert {"５９９９", "992XR", "iPhone", "48"} <= set(words)
