"""`model.prepare_tf_dataset(...)` on electra_tf: the batches transformers 4.57 gave on a 🤗 `datasets.Dataset`
(tests/fixtures/transformers_data/tf_dataset.json, tools/make_transformers_data_fixtures.py), from a
`datasets.Dataset`, a list of rows and a dict of columns; and a room model fits on what it prepares."""

import json
from pathlib import Path

import datasets
import numpy as np
import pytest
import tensorflow as tf

from electra_tf import ElectraConfig
from electra_tf.transformers import names
from electra_tf.transformers.collators import DataCollatorForLanguageModeling, DataCollatorForTokenClassification
from electra_tf.transformers.optimization import create_optimizer
from electra_tf.transformers.tf_dataset import prepare_tf_dataset
from electra_tf.transformers.tokenizer import ElectraTokenizer

FIXTURES = Path(__file__).parents[1] / "fixtures"
RECORDED = json.loads((FIXTURES / "transformers_data" / "tf_dataset.json").read_text(encoding="utf-8"))
TOKENIZER = ElectraTokenizer(str(FIXTURES / "tokenizer" / "vocab.txt"))


def tiny(class_name, **arguments):
    return getattr(names, class_name)(ElectraConfig(**RECORDED["tiny_config"]), **arguments)


def as_form(rows, form):
    if form == "datasets":
        return datasets.Dataset.from_list(rows)
    if form == "columns":
        return {key: [row[key] for row in rows] for key in rows[0]}
    return rows


def by_name(structure):
    return structure if isinstance(structure, dict) else {"<tensor>": structure}


@pytest.mark.parametrize("form", ["datasets", "rows", "columns"])
@pytest.mark.parametrize("case", RECORDED["cases"], ids=lambda case: case["name"])
def test_prepared_batches_are_transformers(case, form):
    model = tiny(case["model"])
    collate_fn = (DataCollatorForTokenClassification(TOKENIZER, return_tensors="np")
                  if case["arguments"].get("collator") else None)
    tokenizer = TOKENIZER if case["arguments"].get("tokenizer") else None
    prepared = prepare_tf_dataset(model, as_form(case["rows"], form), batch_size=case["batch_size"], shuffle=False,
                                  tokenizer=tokenizer, collate_fn=collate_fn)
    batches = list(prepared)
    assert len(batches) == len(case["batches"])
    for (features, labels), expected in zip(batches, case["batches"]):
        for ours, theirs in ((by_name(features), expected["features"]), (by_name(labels), expected["labels"])):
            assert sorted(ours) == sorted(theirs)
            for key, value in ours.items():
                assert value.dtype.name == theirs[key]["dtype"], key
                np.testing.assert_array_equal(value.numpy(), theirs[key]["values"], err_msg=key)


def test_a_room_model_fits_one_step_on_what_it_prepares():
    case = RECORDED["cases"][0]
    model = tiny("TFElectraForSequenceClassification")
    rows = datasets.Dataset.from_list(case["rows"])
    prepared = model.prepare_tf_dataset(rows, batch_size=2, shuffle=True, tokenizer=TOKENIZER)
    assert prepared.element_spec[0]["input_ids"].shape.as_list() == [None, None]
    assert len(list(prepared)) == 2  # shuffled: drop_remainder follows shuffle (4 rows, 2 full batches)
    optimizer, _ = create_optimizer(init_lr=1e-3, num_train_steps=2, num_warmup_steps=0, weight_decay_rate=0.01)
    model.compile(optimizer=optimizer)  # no loss: the model's own, as transformers' TF models
    before = [variable.numpy().copy() for variable in model.trainable_variables]
    history = model.fit(prepared.take(1), epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    assert any(not np.array_equal(a, b.numpy()) for a, b in zip(before, model.trainable_variables))


@pytest.mark.parametrize("class_name, collator_class", [
    ("TFElectraForMaskedLM", DataCollatorForLanguageModeling),
    ("TFElectraForTokenClassification", DataCollatorForTokenClassification)])
def test_the_task_guides_masked_lm_and_token_classification_recipes_fit(class_name, collator_class):
    """transformers' task guides: a collator with `return_tensors="tf"` as `collate_fn`, `compile` without a loss."""
    rows = RECORDED["cases"][1]["rows"]  # (token classification rows: word labels, -100 on special tokens)
    if collator_class is DataCollatorForLanguageModeling:
        rows = [{"input_ids": row["input_ids"]} for row in rows]
    model = tiny(class_name, **({} if collator_class is DataCollatorForLanguageModeling else {"num_labels": 3}))
    collator = collator_class(TOKENIZER, return_tensors="tf", **(
        {"mlm_probability": 0.5, "seed": 0} if collator_class is DataCollatorForLanguageModeling else {}))
    prepared = model.prepare_tf_dataset(datasets.Dataset.from_list(rows), batch_size=2, collate_fn=collator)
    features, labels = next(iter(prepared))
    assert labels.shape == features["input_ids"].shape and int(tf.reduce_sum(tf.cast(labels != -100, tf.int32))) > 0
    model.compile(optimizer=create_optimizer(init_lr=1e-3, num_train_steps=2, num_warmup_steps=0)[0])
    history = model.fit(prepared, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])


def test_rows_without_labels_give_features_only_and_other_columns_are_left_out():
    model = tiny("TFElectraModel")
    rows = [{"input_ids": [2, 5, 3], "text": "x", "idx": 0}, {"input_ids": [2, 6, 7, 3], "text": "y", "idx": 1}]
    (features,) = list(prepare_tf_dataset(model, rows, batch_size=2, shuffle=False, tokenizer=TOKENIZER,
                                          prefetch=False))
    assert isinstance(features, dict) and sorted(features) == ["attention_mask", "input_ids"]


def test_bad_input_is_refused_in_one_line():
    model = tiny("TFElectraModel")
    with pytest.raises(ValueError, match=r"^batch_size=0: a number of examples \(an int >= 1\) is needed$"):
        prepare_tf_dataset(model, [{"input_ids": [2, 3]}], batch_size=0)
    with pytest.raises(TypeError, match=r"^dataset: a datasets.Dataset, a list of dicts \(one per example\) or a dict "
                                        r"of columns is needed, got str$"):
        prepare_tf_dataset(model, "train.csv")
    with pytest.raises(ValueError, match=r"^dataset: it has no rows$"):
        prepare_tf_dataset(model, [])
    with pytest.raises(ValueError, match=r"^dataset: its columns differ in length"):
        prepare_tf_dataset(model, {"input_ids": [[2, 3]], "label": [0, 1]})


def test_the_prepared_dataset_runs_in_a_graph():
    model = tiny("TFElectraForSequenceClassification")
    prepared = prepare_tf_dataset(model, RECORDED["cases"][0]["rows"], batch_size=4, shuffle=False,
                                  tokenizer=TOKENIZER)
    total = prepared.reduce(tf.constant(0, tf.int64), lambda count, batch: count + tf.reduce_sum(batch[1]))
    assert int(total) == sum(row["label"] for row in RECORDED["cases"][0]["rows"])
