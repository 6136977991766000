"""`electra_tf.pipeline` given what it does not take (None, a number, bytes, nested lists, a dict without a field
it needs): one ValueError or TypeError line saying what the pipeline takes, before the model runs."""

import re

import pytest

import electra_tf
from electra_tf import (
    ElectraConfig,
    ElectraForMaskedLM,
    ElectraForQuestionAnswering,
    ElectraForSequenceClassification,
    ElectraForTokenClassification,
    ElectraTokenizer,
)

CLASSIFICATION = ("a text-classification pipeline takes a text (str), {'text': ..., 'text_pair': ...}, or a list "
                  "of either")
TAGGING = "a token-classification pipeline takes a text (str) or a list of texts"
FILL = "a fill-mask pipeline takes a text (str) holding [MASK], or a list of them"
QA = ("a question-answering pipeline takes question= and context= (texts, or lists of texts), or "
      "{'question': ..., 'context': ...} or a list of them")


@pytest.fixture(scope="module")
def pipelines(tmp_path_factory):
    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "alice", "met", "bob"]
    tokenizer = ElectraTokenizer(vocabulary)
    config = ElectraConfig(vocab_size=len(vocabulary), embedding_size=8, hidden_size=8, num_layers=1, num_heads=1,
                           intermediate_size=8, max_position_embeddings=32)
    folder = tmp_path_factory.mktemp("pipelines")
    ElectraForSequenceClassification(config, num_labels=2).save_pretrained(folder / "single", tokenizer=tokenizer)
    ElectraForSequenceClassification(config, num_labels=2).save_pretrained(folder / "pair", tokenizer=tokenizer,
                                                                           text_pair=True)
    ElectraForTokenClassification(config, num_labels=2).save_pretrained(folder / "tags", tokenizer=tokenizer,
                                                                        label_names=["O", "B-PER"])
    ElectraForQuestionAnswering(config, head="huggingface").save_pretrained(folder / "qa", tokenizer=tokenizer)
    ElectraForMaskedLM(config).save_pretrained(folder / "fill", tokenizer=tokenizer)
    return {"single": electra_tf.pipeline("text-classification", folder / "single"),
            "pair": electra_tf.pipeline("text-classification", folder / "pair"),
            "tags": electra_tf.pipeline("token-classification", folder / "tags"),
            "qa": electra_tf.pipeline("question-answering", folder / "qa"),
            "fill": electra_tf.pipeline("fill-mask", folder / "fill"), "folder": folder}


@pytest.mark.parametrize("name, call, error, message", [
    ("single", lambda p: p(None), TypeError, f"{CLASSIFICATION}; got None"),
    ("single", lambda p: p(3), TypeError, f"{CLASSIFICATION}; got int 3"),
    ("single", lambda p: p(b"alice"), TypeError, f"{CLASSIFICATION}; got bytes b'alice'"),
    ("single", lambda p: p(["alice", b"bob"]), TypeError,
     f"inputs[1] is bytes, not a text: decode it first (e.g. value.decode('utf-8')); {CLASSIFICATION}"),
    ("single", lambda p: p([["alice", "bob"]]), TypeError,
     f"inputs[0] is list ['alice', 'bob'], not a text; {CLASSIFICATION}"),
    ("single", lambda p: p({"txt": "alice"}), ValueError, f"inputs has no 'text'; {CLASSIFICATION}"),
    ("single", lambda p: p({"text": None}), TypeError, f"inputs['text'] is None, not a text; {CLASSIFICATION}"),
    ("pair", lambda p: p({"text": "alice"}), ValueError,
     "inputs has no 'text_pair'; this model reads text and text_pair: give {'text': ..., 'text_pair': ...}"),
    ("pair", lambda p: p([{"text": "a", "text_pair": "b"}, {"text": "a"}]), ValueError,
     "inputs[1] has no 'text_pair'; this model reads text and text_pair: give {'text': ..., 'text_pair': ...}"),
    ("pair", lambda p: p({"text": "a", "text_pair": "b", "label": 1}), ValueError,
     f"inputs has the unknown key 'label'; {CLASSIFICATION}"),
    ("tags", lambda p: p(None), TypeError, f"{TAGGING}; got None"),
    ("tags", lambda p: p(7), TypeError, f"{TAGGING}; got int 7"),
    ("tags", lambda p: p([["alice"]]), TypeError, f"inputs[0] is list ['alice'], not a text; {TAGGING}"),
    ("qa", lambda p: p(question="who?"), ValueError, f"no context given; {QA}"),
    ("qa", lambda p: p({"question": "who?"}), ValueError, f"inputs has no 'context'; {QA}"),
    ("qa", lambda p: p("who met bob?"), TypeError, f"{QA}; got str 'who met bob?'"),
    ("qa", lambda p: p(["who?"]), TypeError, f"inputs[0] is str 'who?'; {QA}"),
    ("qa", lambda p: p(question="who?", context=b"alice met bob"), TypeError,
     f"context is bytes, not a text: decode it first (e.g. value.decode('utf-8')); {QA}"),
    ("qa", lambda p: p(question=["who?"], context=[["alice"]]), TypeError,
     f"context[0] is list ['alice'], not a text; {QA}"),
])
def test_an_input_the_pipeline_does_not_take_is_one_line_saying_what_it_takes(pipelines, name, call, error,
                                                                              message):
    with pytest.raises(error, match="^" + re.escape(message) + "$"):
        call(pipelines[name])


@pytest.mark.parametrize("name, call, error, message", [
    ("tags", lambda p: p("alice", aggregation_strategy="longest"), ValueError,
     "aggregation_strategy must be one of ['none', 'simple', 'first', 'average', 'max'], got 'longest'"),
    ("single", lambda p: p("alice", function_to_apply="relu"), ValueError,
     "function_to_apply must be one of ['softmax', 'sigmoid', 'none'], got 'relu'"),
    ("single", lambda p: p("alice", top_k=0), ValueError, "top_k must be a positive int or None (every label), got 0"),
    ("fill", lambda p: p("alice met bob"), ValueError, f"inputs holds no [MASK] token; {FILL}"),
    ("fill", lambda p: p(["alice [MASK]", "bob"]), ValueError, f"inputs[1] holds no [MASK] token; {FILL}"),
    ("qa", lambda p: p(question="who?", context="alice met bob", max_seq_len=20, doc_stride=40), ValueError,
     "doc_stride (40) is larger than max_seq_len (20)"),
    ("qa", lambda p: p(question="who?", context="alice", top_k=0), ValueError,
     "top_k and max_answer_len must be at least 1, got 0 and 15"),
    ("qa", lambda p: p(question="who?", context="alice", topk=2), TypeError,
     "unknown option 'topk'; the options are ['align_to_words', 'doc_stride', 'handle_impossible_answer', "
     "'max_answer_len', 'max_question_len', 'max_seq_len', 'top_k']"),
    ("folder", lambda folder: electra_tf.pipeline("ner", folder / "tags", word_unit="char"), ValueError,
     "word_unit is not an option: a token-classification pipeline cuts raw text into the words its model was "
     "trained on, as its folder records"),
])
def test_an_option_the_pipeline_does_not_take_is_one_line_naming_it(pipelines, name, call, error, message):
    with pytest.raises(error, match="^" + re.escape(message) + "$"):
        call(pipelines[name])


def test_the_inputs_it_takes_still_run(pipelines):
    assert sorted(pipelines["single"]({"text": "alice met bob"})) == ["label", "score"]  # a dict in, a dict out
    assert len(pipelines["single"](("alice", "bob"))) == 2
    assert len(pipelines["pair"]([{"text": "alice", "text_pair": "bob"}])) == 1
    assert pipelines["tags"](iter(["alice met bob"]))[0] is not None
    assert sorted(pipelines["qa"]({"question": "who?", "context": "alice met bob"})) == ["answer", "end", "score",
                                                                                       "start"]
