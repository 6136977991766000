"""transformers 4.x's task guides, TensorFlow tab, run as written with `from electra_tf import ...`.

Each test is the guide's code (preprocessing with 🤗 datasets, the collator, `create_optimizer`,
`TFAutoModelFor*.from_pretrained(..., num_labels=, id2label=, label2id=)`, `model.prepare_tf_dataset`,
`compile(optimizer=...)` without a loss, `fit` with `KerasMetricCallback`, inference with the tokenizer and
`model(**inputs).logits`), on a tiny checkpoint and a few rows instead of the hub's models and datasets.
"""

from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

datasets = pytest.importorskip("datasets")

from electra_tf import (  # noqa: E402  (as the guides import from transformers)
    AdamWeightDecay,
    AutoTokenizer,
    DataCollatorForLanguageModeling,
    DataCollatorForMultipleChoice,
    DataCollatorForTokenClassification,
    DataCollatorWithPadding,
    DefaultDataCollator,
    ElectraConfig,
    ElectraForMaskedLM,
    ElectraForPreTraining,
    ElectraTokenizer,
    KerasMetricCallback,
    TFAutoModelForMaskedLM,
    TFAutoModelForMultipleChoice,
    TFAutoModelForQuestionAnswering,
    TFAutoModelForSequenceClassification,
    TFAutoModelForTokenClassification,
    create_optimizer,
    pipeline,
)

FIXTURES = Path(__file__).parents[1] / "fixtures"
SENTENCES = ["Return the number of lines in the file.", "Read the data from the stream.",
             "The default value is None.", "This method will raise an exception if the file is empty.",
             "Write the string to the output stream.", "Return True if the object is a class.",
             "The encoding argument is optional.", "Compare two Decimal values and return the result."]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A tiny ELECTRA discriminator and generator on the fixture vocabulary, saved as `save_pretrained` does."""
    tokenizer = ElectraTokenizer(str(FIXTURES / "tokenizer" / "vocab.txt"))
    config = ElectraConfig(vocab_size=tokenizer.vocabulary_size(), embedding_size=16, hidden_size=32,
                           num_layers=2, num_heads=2, intermediate_size=64, max_position_embeddings=128)
    folders = {}
    for name, cls in (("discriminator", ElectraForPreTraining), ("generator", ElectraForMaskedLM)):
        folders[name] = str(tmp_path_factory.mktemp(name))
        cls(config).save_pretrained(folders[name], tokenizer=tokenizer)
    return folders


def _train_as_the_guides_do(model, dataset, data_collator, optimizer, batch_size=2):
    """The guides' Keras training: `prepare_tf_dataset`, `compile` without a loss, `fit` one epoch (finite losses)."""
    tf_train_set = model.prepare_tf_dataset(dataset, shuffle=True, batch_size=batch_size, collate_fn=data_collator)
    model.compile(optimizer=optimizer)
    history = model.fit(x=tf_train_set, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"]).all()


def test_text_classification_guide(checkpoint):
    imdb = datasets.Dataset.from_dict({"text": SENTENCES, "label": [i % 2 for i in range(8)]})
    tokenizer = AutoTokenizer.from_pretrained(checkpoint["discriminator"])

    def preprocess_function(examples):
        return tokenizer(examples["text"], truncation=True)

    tokenized_imdb = imdb.map(preprocess_function, batched=True)
    data_collator = DataCollatorWithPadding(tokenizer=tokenizer, return_tensors="tf")

    def compute_metrics(eval_pred):
        predictions, labels = eval_pred
        predictions = np.argmax(predictions, axis=1)
        return {"accuracy": float((predictions == labels).mean())}

    id2label = {0: "NEGATIVE", 1: "POSITIVE"}
    label2id = {"NEGATIVE": 0, "POSITIVE": 1}
    batch_size = 4
    num_epochs = 2
    batches_per_epoch = len(tokenized_imdb) // batch_size
    total_train_steps = int(batches_per_epoch * num_epochs)
    optimizer, schedule = create_optimizer(init_lr=2e-5, num_warmup_steps=0, num_train_steps=total_train_steps)
    model = TFAutoModelForSequenceClassification.from_pretrained(
        checkpoint["discriminator"], num_labels=2, id2label=id2label, label2id=label2id)
    tf_train_set = model.prepare_tf_dataset(tokenized_imdb, shuffle=True, batch_size=batch_size,
                                            collate_fn=data_collator)
    tf_validation_set = model.prepare_tf_dataset(tokenized_imdb, shuffle=False, batch_size=batch_size,
                                                 collate_fn=data_collator)
    model.compile(optimizer=optimizer)  # No loss argument!
    metric_callback = KerasMetricCallback(metric_fn=compute_metrics, eval_dataset=tf_validation_set)
    history = model.fit(x=tf_train_set, validation_data=tf_validation_set, epochs=num_epochs,
                        callbacks=[metric_callback], verbose=0)
    assert set(history.history) >= {"loss", "val_loss", "accuracy"} and len(history.history["loss"]) == 2

    text = "This method will raise an exception."
    inputs = tokenizer(text, return_tensors="tf")
    logits = model(**inputs).logits
    predicted_class_id = int(tf.math.argmax(logits, axis=-1)[0])
    assert model.config.id2label[predicted_class_id] in ("NEGATIVE", "POSITIVE")


def test_token_classification_guide(checkpoint):
    wnut = datasets.Dataset.from_dict({"tokens": [sentence.rstrip(".").split() for sentence in SENTENCES],
                                       "ner_tags": [[(i + j) % 3 for j in range(len(sentence.split()))]
                                                    for i, sentence in enumerate(SENTENCES)]})
    tokenizer = AutoTokenizer.from_pretrained(checkpoint["discriminator"])

    def tokenize_and_align_labels(examples):
        tokenized_inputs = tokenizer(examples["tokens"], truncation=True, is_split_into_words=True)
        labels = []
        for i, label in enumerate(examples["ner_tags"]):
            word_ids = tokenized_inputs.word_ids(batch_index=i)  # Map tokens to their respective word.
            previous_word_idx = None
            label_ids = []
            for word_idx in word_ids:  # Set the special tokens to -100.
                if word_idx is None:
                    label_ids.append(-100)
                elif word_idx != previous_word_idx:  # Only label the first token of a given word.
                    label_ids.append(label[word_idx])
                else:
                    label_ids.append(-100)
                previous_word_idx = word_idx
            labels.append(label_ids)
        tokenized_inputs["labels"] = labels
        return tokenized_inputs

    tokenized_wnut = wnut.map(tokenize_and_align_labels, batched=True)
    data_collator = DataCollatorForTokenClassification(tokenizer=tokenizer, return_tensors="tf")
    id2label = {0: "O", 1: "B-corporation", 2: "I-corporation"}
    label2id = {name: i for i, name in id2label.items()}
    num_train_steps = (len(tokenized_wnut) // 4) * 1
    optimizer, lr_schedule = create_optimizer(init_lr=2e-5, num_train_steps=num_train_steps,
                                              weight_decay_rate=0.01, num_warmup_steps=0)
    model = TFAutoModelForTokenClassification.from_pretrained(checkpoint["discriminator"], num_labels=3,
                                                              id2label=id2label, label2id=label2id)
    _train_as_the_guides_do(model, tokenized_wnut, data_collator, optimizer, batch_size=4)

    text = "Read the data from the file"
    inputs = tokenizer(text, return_tensors="tf")
    logits = model(**inputs).logits
    predicted_token_class_ids = tf.math.argmax(logits, axis=-1)
    predicted_token_class = [model.config.id2label[t] for t in predicted_token_class_ids[0].numpy().tolist()]
    assert len(predicted_token_class) == inputs["input_ids"].shape[1]


def test_question_answering_guide(checkpoint):
    contexts = SENTENCES[:4]
    squad = datasets.Dataset.from_dict({
        "question": ["What is returned?", "What is read?", "What is the default?", "What is raised?"],
        "context": contexts,
        "answers": [{"text": [answer], "answer_start": [context.index(answer)]} for answer, context in
                    zip(["the number of lines", "the data", "None", "an exception"], contexts)]})
    tokenizer = AutoTokenizer.from_pretrained(checkpoint["discriminator"])

    def preprocess_function(examples):
        questions = [q.strip() for q in examples["question"]]
        inputs = tokenizer(questions, examples["context"], max_length=48, truncation="only_second",
                           return_offsets_mapping=True, padding="max_length")
        offset_mapping = inputs.pop("offset_mapping")
        answers = examples["answers"]
        start_positions = []
        end_positions = []
        for i, offset in enumerate(offset_mapping):
            answer = answers[i]
            start_char = answer["answer_start"][0]
            end_char = answer["answer_start"][0] + len(answer["text"][0])
            sequence_ids = inputs.sequence_ids(i)
            # Find the start and end of the context
            idx = 0
            while sequence_ids[idx] != 1:
                idx += 1
            context_start = idx
            while sequence_ids[idx] == 1:
                idx += 1
            context_end = idx - 1
            # If the answer is not fully inside the context, label it (0, 0)
            if offset[context_start][0] > end_char or offset[context_end][1] < start_char:
                start_positions.append(0)
                end_positions.append(0)
            else:
                # Otherwise it's the start and end token positions
                idx = context_start
                while idx <= context_end and offset[idx][0] <= start_char:
                    idx += 1
                start_positions.append(idx - 1)
                idx = context_end
                while idx >= context_start and offset[idx][1] >= end_char:
                    idx -= 1
                end_positions.append(idx + 1)
        inputs["start_positions"] = start_positions
        inputs["end_positions"] = end_positions
        return inputs

    tokenized_squad = squad.map(preprocess_function, batched=True, remove_columns=squad.column_names)
    first = tokenized_squad[0]  # the answer's tokens are the answer: the offsets and sequence ids are right
    answer = tokenizer.decode(first["input_ids"][first["start_positions"]:first["end_positions"] + 1])
    assert answer == "the number of lines"
    data_collator = DefaultDataCollator(return_tensors="tf")
    optimizer, schedule = create_optimizer(init_lr=2e-5, num_warmup_steps=0, num_train_steps=2)
    model = TFAutoModelForQuestionAnswering.from_pretrained(checkpoint["discriminator"])
    _train_as_the_guides_do(model, tokenized_squad, data_collator, optimizer)

    question, text = "What is read?", "Read the data from the stream."
    inputs = tokenizer(question, text, return_tensors="tf")
    outputs = model(**inputs)
    answer_start_index = int(tf.math.argmax(outputs.start_logits, axis=-1)[0])
    answer_end_index = int(tf.math.argmax(outputs.end_logits, axis=-1)[0])
    predict_answer_tokens = inputs.input_ids[0, answer_start_index: answer_end_index + 1]
    assert isinstance(tokenizer.decode(predict_answer_tokens), str)


def test_multiple_choice_guide(checkpoint):
    swag = datasets.Dataset.from_dict({
        "sent1": SENTENCES[:4], "sent2": ["The file", "The data", "The value", "The method"],
        **{f"ending{i}": [f"is {word}." for word in ("empty", "read", "None", "raised")] for i in range(4)},
        "label": [0, 1, 2, 3]})
    tokenizer = AutoTokenizer.from_pretrained(checkpoint["discriminator"])
    ending_names = ["ending0", "ending1", "ending2", "ending3"]

    def preprocess_function(examples):
        first_sentences = [[context] * 4 for context in examples["sent1"]]
        question_headers = examples["sent2"]
        second_sentences = [
            [f"{header} {examples[end][i]}" for end in ending_names] for i, header in enumerate(question_headers)
        ]
        first_sentences = sum(first_sentences, [])
        second_sentences = sum(second_sentences, [])
        tokenized_examples = tokenizer(first_sentences, second_sentences, truncation=True)
        return {k: [v[i: i + 4] for i in range(0, len(v), 4)] for k, v in tokenized_examples.items()}

    tokenized_swag = swag.map(preprocess_function, batched=True)
    data_collator = DataCollatorForMultipleChoice(tokenizer=tokenizer, return_tensors="tf")
    optimizer, schedule = create_optimizer(init_lr=5e-5, num_warmup_steps=0, num_train_steps=2)
    model = TFAutoModelForMultipleChoice.from_pretrained(checkpoint["discriminator"])
    _train_as_the_guides_do(model, tokenized_swag, data_collator, optimizer)

    prompt = "The file is empty."
    candidate1, candidate2 = "Return the number of lines.", "Raise an exception."
    inputs = tokenizer([[prompt, candidate1], [prompt, candidate2]], return_tensors="tf", padding=True)
    inputs = {k: tf.expand_dims(v, 0) for k, v in inputs.items()}
    outputs = model(inputs, labels=tf.constant(0))
    logits = outputs.logits
    assert logits.shape == (1, 2) and int(tf.math.argmax(logits, axis=-1)[0]) in (0, 1)


def test_masked_language_modeling_guide(checkpoint):
    eli5 = datasets.Dataset.from_dict({"answers.text": [[sentence] for sentence in SENTENCES]})
    tokenizer = AutoTokenizer.from_pretrained(checkpoint["generator"])

    def preprocess_function(examples):
        return tokenizer([" ".join(x) for x in examples["answers.text"]])

    tokenized_eli5 = eli5.map(preprocess_function, batched=True, remove_columns=eli5.column_names)
    block_size = 16

    def group_texts(examples):
        concatenated_examples = {k: sum(examples[k], []) for k in examples.keys()}
        total_length = len(concatenated_examples[list(examples.keys())[0]])
        if total_length >= block_size:
            total_length = (total_length // block_size) * block_size
        result = {k: [t[i: i + block_size] for i in range(0, total_length, block_size)]
                  for k, t in concatenated_examples.items()}
        return result

    lm_dataset = tokenized_eli5.map(group_texts, batched=True)
    tokenizer.pad_token = tokenizer.pad_token  # (the guide sets it for tokenizers without one)
    data_collator = DataCollatorForLanguageModeling(tokenizer=tokenizer, mlm_probability=0.15, return_tensors="tf")
    optimizer = AdamWeightDecay(learning_rate=2e-5, weight_decay_rate=0.01)
    model = TFAutoModelForMaskedLM.from_pretrained(checkpoint["generator"])
    _train_as_the_guides_do(model, lm_dataset, data_collator, optimizer)

    text = "Return the [MASK] of lines in the file."
    mask_filler = pipeline("fill-mask", checkpoint["generator"])
    assert len(mask_filler(text, top_k=3)) == 3
    inputs = tokenizer(text, return_tensors="tf")
    mask_token_index = tf.where(inputs["input_ids"] == tokenizer.mask_token_id)[0, 1]
    logits = model(**inputs).logits
    mask_token_logits = logits[0, mask_token_index, :]
    top_3_tokens = tf.math.top_k(mask_token_logits, 3).indices.numpy()
    filled = [text.replace(tokenizer.mask_token, tokenizer.decode([token])) for token in top_3_tokens]
    assert len(filled) == 3 and all("[MASK]" not in sentence for sentence in filled)


def test_the_discriminator_model_card_example(checkpoint):
    discriminator = ElectraForPreTraining.from_pretrained(checkpoint["discriminator"])
    tokenizer = ElectraTokenizer.from_pretrained(checkpoint["discriminator"])
    fake_sentence = "The file is read from the stream."
    fake_tokens = tokenizer.tokenize(fake_sentence)
    fake_inputs = tokenizer.encode(fake_sentence, return_tensors="tf")
    discriminator_outputs = discriminator(fake_inputs)
    predictions = tf.round((tf.sign(discriminator_outputs[0]) + 1) / 2)
    assert predictions.shape == (1, len(fake_tokens) + 2)
