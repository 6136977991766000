"""A dev set is featurized once for all the evaluations of a run: a task predicting the same examples again reuses
their model inputs (with the model's weights of now), and featurizes other examples, or the same under another
config, afresh."""

import numpy as np
import pytest

from electra_tf.checkpoints.tokenizer_files import load_tokenizer
from electra_tf.config import FinetuningConfig
from electra_tf.finetuning import make_task

SENTENCES = [["Ann", *["met"] * (i % 5), "Bob"] for i in range(12)]  # of several lengths
FILES = {"text_classification": ("classes.jsonl", "".join(f'{{"text": "{" ".join(words)}", "label": "{i % 2}"}}\n'
                                                          for i, words in enumerate(SENTENCES))),
         "conll2003": ("tags.txt", "".join("".join(f"{word}\t{'O' if word == 'met' else 'I-PER'}\n" for word in words)
                                           + "\n" for words in SENTENCES))}


def prediction_task(name, pretrained, folder, **config):
    """`(task, its training examples, a model)`, the task's model inputs counted as they are made (`made`)."""
    file_name, text = FILES[name]
    (folder / file_name).write_text(text, encoding="utf-8")
    config = FinetuningConfig.from_dict({"task": name, "max_seq_length": 16, "predict_batch_size": 4, **config})
    task = make_task(config, load_tokenizer(pretrained), files={"train": str(folder / file_name)})
    examples = task.load("train")
    featurize, task.made = task._prediction_inputs, []
    task._prediction_inputs = lambda given: task.made.append(given) or featurize(given)
    return task, examples, task.build_model(pretrained)


def probabilities(predictions):
    """Classes' probabilities, or each word's tag's."""
    return np.concatenate(predictions.probabilities) if hasattr(predictions, "probabilities") else predictions


@pytest.mark.parametrize("name", sorted(FILES))
def test_a_task_featurizes_the_examples_it_predicts_again_once(name, tiny_pretrained_dir, tmp_path):
    task, examples, model = prediction_task(name, tiny_pretrained_dir, tmp_path)
    first = probabilities(task.predict(model, examples))
    model.set_weights([weight + 0.5 for weight in model.get_weights()])  # as a training step would
    again = probabilities(task.predict(model, examples))
    assert len(task.made) == 1 and np.abs(again - first).max() > 1e-3  # the inputs kept, the weights of now


def test_other_examples_or_another_config_are_featurized_afresh(tiny_pretrained_dir, tmp_path):
    task, examples, model = prediction_task("text_classification", tiny_pretrained_dir, tmp_path)
    task.predict(model, examples)
    model.set_weights([weight + 0.5 for weight in model.get_weights()])
    again = task.predict(model, examples)
    fresh, _, _ = prediction_task("text_classification", tiny_pretrained_dir, tmp_path)
    np.testing.assert_allclose(again, fresh.predict(model, examples), atol=1e-6)
    task.predict(model, examples.subset(np.arange(6)))
    task.config = task.config.replace(predict_batch_size=8)
    task.predict(model, examples)
    assert len(task.made) == 3  # the examples, others, then the same under another config


def test_a_list_changed_in_place_is_featurized_afresh(tiny_pretrained_dir, tmp_path):
    task, sentences, model = prediction_task("conll2003", tiny_pretrained_dir, tmp_path)
    sentences = list(sentences)
    task.predict(model, sentences)
    sentences.append(sentences[0])  # the same list, one sentence more
    assert len(task.predict(model, sentences)) == len(sentences)
    sentences[1] = sentences[2]  # an item replaced
    predicted = task.predict(model, sentences)
    assert len(task.made) == 3 and predicted[1] == predicted[2]
