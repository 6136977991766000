"""Records what transformers 4.x's pipelines answer on tiny ELECTRA models: the fixtures `electra_tf.pipeline` replays.

Needs transformers 4.x and CPU torch (the tests that read the fixtures need neither). Run from the repository root:

    /work/hf4venv/bin/python tools/make_pipeline_fixtures.py --output_dir=tests/fixtures/pipelines

It writes one tiny random model a pipeline kind (`save_pretrained` folders: `config.json`, `model.safetensors`,
the tokenizer files) on a vocabulary of whole words, "##" pieces and punctuation, so that pipelines meet
sub-words, unknown words and punctuation: `generator` (`ElectraForMaskedLM`, fill-mask), `encoder`
(`ElectraModel`, feature-extraction), `tagger` (`ElectraForTokenClassification`, IOB2 person/place/organisation
labels), `classifier` (`ElectraForSequenceClassification`, 3 labels), `multi_label` (the same with
`problem_type="multi_label_classification"`) and `answerer` (`ElectraForQuestionAnswering`), each with
weights drawn wide (`initializer_range` 0.5) so that scores are far from ties. `records.json` holds, for each
call (`model`, `task`, the call's `inputs` and `options`), transformers' `output` (scores as floats; for
`return_tensors=True` the tensor as a nested list).
"""

import argparse
import json
import os

import numpy as np
import torch
import transformers

VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", "?", "!", "alice", "bob", "met", "in",
              "paris", "london", "berlin", "the", "cat", "sat", "on", "mat", "who", "where", "did", "what", "is",
              "capital", "of", "france", "city", "a", "and", "went", "to", "new", "york", "jo", "##hn", "micro",
              "##soft", "##s", "##ing", "work", "at", "big", "small", "dog", "ran", "good", "bad", "film", "was",
              "very", "not", "i", "it", "this", "bo", "##b", "##ly"]
TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG"]
CONFIG = dict(vocab_size=len(VOCABULARY), embedding_size=8, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
              intermediate_size=32, max_position_embeddings=64, initializer_range=0.5)
MODELS = {
    "generator": ("ElectraForMaskedLM", {}),
    "encoder": ("ElectraModel", {}),
    "tagger": ("ElectraForTokenClassification", {"id2label": dict(enumerate(TAGS))}),
    "classifier": ("ElectraForSequenceClassification", {"id2label": {0: "negative", 1: "neutral", 2: "positive"}}),
    "multi_label": ("ElectraForSequenceClassification", {"id2label": {0: "sports", 1: "politics", 2: "science"},
                                                         "problem_type": "multi_label_classification"}),
    "answerer": ("ElectraForQuestionAnswering", {}),
}

NER_TEXTS = ["Alice met Bob in Paris.", "John went to New York, to work at Microsoft and zzz Bobly."]
CONTEXT = "Alice met Bob in Paris. The cat sat on the mat in London, and the dog ran to Berlin."
# (model, task, inputs, options) of each recorded call; inputs is the positional argument, or the keywords.
CALLS = [
    ("generator", "fill-mask", "The capital of France is [MASK].", {}),
    ("generator", "fill-mask", ["alice met [MASK] in paris.", "the [MASK] sat on the mat."], {"top_k": 3}),
    ("generator", "fill-mask", "[MASK] met [MASK] in paris.", {"top_k": 2}),
    ("generator", "fill-mask", "the [MASK] sat on the mat.", {"targets": ["cat", "dog", "Paris", "citys"]}),
    ("generator", "fill-mask", "the [MASK] sat.", {"targets": "dog", "top_k": 4}),
    ("encoder", "feature-extraction", "Alice met Bob.", {}),
    ("encoder", "feature-extraction", ["the cat sat", "alice met bob in paris ."], {}),
    ("encoder", "feature-extraction", "the cat sat.", {"return_tensors": True}),
    *[("tagger", "ner", NER_TEXTS[0], {"aggregation_strategy": strategy} if strategy else {})
      for strategy in (None, "none", "simple", "first", "average", "max")],
    *[("tagger", "token-classification", NER_TEXTS, {"aggregation_strategy": strategy, "ignore_labels": []})
      for strategy in ("none", "simple", "first", "average", "max")],
    ("tagger", "ner", NER_TEXTS[1], {"ignore_labels": ["O", "I-PER"]}),
    ("classifier", "text-classification", "this film was very good.", {}),
    ("classifier", "text-classification", ["good film", "bad film", "it was not good"], {}),
    ("classifier", "text-classification", "this film was very good.", {"top_k": None}),
    ("classifier", "text-classification", ["good film", "bad film"], {"top_k": 2}),
    ("classifier", "text-classification", "good film", {"top_k": 1}),
    ("classifier", "text-classification", "good film", {"function_to_apply": "sigmoid"}),
    ("classifier", "text-classification", "good film", {"function_to_apply": "none", "top_k": None}),
    ("classifier", "text-classification", "good film", {"function_to_apply": "softmax", "top_k": 2}),
    ("classifier", "text-classification", "good film", {"return_all_scores": True}),
    ("classifier", "text-classification", ["good film", "bad"], {"return_all_scores": True}),
    ("classifier", "text-classification", "good film", {"return_all_scores": False}),
    ("classifier", "text-classification", {"text": "good film", "text_pair": "it was bad"}, {}),
    ("classifier", "text-classification", [{"text": "good", "text_pair": "bad"}, {"text": "a film", "text_pair": "i"}],
     {"top_k": None}),
    ("multi_label", "text-classification", "the big cat sat in paris.", {}),
    ("multi_label", "text-classification", ["the big cat", "alice"], {"top_k": None}),
    ("answerer", "question-answering", {"question": "Who met Bob?", "context": CONTEXT}, {}),
    ("answerer", "question-answering", {"question": "Where did the cat sit?", "context": CONTEXT}, {"top_k": 3}),
    ("answerer", "question-answering", {"question": "Who met Bob?", "context": CONTEXT},
     {"handle_impossible_answer": True, "top_k": 2}),
    ("answerer", "question-answering", {"question": "Who met Bob?", "context": CONTEXT}, {"max_answer_len": 2}),
    ("answerer", "question-answering", {"question": "Who met Bob?", "context": CONTEXT},
     {"max_seq_len": 16, "doc_stride": 4, "top_k": 3}),
    ("answerer", "question-answering", {"question": "What is it?", "context": CONTEXT},
     {"max_seq_len": 20, "doc_stride": 6, "handle_impossible_answer": True}),
    ("answerer", "question-answering", {"question": ["Who met Bob?", "Where is the dog?"], "context": CONTEXT}, {}),
    ("answerer", "question-answering", {"question": ["Who?", "Where?"], "context": ["Alice met Bob.", "In Paris."]},
     {"top_k": 2}),
    ("answerer", "question-answering", [{"question": "Who met Bob?", "context": "Alice met Bob in Paris."},
                                        {"question": "what?", "context": "the cat sat on the mat."}], {}),
]


def save_models(output_dir, seed):
    vocab_file = os.path.join(output_dir, "vocab.txt")
    os.makedirs(output_dir, exist_ok=True)
    with open(vocab_file, "w", encoding="utf-8") as f:
        f.write("".join(token + "\n" for token in VOCABULARY))
    tokenizer = transformers.BertTokenizerFast(vocab_file=vocab_file, do_lower_case=True)
    os.remove(vocab_file)
    for index, (name, (architecture, extra)) in enumerate(MODELS.items()):
        torch.manual_seed(seed + index)
        config = transformers.ElectraConfig(**CONFIG, **extra)
        model = getattr(transformers, architecture)(config).eval()
        folder = os.path.join(output_dir, name)
        model.save_pretrained(folder)
        tokenizer.save_pretrained(folder)


def plain(value):
    """JSON values of a pipeline's output (NumPy and torch scalars and tensors as floats and lists)."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, torch.Tensor):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def record(output_dir):
    records, pipelines = [], {}
    for name, task, inputs, options in CALLS:
        key = (name, task)
        if key not in pipelines:
            pipelines[key] = transformers.pipeline(task, model=os.path.join(output_dir, name), framework="pt")
        run = pipelines[key]
        with torch.no_grad():
            output = run(**inputs, **options) if task == "question-answering" and isinstance(inputs, dict) and \
                isinstance(inputs["question"], list) else run(inputs, **options)
        records.append({"model": name, "task": task, "inputs": inputs, "options": options, "output": plain(output)})
    with open(os.path.join(output_dir, "records.json"), "w", encoding="utf-8") as f:
        json.dump({"transformers": transformers.__version__, "torch": torch.__version__, "records": records}, f,
                  ensure_ascii=False, indent=None, separators=(",", ":"))
        f.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output_dir", default="tests/fixtures/pipelines")
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args()
    save_models(arguments.output_dir, arguments.seed)
    record(arguments.output_dir)


if __name__ == "__main__":
    main()
