import keras
import numpy as np
import pytest

from electra_tf import (
    ElectraForMultipleChoice,
    ElectraForQuestionAnswering,
    ElectraForSequenceClassification,
    ElectraForTokenClassification,
)
from electra_tf.config import PretrainingConfig, save_run_config


@pytest.fixture(autouse=True)
def seeded():
    keras.utils.set_random_seed(0)


def _fit(model, x, y, loss, steps=60):
    model.compile(optimizer=keras.optimizers.Adam(3e-3), loss=loss)
    first = model.evaluate(x, y, verbose=0, return_dict=True)["loss"]
    model.fit(x, y, epochs=steps, batch_size=len(y if not isinstance(y, dict) else next(iter(y.values()))),
              verbose=0)
    return first, model.evaluate(x, y, verbose=0, return_dict=True)["loss"]


@pytest.mark.parametrize("head", ["original", "huggingface"])
def test_sequence_classification_heads_overfit(tiny_config, head, tiny_vocab):
    batch = tiny_vocab.batch(batch_size=8, seq_length=12, seed=1)
    labels = np.arange(8) % 3
    model = ElectraForSequenceClassification(tiny_config, num_labels=3, head=head)
    first, last = _fit(model, batch, {"logits": labels},
                       {"logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True)}, steps=150)
    assert last < 0.1 * first
    assert np.array_equal(np.argmax(model.predict(batch, verbose=0)["logits"], -1), labels)


def test_regression_with_one_label(tiny_config, tiny_vocab):
    batch = tiny_vocab.batch(batch_size=8, seq_length=12, seed=2)
    scores = np.linspace(0, 5, 8).astype("float32")[:, None]
    model = ElectraForSequenceClassification(tiny_config, num_labels=1)
    first, last = _fit(model, batch, {"logits": scores}, {"logits": "mse"})
    assert last < 0.1 * first


def test_token_classification_overfits(tiny_config, tiny_vocab):
    batch = tiny_vocab.batch(batch_size=4, seq_length=12, seed=3)
    tags = (batch["input_ids"] % 4).astype("int32")
    model = ElectraForTokenClassification(tiny_config, num_labels=4)
    first, last = _fit(model, batch, {"logits": tags},
                       {"logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True)}, steps=100)
    assert last < 0.2 * first


def test_question_answering_huggingface_head_overfits(tiny_config, tiny_vocab):
    batch = tiny_vocab.batch(batch_size=4, seq_length=12, seed=4, min_length=12)
    starts, ends = np.array([1, 2, 3, 4]), np.array([2, 4, 5, 8])
    model = ElectraForQuestionAnswering(tiny_config, head="huggingface")
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    first, last = _fit(model, batch, {"start_logits": starts, "end_logits": ends},
                       {"start_logits": loss, "end_logits": loss}, steps=80)
    assert last < 0.1 * first
    predicted = model.predict(batch, verbose=0)
    assert np.array_equal(predicted["start_logits"].argmax(-1), starts)


def _qa_batch(tiny_vocab):
    batch = tiny_vocab.batch(batch_size=4, seq_length=12, seed=4, min_length=12)
    batch["token_type_ids"][:, 5:] = 1  # question 1..4, context 5..11
    return batch


def test_original_question_answering_head_overfits_and_predicts_by_beam(tiny_config, tiny_vocab):
    from electra_tf.finetuning.question_answering import question_answering_losses

    batch = _qa_batch(tiny_vocab)
    starts, ends, impossible = np.array([5, 6, 0, 9]), np.array([7, 6, 0, 11]), np.array([0, 0, 1, 0], "float32")
    model = ElectraForQuestionAnswering(tiny_config, beam_size=3, hidden_size=16)
    loss, weights = question_answering_losses()
    model.compile(optimizer=keras.optimizers.Adam(3e-3), loss=loss, loss_weights=weights)
    x, y = {**batch, "start_positions": starts}, {"start_logits": starts, "end_logits": ends,
                                                  "answerable_logits": impossible}
    first = model.evaluate(x, y, verbose=0, return_dict=True)["loss"]
    model.fit(x, y, epochs=120, batch_size=4, verbose=0)
    assert model.evaluate(x, y, verbose=0, return_dict=True)["loss"] < 0.1 * first

    predicted = model.predict(batch, verbose=0)  # no start_positions: the beam of best starts
    assert predicted["end_logits"].shape == (4, 3, 12) and predicted["start_candidates"].shape == (4, 3)
    assert np.array_equal(predicted["start_candidates"][:, 0], starts)
    assert np.array_equal(predicted["end_logits"][:, 0].argmax(-1), ends)
    assert np.array_equal(predicted["answerable_logits"] > 0, impossible > 0)
    # Answers never start or end in the question.
    assert np.all(predicted["start_logits"][:, 1:5] < -500) and np.all(predicted["end_logits"][:, :, 1:5] < -500)


def test_joint_end_logits_given_a_start_match_a_tiled_concatenation():
    from electra_tf.layers.qa_head import JointEndLogits

    rng = np.random.default_rng(0)
    sequence = rng.normal(size=(2, 6, 4)).astype("float32")
    head = JointEndLogits(beam_size=2, hidden_size=5)
    end_logits, candidates = head(sequence, rng.normal(size=(2, 6)).astype("float32"), np.ones((2, 6), "float32"),
                                  np.array([1, 3]))
    assert candidates.numpy().tolist() == [[1], [3]]
    start = sequence[np.arange(2), [1, 3]]
    tiled = np.concatenate([np.repeat(start[:, None], 6, 1), sequence], -1)
    hidden = keras.activations.gelu(tiled @ head.qa_hidden.kernel.numpy() + head.qa_hidden.bias.numpy(),
                                    approximate=False)
    expected = (hidden @ head.end_dense.kernel.numpy())[..., 0] + head.end_dense.bias.numpy()
    np.testing.assert_allclose(end_logits.numpy()[:, 0], expected, atol=1e-5)


def test_multiple_choice_overfits_and_takes_any_length(tiny_config, tiny_vocab):
    choices = [tiny_vocab.batch(batch_size=4, seq_length=10, seed=10 + c) for c in range(3)]
    batch = {k: np.stack([c[k] for c in choices], axis=1) for k in choices[0]}
    answers = np.array([0, 1, 2, 1])
    model = ElectraForMultipleChoice(tiny_config, num_choices=3)
    first, last = _fit(model, batch, {"logits": answers},
                       {"logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True)}, steps=80)
    assert last < 0.1 * first
    shorter = {k: v[:, :, :6] for k, v in batch.items()}
    assert model.predict(shorter, verbose=0)["logits"].shape == (4, 3)


@pytest.fixture
def pretrained_run(tiny_config, tmp_path, tiny_vocab):
    """A folder laid out as tools/run_pretraining.py writes `<model_dir>/final`."""
    from electra_tf import ElectraPretrainer
    pretrainer = ElectraPretrainer(tiny_config, PretrainingConfig(max_seq_length=16, generator_hidden_size=0.5),
                                   tiny_vocab.mask, tiny_vocab.special_ids)
    final = tmp_path / "run" / "final"
    final.mkdir(parents=True)
    pretrainer.discriminator.save(str(final / "discriminator.keras"))
    save_run_config(str(final / "config.json"), tiny_config, pretrainer.pretraining_config)
    words = [f"w{i}" for i in range(tiny_vocab.size - 5)]
    (final / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + words) + "\n")
    return tmp_path / "run", pretrainer


@pytest.mark.parametrize("cls, arguments", [
    (ElectraForSequenceClassification, {"num_labels": 2}),
    (ElectraForTokenClassification, {"num_labels": 5}),
    (ElectraForQuestionAnswering, {"beam_size": 2}),
    (ElectraForQuestionAnswering, {"head": "huggingface"}),
    (ElectraForMultipleChoice, {"num_choices": 2}),
])
def test_from_pretrained_loads_the_discriminator_encoder_and_saves(pretrained_run, tmp_path, cls, arguments,
                                                                  tiny_vocab):
    run, pretrainer = pretrained_run
    model = cls.from_pretrained(str(run), **arguments)
    for a, b in zip(model.backbone.weights, pretrainer.discriminator.backbone.weights):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    batch = tiny_vocab.batch(batch_size=2, seq_length=12)
    if cls is ElectraForMultipleChoice:
        batch = {k: np.stack([v, v], axis=1) for k, v in batch.items()}
    model.save(str(tmp_path / "task.keras"))
    loaded = keras.saving.load_model(str(tmp_path / "task.keras"), safe_mode=True)
    expected, actual = model.predict(batch, verbose=0), loaded.predict(batch, verbose=0)
    assert sorted(expected) == sorted(actual)
    for key in expected:
        np.testing.assert_allclose(actual[key], expected[key], atol=1e-6)


def test_encoder_and_tokenizer_from_pretrained(pretrained_run, tmp_path, tiny_vocab):
    from electra_tf import ElectraModel, ElectraTokenizer

    run, pretrainer = pretrained_run
    encoder = ElectraModel.from_pretrained(str(run))
    batch = tiny_vocab.batch(batch_size=2, seq_length=12)
    np.testing.assert_allclose(encoder(batch)["last_hidden_state"],
                               pretrainer.discriminator.backbone(batch)["last_hidden_state"], atol=1e-6)
    tokenizer = ElectraTokenizer.from_pretrained(str(run))
    assert tokenizer.encode("w3 w7", add_special_tokens=False) == [8, 12]
    with pytest.raises(FileNotFoundError, match="nothing: does not exist"):
        ElectraForTokenClassification.from_pretrained(str(tmp_path / "nothing"))
    with pytest.raises(ValueError, match="no vocab.txt"):
        ElectraTokenizer.from_pretrained(str(tmp_path / "nothing"))
