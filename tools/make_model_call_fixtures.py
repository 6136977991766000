"""Records what transformers 4.x's TensorFlow ELECTRA classes return for the calls its documentation makes.

Run in a venv with transformers 4.x (the last with TensorFlow classes), tf-keras and torch (to read the
committed PyTorch-layout safetensors), from the repository root:

    TF_USE_LEGACY_KERAS=1 python tools/make_model_call_fixtures.py

It loads the committed tiny models of `tests/fixtures/hf/` with `TFElectra*.from_pretrained(folder)` and writes
`tests/fixtures/model_calls/records.json`: for each model, the inputs, and what each call gives — outputs with
`output_hidden_states=True, output_attentions=True` (keys in order, values), `return_dict=False` tuples' lengths,
losses for labels given as transformers' documentation gives them (`[batch]`, `[batch, 1]`, a scalar for one
example, -100 where none), `from_pretrained(..., num_labels=, id2label=, label2id=)`'s config and logits shape,
and `predict`'s keys. `tests/transformers/test_model_calls.py` replays every record on electra_tf (1e-4).
"""

import json
import os
import sys

import numpy as np
import tensorflow as tf
import transformers

FIXTURES = "tests/fixtures/hf"
OUTPUT = "tests/fixtures/model_calls/records.json"
IDS = [[2, 10, 11, 12, 13, 3, 0, 0], [2, 14, 15, 3, 16, 17, 18, 3]]
MASK = [[1, 1, 1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1]]
TYPES = [[0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 1, 1, 1, 1]]
MODELS = {  # fixture folder: (transformers class, {label form: labels})
    "discriminator": ("TFElectraForPreTraining", {}),  # (transformers' TF class takes no labels)
    "generator": ("TFElectraForMaskedLM", {"per_token": {"labels": [[-100, 10, -100, 12, -100, -100, -100, -100],
                                                                   [-100, -100, 15, -100, -100, 17, -100, -100]]}}),
    "sequence_classification": ("TFElectraForSequenceClassification", {
        "batch": {"labels": [1, 0]}, "batch_by_1": {"labels": [[1], [0]]}}),
    "token_classification": ("TFElectraForTokenClassification", {
        "per_token": {"labels": [[-100, 1, 2, 0, 1, -100, -100, -100], [-100, 0, 0, -100, 2, 1, 1, -100]]}}),
    "question_answering": ("TFElectraForQuestionAnswering", {
        "batch": {"start_positions": [1, 4], "end_positions": [3, 6]},
        "batch_by_1": {"start_positions": [[1], [4]], "end_positions": [[3], [6]]}}),
    "electra_model_projected": ("TFElectraModel", {}),
}


def _plain(value):
    if isinstance(value, (tuple, list)):
        return [_plain(part) for part in value]
    return np.asarray(value).tolist()


def _inputs(folder):
    if folder == "multiple_choice":
        return {name: tf.constant([[row, row, row] for row in values]) for name, values in
                (("input_ids", IDS), ("attention_mask", MASK), ("token_type_ids", TYPES))}
    return {"input_ids": tf.constant(IDS), "attention_mask": tf.constant(MASK), "token_type_ids": tf.constant(TYPES)}


def record(folder, class_name, label_forms):
    cls = getattr(transformers, class_name)
    model = cls.from_pretrained(os.path.join(FIXTURES, folder), from_pt=True)
    inputs = _inputs(folder)
    outputs = model(inputs, output_hidden_states=True, output_attentions=True, training=False)
    entry = {"class": class_name, "inputs": {key: _plain(value) for key, value in inputs.items()},
             "keys": list(outputs.keys()), "outputs": {key: _plain(value) for key, value in outputs.items()},
             "tuple_length": len(model(inputs, return_dict=False, training=False)),
             "losses": {}}
    for form, labels in label_forms.items():
        result = model({**inputs, **{key: tf.constant(value) for key, value in labels.items()}}, training=False)
        entry["losses"][form] = {"labels": labels, "loss": _plain(result.loss), "keys": list(result.keys())}
    if "batch" in label_forms:  # one example, its label a scalar (the TF docstrings' `tf.constant(1)`)
        one = {key: value[:1] for key, value in inputs.items()}
        labels = {key: tf.constant(value[0]) for key, value in label_forms["batch"].items()}
        result = model({**one, **labels}, training=False)
        entry["losses"]["scalar"] = {"labels": {key: int(value) for key, value in labels.items()},
                                     "loss": _plain(result.loss), "keys": list(result.keys())}
    predicted = model.predict(inputs, verbose=0)
    entry["predict_keys"] = list(predicted.keys())
    return entry


def record_labels():
    """`from_pretrained` of an encoder checkpoint with a new head of named labels, as the task guides do."""
    names = {0: "O", 1: "B-PER", 2: "I-PER", 3: "B-LOC", 4: "I-LOC"}
    model = transformers.TFElectraForTokenClassification.from_pretrained(
        os.path.join(FIXTURES, "discriminator"), from_pt=True, num_labels=5, id2label=names,
        label2id={name: i for i, name in names.items()})
    logits = model(_inputs("discriminator"), training=False).logits
    return {"num_labels": model.config.num_labels, "id2label": {str(k): v for k, v in model.config.id2label.items()},
            "label2id": model.config.label2id, "logits_shape": list(logits.shape)}


def main():
    records = {folder: record(folder, *spec) for folder, spec in MODELS.items()}
    records["from_pretrained_with_labels"] = record_labels()
    records["_made_with"] = {"transformers": transformers.__version__, "tensorflow": tf.__version__,
                             "script": "tools/make_model_call_fixtures.py"}
    os.makedirs(os.path.dirname(OUTPUT), exist_ok=True)
    with open(OUTPUT, "w", encoding="utf-8") as f:
        json.dump(records, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {OUTPUT} ({os.path.getsize(OUTPUT)} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
