"""`tf_model.h5` (transformers 4.x's TensorFlow weights) into our models, with transformers' outputs.

The fixtures (tests/fixtures/hf_tf_h5, written by tools/make_tf_h5_fixtures.py with transformers 4.x's TF classes)
hold tiny random models with their inputs and outputs; these tests need neither transformers nor tf-keras.
"""

import json
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest
import tensorflow as tf

from electra_tf import (
    ElectraDiscriminator,
    ElectraForMultipleChoice,
    ElectraForQuestionAnswering,
    ElectraForSequenceClassification,
    ElectraForTokenClassification,
    ElectraGenerator,
)
from electra_tf.checkpoints.hf_tf_weights import read_tf_weights
from electra_tf.checkpoints.loading import CheckpointMismatchError
from electra_tf.checkpoints.safetensors_io import read_safetensors
from electra_tf.checkpoints.convert import convert

FIXTURES = Path(__file__).parents[1] / "fixtures" / "hf_tf_h5"
TOLERANCE = 1e-5
HIDDEN = {"output_hidden_states": True}
CASES = {
    "sequence_classification": (ElectraForSequenceClassification, {}),
    "token_classification": (ElectraForTokenClassification, {}),
    "question_answering": (ElectraForQuestionAnswering, {}),
    "pretraining": (ElectraDiscriminator, HIDDEN),
    "masked_lm": (ElectraGenerator, HIDDEN),
    "multiple_choice": (ElectraForMultipleChoice, {"num_choices": 3}),
}
COMPARED = ("hidden_states", "logits", "start_logits", "end_logits")


def max_differences(model, folder, cls):
    io = read_safetensors(str(Path(folder) / "io.safetensors"))
    batch = {key: tf.constant(io[key]) for key in ("input_ids", "attention_mask", "token_type_ids")}
    if cls is ElectraGenerator:  # transformers scores every position
        batch["mask_positions"] = tf.tile(tf.range(io["input_ids"].shape[1])[None], (io["input_ids"].shape[0], 1))
    outputs = model(batch)
    differences = {}
    for key in COMPARED:
        if key in io and key in outputs:
            ours = outputs[key]  # every layer's hidden states: one array, or (transformers' way) a tuple of layers
            ours = np.stack(ours, axis=1) if isinstance(ours, (tuple, list)) else np.asarray(ours)
            differences[key] = float(np.max(np.abs(ours - io[key])))
    return differences


def copy_fixture(name, tmp_path):
    return Path(shutil.copytree(FIXTURES / name, tmp_path / name))


@pytest.mark.parametrize("name", list(CASES))
def test_tf_model_h5_loads_with_transformers_outputs(name):
    cls, arguments = CASES[name]
    model = cls.from_pretrained(str(FIXTURES / name), **arguments)
    differences = max_differences(model, FIXTURES / name, cls)
    assert {"logits", "start_logits"} & set(differences), differences
    assert max(differences.values()) < TOLERANCE, differences
    if name == "sequence_classification":  # the head and its labels, as the folder's config.json says
        assert (model.head, model.num_labels) == ("huggingface", 3)


def test_the_masked_lm_reads_the_tied_embeddings_its_head_lists_again_once(tmp_path):
    state = read_tf_weights(str(FIXTURES / "masked_lm" / "tf_model.h5"))
    assert "generator_lm_head.bias" in state and "electra.embeddings.word_embeddings.weight" in state
    assert state["electra.encoder.layer.0.attention.self.query.weight"].shape == (32, 32)
    assert state["electra.embeddings_project.weight"].shape == (32, 16)  # [out, in], as PyTorch's Linear
    folder = copy_fixture("masked_lm", tmp_path)
    with h5py.File(folder / "tf_model.h5", "r+") as handle:
        copy = handle["generator_lm_head"]["tf_electra_for_masked_lm/electra/embeddings/word_embeddings/weight:0"]
        copy[0, 0] += 1.0
    with pytest.raises(ValueError, match=r"tf_model\.h5: tf_electra_for_masked_lm/electra/embeddings/word_embeddings/"
                                         r"weight:0 is listed twice with different values"):
        ElectraGenerator.from_pretrained(str(folder))


def test_a_truncated_tf_model_h5_is_refused_in_one_line(tmp_path):
    folder = copy_fixture("pretraining", tmp_path)
    path = folder / "tf_model.h5"
    path.write_bytes(path.read_bytes()[:50_000])
    with pytest.raises(ValueError) as error:
        ElectraDiscriminator.from_pretrained(str(folder))
    assert str(error.value).startswith(f"{path}: not a readable HDF5 file (") and "\n" not in str(error.value)


def test_a_missing_weight_is_refused(tmp_path):
    folder = copy_fixture("question_answering", tmp_path)
    name = "tf_electra_for_question_answering/electra/encoder/layer_._1/output/LayerNorm/beta:0"
    with h5py.File(folder / "tf_model.h5", "r+") as handle:
        del handle["electra"][name]  # still listed: a damaged file
    with pytest.raises(ValueError, match=rf"tf_model\.h5: weight {name} is listed but absent") as error:
        ElectraForQuestionAnswering.from_pretrained(str(folder))
    assert "\n" not in str(error.value)
    with h5py.File(folder / "tf_model.h5", "r+") as handle:  # not even listed: the strict loader's error
        group = handle["electra"]
        group.attrs["weight_names"] = [n for n in group.attrs["weight_names"] if n != name]
    with pytest.raises(CheckpointMismatchError, match=r"missing .*electra\.encoder\.layer\.1\.output\.LayerNorm\.bias"):
        ElectraForQuestionAnswering.from_pretrained(str(folder))


def test_safetensors_win_over_tf_model_h5_and_a_tf_class_name_reads_as_its_pytorch_one(tmp_path):
    folder = Path(shutil.copytree(Path(__file__).parents[1] / "fixtures" / "hf" / "token_classification",
                                  tmp_path / "both"))
    (folder / "tf_model.h5").write_bytes(b"not read")
    ElectraForTokenClassification.from_pretrained(str(folder))
    folder = copy_fixture("token_classification", tmp_path)
    values = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**values, "architectures": ["TFElectraForTokenClassification"]}))
    model = ElectraForTokenClassification.from_pretrained(str(folder))
    assert (model.head, model.num_labels) == ("huggingface", 5)
    assert max(max_differences(model, folder, ElectraForTokenClassification).values()) < TOLERANCE


def test_sharded_tf_weights_are_refused_in_one_line(tmp_path):
    folder = tmp_path / "sharded"
    folder.mkdir()
    shutil.copy(FIXTURES / "pretraining" / "config.json", folder)
    (folder / "tf_model.h5.index.json").write_text("{}")
    with pytest.raises(ValueError, match=r"sharded TF weights \(tf_model\.h5\.index\.json\), which electra_tf "
                                         r"does not read"):
        ElectraDiscriminator.from_pretrained(str(folder))


def test_the_converter_writes_a_tf_model_h5_folder_as_safetensors(tmp_path):
    convert(str(FIXTURES / "sequence_classification"), str(tmp_path / "hf"), "huggingface")
    written = read_safetensors(str(tmp_path / "hf"))
    original = read_tf_weights(str(FIXTURES / "sequence_classification" / "tf_model.h5"))
    assert sorted(written) == sorted(original)
    for key, array in original.items():
        np.testing.assert_array_equal(written[key], array, err_msg=key)
    model = ElectraForSequenceClassification.from_pretrained(str(tmp_path / "hf"))
    differences = max_differences(model, FIXTURES / "sequence_classification", ElectraForSequenceClassification)
    assert differences["logits"] < TOLERANCE
