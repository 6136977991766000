"""Writes the fixtures of transformers 4.x's data plumbing: what its data collators, `create_optimizer`, Auto
classes and `prepare_tf_dataset` give on the committed tiny fixtures.

Needs transformers 4.x with its TensorFlow classes (tf-keras) and 🤗 datasets, no torch and no network:

    /work/hf4venv/bin/python tools/make_transformers_data_fixtures.py

Writes `tests/fixtures/transformers_data/{collators,optimization,auto,tf_dataset}.json`, which
`tests/transformers/test_{collators,transformers_optimization,auto,tf_dataset}.py` replay on electra_tf. Arrays
are `{"dtype", "shape", "values"}`. Random collators are recorded where they are deterministic
(`mlm_probability` 1 or 0, `mask_replace_prob` 1) and by their parts (the whole-word grouping with the shuffle
left out, the offset word ids); their rates are checked on electra_tf's own generator.
"""

import json
import os
import random

import numpy as np
import tensorflow as tf
from absl import app, flags

import datasets
import transformers
from transformers import (
    AutoConfig,
    BertTokenizerFast,
    DataCollatorForLanguageModeling,
    DataCollatorForMultipleChoice,
    DataCollatorForTokenClassification,
    DataCollatorForWholeWordMask,
    DataCollatorWithPadding,
    DefaultDataCollator,
    ElectraConfig,
    TFAutoModel,
    TFAutoModelForMaskedLM,
    TFAutoModelForMultipleChoice,
    TFAutoModelForPreTraining,
    TFAutoModelForQuestionAnswering,
    TFAutoModelForSequenceClassification,
    TFAutoModelForTokenClassification,
    TFElectraForQuestionAnswering,
    TFElectraForSequenceClassification,
    TFElectraForTokenClassification,
    create_optimizer,
)

FLAGS = flags.FLAGS
flags.DEFINE_string("vocab", "tests/fixtures/tokenizer/vocab.txt", "The English vocab.txt.")
flags.DEFINE_string("chinese_vocab", "tests/fixtures/hf_cache/hub/models--hfl--chinese-electra-180g-small-"
                    "discriminator/snapshots/e7d7c28ebe568ed7aba96d32545a5204eabfe13a/vocab.txt",
                    "The Chinese vocab.txt (whole-word masking with chinese_ref).")
flags.DEFINE_string("hf_fixtures", "tests/fixtures/hf", "The Hugging Face model folders (Auto classes).")
flags.DEFINE_string("output", "tests/fixtures/transformers_data", "Where the JSON files go.")

TEXTS = ["I love natural language processing!", "Hello, world.", "The unbelievably tokenized McDonald's iPhone",
         "a b"]
PAIRS = ["It was great.", "Not at all", "Quite possibly yes", "no"]
CHINESE = ["我喜欢自然语言处理", "今天天气很好"]
TINY_CONFIG = dict(vocab_size=1418, embedding_size=8, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                   intermediate_size=32, max_position_embeddings=64)


def array(value):
    value = np.asarray(value)
    return {"dtype": value.dtype.name, "shape": list(value.shape), "values": value.tolist()}


def arrays(batch):
    return {key: array(value) for key, value in batch.items()}


def tokenizer_of(vocab, **settings):
    return BertTokenizerFast(vocab_file=vocab, do_lower_case=True, model_max_length=512, **settings)


def word_labels(encoding, index):
    """A token-classification row: the word's index mod 3 on a word's first token, -100 elsewhere."""
    labels, previous = [], None
    for word in encoding.word_ids(index):
        labels.append(-100 if word is None or word == previous else word % 3)
        previous = word
    return labels


def collator_cases(vocab):
    tokenizer = tokenizer_of(vocab)
    encoding = tokenizer(TEXTS)
    plain = [{key: encoding[key][i] for key in encoding} for i in range(len(TEXTS))]
    labelled = [{**feature, "label": i % 2} for i, feature in enumerate(plain)]
    tagged = [{**feature, "labels": word_labels(encoding, i)} for i, feature in enumerate(plain)]
    with_special = [{**feature, "special_tokens_mask": tokenizer.get_special_tokens_mask(
        feature["input_ids"], already_has_special_tokens=True)} for feature in plain]
    fixed = tokenizer(TEXTS, padding="max_length", max_length=16, truncation=True)
    fixed_rows = [{key: fixed[key][i] for key in fixed} for i in range(len(TEXTS))]
    choices = tokenizer([text for text in TEXTS[:2] for _ in range(3)], [pair for _ in range(2) for pair in PAIRS[:3]])
    multiple = [{key: [choices[key][3 * i + c] for c in range(3)] for key in choices} | {"label": i + 1}
                for i in range(2)]
    specs = [
        ("with_padding", DataCollatorWithPadding, {}, {}, labelled, ("tf", "np")),
        ("with_padding_multiple_of_8", DataCollatorWithPadding, {"pad_to_multiple_of": 8}, {}, labelled, ("tf",)),
        ("with_padding_max_length", DataCollatorWithPadding, {"padding": "max_length", "max_length": 32}, {},
         plain, ("np",)),
        ("with_padding_left", DataCollatorWithPadding, {}, {"padding_side": "left"}, labelled, ("np",)),
        ("token_classification", DataCollatorForTokenClassification, {}, {}, tagged, ("tf", "np")),
        ("token_classification_left_multiple_of_8", DataCollatorForTokenClassification,
         {"pad_to_multiple_of": 8, "label_pad_token_id": -1}, {"padding_side": "left"}, tagged, ("tf", "np")),
        ("token_classification_no_labels", DataCollatorForTokenClassification, {}, {}, plain, ("tf",)),
        ("multiple_choice", DataCollatorForMultipleChoice, {}, {}, multiple, ("tf",)),
        ("multiple_choice_multiple_of_8", DataCollatorForMultipleChoice, {"pad_to_multiple_of": 8}, {}, multiple,
         ("tf",)),
        ("default", DefaultDataCollator, {}, {}, [{**row, "label": i} for i, row in enumerate(fixed_rows)],
         ("tf", "np")),
        ("default_float_labels", DefaultDataCollator, {}, {},
         [{**row, "label": 0.5 * i, "text": TEXTS[i]} for i, row in enumerate(fixed_rows)], ("tf", "np")),
        ("default_label_ids", DefaultDataCollator, {}, {},
         [{**row, "label_ids": [i, 1]} for i, row in enumerate(fixed_rows)], ("tf", "np")),
        ("mlm_all_masked_ids", DataCollatorForLanguageModeling,
         {"mlm_probability": 1.0, "mask_replace_prob": 1.0, "random_replace_prob": 0.0}, {},
         [feature["input_ids"] for feature in plain], ("tf", "np")),
        ("mlm_all_masked_dicts_multiple_of_8", DataCollatorForLanguageModeling,
         {"mlm_probability": 1.0, "mask_replace_prob": 1.0, "random_replace_prob": 0.0, "pad_to_multiple_of": 8},
         {}, with_special, ("tf", "np")),
        ("mlm_none_masked", DataCollatorForLanguageModeling, {"mlm_probability": 0.0}, {}, plain, ("tf", "np")),
        ("causal_lm", DataCollatorForLanguageModeling, {"mlm": False}, {"padding_side": "left"}, plain,
         ("tf", "np")),
        ("whole_word_all_masked", DataCollatorForWholeWordMask,
         {"mlm_probability": 1.0, "mask_replace_prob": 1.0, "random_replace_prob": 0.0}, {},
         [{"input_ids": feature["input_ids"]} for feature in plain], ("tf", "np")),
    ]
    cases = []
    for name, collator_class, arguments, settings, features, frameworks in specs:
        for return_tensors in frameworks:
            tokenizer = {} if collator_class is DefaultDataCollator else {"tokenizer": tokenizer_of(vocab, **settings)}
            collator = collator_class(**tokenizer, return_tensors=return_tensors, **arguments)
            output = collator(json.loads(json.dumps(features)))  # (a copy: some collators pop keys)
            cases.append({"name": name, "collator": collator_class.__name__, "arguments": arguments,
                          "tokenizer": settings, "return_tensors": return_tensors, "features": features,
                          "output": arrays(output)})
    return cases


def whole_word_cases(vocab, chinese_vocab):
    """transformers' whole-word choice with its shuffle left out (words in order), on English `##` pieces and
    on Chinese characters marked by `chinese_ref`."""
    cases = []
    shuffle, random.shuffle = random.shuffle, lambda items: None  # (the order words are tried in: the random part)
    for vocabulary, texts, reference in ((vocab, TEXTS, False), (chinese_vocab, CHINESE, True)):
        tokenizer = tokenizer_of(vocabulary)
        for text in texts:
            ids = tokenizer(text)["input_ids"]
            tokens = tokenizer.convert_ids_to_tokens(ids)
            chinese_ref = [i for i, token in enumerate(tokens) if reference and 0 < i < len(tokens) - 1 and i % 2 == 0]
            marked = ["##" + token if i in chinese_ref else token for i, token in enumerate(tokens)]
            for probability in (0.15, 0.3, 0.6):
                collator = DataCollatorForWholeWordMask(tokenizer, mlm_probability=probability, return_tensors="np")
                cases.append({"tokens": tokens, "chinese_ref": chinese_ref, "mlm_probability": probability,
                              "mask_labels": collator._whole_word_mask(marked)})
    random.shuffle = shuffle
    return cases


def offset_word_cases(vocab):
    """transformers' word ids from offsets (`DataCollatorForLanguageModeling(whole_word_mask=True)`)."""
    tokenizer = tokenizer_of(vocab)
    encoding = tokenizer(TEXTS, padding=True, return_offsets_mapping=True, return_special_tokens_mask=True,
                         return_tensors="np")
    word_ids, prob_mask = DataCollatorForLanguageModeling._calc_word_ids_and_prob_mask(
        encoding["offset_mapping"], encoding["special_tokens_mask"])
    return {"offset_mapping": array(encoding["offset_mapping"]),
            "special_tokens_mask": array(encoding["special_tokens_mask"]),
            "word_ids": array(word_ids), "not_word_start": array(prob_mask)}


def optimizer_cases():
    settings = [
        {"init_lr": 2e-5, "num_train_steps": 20, "num_warmup_steps": 5},
        {"init_lr": 5e-5, "num_train_steps": 20, "num_warmup_steps": 0, "weight_decay_rate": 0.01},
        {"init_lr": 1e-3, "num_train_steps": 30, "num_warmup_steps": 6, "min_lr_ratio": 0.1, "power": 2.0,
         "weight_decay_rate": 0.1, "adam_beta1": 0.8, "adam_beta2": 0.99, "adam_epsilon": 1e-6,
         "adam_global_clipnorm": 1.0},
        {"init_lr": 3e-4, "num_train_steps": 12, "num_warmup_steps": 3, "weight_decay_rate": 0.05,
         "adam_clipnorm": 0.5, "include_in_weight_decay": ["LayerNorm"]},
    ]
    cases = []
    model = TFElectraForSequenceClassification(ElectraConfig(**TINY_CONFIG, num_labels=2))
    model(model.dummy_inputs)
    for setting in settings:
        optimizer, schedule = create_optimizer(**setting)
        steps = range(setting["num_train_steps"] + 3)
        decays = getattr(optimizer, "_do_use_weight_decay", lambda name: False)
        decayed = [variable for variable in model.trainable_variables if decays(variable.name)]
        # Three updates of three variables named as transformers' weights are, with fixed gradients.
        variables = [tf.Variable(np.linspace(-1, 1, 4, dtype="float32").reshape(2, 2), name=name)
                     for name in ("encoder/layer/dense/kernel", "encoder/layer/LayerNorm/gamma",
                                  "encoder/layer/dense/bias")]
        for step in range(3):
            gradients = [tf.constant(np.full((2, 2), 0.1 * (step + 1) * (i + 1) - 0.25, "float32"))
                         for i in range(3)]
            optimizer.apply_gradients(zip(gradients, variables))
        cases.append({
            "setting": setting, "optimizer": type(optimizer).__name__, "schedule": type(schedule).__name__,
            "learning_rates": [float(schedule(step)) for step in steps],
            "config": {key: float(value) if isinstance(value, (float, np.floating)) else value
                       for key, value in optimizer.get_config().items()
                       if key in ("beta_1", "beta_2", "epsilon", "clipnorm", "global_clipnorm",
                                  "weight_decay_rate")},
            "decayed_parameters": int(sum(np.prod(variable.shape) for variable in decayed)),
            "all_parameters": int(sum(np.prod(variable.shape) for variable in model.trainable_variables)),
            "variables_after_3_steps": {variable.name.split(":")[0]: variable.numpy().tolist()
                                        for variable in variables}})
    return cases


def auto_cases(folder):
    auto_classes = [TFAutoModel, TFAutoModelForPreTraining, TFAutoModelForMaskedLM,
                    TFAutoModelForSequenceClassification, TFAutoModelForTokenClassification,
                    TFAutoModelForQuestionAnswering, TFAutoModelForMultipleChoice]
    cases = []
    for fixture in ("discriminator", "bert_model"):
        config = AutoConfig.from_pretrained(os.path.join(folder, fixture))
        fields = {key: getattr(config, key) for key in ("model_type", "hidden_size", "num_hidden_layers",
                                                        "num_attention_heads", "intermediate_size", "vocab_size",
                                                        "embedding_size") if hasattr(config, key)}
        cases.append({"fixture": fixture, "config_class": type(config).__name__, "config": fields,
                      "models": {auto.__name__: type(auto.from_config(config)).__name__ for auto in auto_classes}})
    labelled = AutoConfig.from_pretrained(os.path.join(folder, "discriminator"), num_labels=3,
                                          id2label={0: "a", 1: "b", 2: "c"}, label2id={"a": 0, "b": 1, "c": 2})
    cases.append({"fixture": "discriminator", "labels": {"num_labels": labelled.num_labels,
                                                          "id2label": labelled.id2label}})
    return cases


def tf_dataset_cases(vocab):
    tokenizer = tokenizer_of(vocab)
    encoding = tokenizer(TEXTS, PAIRS)
    rows = [{key: encoding[key][i] for key in encoding} | {"label": i % 2, "text": TEXTS[i], "idx": i}
            for i in range(len(TEXTS))]
    config = ElectraConfig(**TINY_CONFIG)
    cases = []
    for name, model, table, arguments in (
            ("sequence_classification_tokenizer", TFElectraForSequenceClassification(config), rows,
             {"tokenizer": True}),
            ("token_classification_collator", TFElectraForTokenClassification(config),
             [{key: value for key, value in row.items() if key != "label"} | {"labels": word_labels(encoding, i)}
              for i, row in enumerate(rows)], {"collator": "DataCollatorForTokenClassification"}),
            ("question_answering_default", TFElectraForQuestionAnswering(config),
             [{key: value[:6] for key, value in row.items() if key in encoding}
              | {"start_positions": i, "end_positions": i + 1} for i, row in enumerate(rows)], {})):
        collate_fn = (DataCollatorForTokenClassification(tokenizer, return_tensors="np")
                      if arguments.get("collator") else None)
        dataset = model.prepare_tf_dataset(datasets.Dataset.from_list(table), batch_size=3, shuffle=False,
                                           tokenizer=tokenizer if arguments.get("tokenizer") else None,
                                           collate_fn=collate_fn)
        batches = []
        for features, labels in dataset:
            features = features if isinstance(features, dict) else {"<tensor>": features}
            labels = labels if isinstance(labels, dict) else {"<tensor>": labels}
            batches.append({"features": arrays(features), "labels": arrays(labels)})
        cases.append({"name": name, "model": type(model).__name__, "rows": table, "arguments": arguments,
                      "batch_size": 3, "batches": batches})
    return cases


def write(name, value):
    path = os.path.join(FLAGS.output, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, ensure_ascii=False, separators=(",", ":"), default=lambda o: np.asarray(o).tolist())
        f.write("\n")
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


def main(argv):
    del argv
    os.makedirs(FLAGS.output, exist_ok=True)
    versions = {"transformers": transformers.__version__, "tensorflow": tf.__version__,
                "datasets": datasets.__version__}
    write("collators.json", {"versions": versions, "texts": TEXTS, "cases": collator_cases(FLAGS.vocab),
                             "offset_words": offset_word_cases(FLAGS.vocab),
                             "whole_words": whole_word_cases(FLAGS.vocab, FLAGS.chinese_vocab)})
    write("optimization.json", {"versions": versions, "tiny_config": TINY_CONFIG, "cases": optimizer_cases()})
    write("auto.json", {"versions": versions, "cases": auto_cases(FLAGS.hf_fixtures)})
    write("tf_dataset.json", {"versions": versions, "tiny_config": TINY_CONFIG, "cases": tf_dataset_cases(FLAGS.vocab)})


if __name__ == "__main__":
    app.run(main)
