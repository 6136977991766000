"""Writes the `tf_model.h5` fixtures: tiny random transformers 4.x TensorFlow ELECTRA models, their inputs and outputs.

transformers 5 has no TensorFlow classes, so this runs in a venv of its own (not electra_tf's: transformers 4.x
TensorFlow models need `tf-keras`), and imports nothing of electra_tf. From the repository root:

    python3 -m venv ../venv-tf4
    ../venv-tf4/bin/pip install "transformers<5" "tf-keras~=2.21.0" "tensorflow~=2.21.0" absl-py
    ../venv-tf4/bin/python tools/make_tf_h5_fixtures.py --output_dir=tests/fixtures/hf_tf_h5

Each fixture is a folder as a TF model's `save_pretrained` writes it (`config.json`, `tf_model.h5`: HDF5 with
Keras 2 layer groups and names such as `tf_electra_for_sequence_classification/electra/embeddings/
word_embeddings/weight:0`), the tokenizer's `vocab.txt` and `tokenizer_config.json`, and `io.safetensors`: the
inputs (`input_ids`, `attention_mask`, `token_type_ids`; one row padded), every layer's hidden states
(`hidden_states`, `[batch, layers + 1, sequence, hidden]`, or `[batch, choices, ...]`) and the head's outputs
(`logits`, or `start_logits`/`end_logits`), float32, from the model called with `training=False`. Every weight
is drawn at random (biases and LayerNorm parameters too). tests/checkpoints/test_tf_h5.py loads each folder
with `from_pretrained` and compares.
"""

import json
import os
import shutil

from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_string("output_dir", "tests/fixtures/hf_tf_h5", "Where the fixture folders go (each is replaced).")
flags.DEFINE_string("source_vocab", "tests/fixtures/tokenizer/vocab.txt", "Vocabulary whose first tokens are used.")
flags.DEFINE_integer("vocab_size", 99, "Tokens kept (small, so the fixtures stay small).")
flags.DEFINE_integer("seed", 0, "Seed of the random weights and inputs.")

BATCH, SEQUENCE, CHOICES = 2, 9, 3
COMMON = dict(max_position_embeddings=16, type_vocab_size=2, num_hidden_layers=2, num_attention_heads=2,
              intermediate_size=48)
PROJECTED = dict(COMMON, embedding_size=16, hidden_size=32)
# name: (transformers class, config)
FIXTURES = {
    "sequence_classification": ("TFElectraForSequenceClassification", dict(PROJECTED, num_labels=3,
                                                                            layer_norm_eps=1e-7)),
    # embedding_size = hidden_size: no embeddings_project
    "token_classification": ("TFElectraForTokenClassification", dict(COMMON, embedding_size=32, hidden_size=32,
                                                                      num_labels=5)),
    "question_answering": ("TFElectraForQuestionAnswering", PROJECTED),
    "pretraining": ("TFElectraForPreTraining", PROJECTED),
    "masked_lm": ("TFElectraForMaskedLM", PROJECTED),
    "multiple_choice": ("TFElectraForMultipleChoice", PROJECTED),
}
KEPT_FILES = ("config.json", "tf_model.h5", "vocab.txt", "tokenizer_config.json", "io.safetensors")


def randomize(model, rng):
    """Every weight at random: matrices N(0, 0.2²), biases N(0, 0.1²), LayerNorm gammas 1 + N(0, 0.1²)."""
    for variable in model.weights:
        noise = rng.standard_normal(variable.shape).astype("float32")
        if "LayerNorm/gamma" in variable.name:
            variable.assign(1.0 + 0.1 * noise)
        elif variable.name.endswith(("bias:0", "beta:0")):
            variable.assign(0.1 * noise)
        else:
            variable.assign(0.2 * noise)


def make_inputs(rng, choices=None):
    """`[CLS] a [SEP] b [SEP]` rows (types 1 from position 5), the last one ending early and padded."""
    import numpy as np

    shape = (BATCH, SEQUENCE) if choices is None else (BATCH, choices, SEQUENCE)
    ids = rng.integers(5, FLAGS.vocab_size, size=shape).astype(np.int32)
    types = np.zeros(shape, np.int32)
    mask = np.ones(shape, np.int32)
    ids[..., 0], ids[..., 4], ids[..., -1] = 2, 3, 3
    types[..., 5:] = 1
    ids[-1, ..., 6], ids[-1, ..., 7:], mask[-1, ..., 7:], types[-1, ..., 7:] = 3, 0, 0, 0
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


def write_fixture(folder, class_name, config_values, vocab_dir, rng):
    import numpy as np
    import tensorflow as tf
    import transformers
    from safetensors.numpy import save_file

    config = transformers.ElectraConfig(vocab_size=FLAGS.vocab_size, **config_values)
    model = getattr(transformers, class_name)(config)
    inputs = make_inputs(rng, CHOICES if class_name == "TFElectraForMultipleChoice" else None)
    model({name: tf.constant(value) for name, value in inputs.items()})  # builds every weight
    randomize(model, rng)
    outputs = model({name: tf.constant(value) for name, value in inputs.items()}, output_hidden_states=True,
                    training=False)
    io = dict(inputs)
    hidden_states = np.stack([state.numpy() for state in outputs.hidden_states], axis=1)
    if class_name == "TFElectraForMultipleChoice":  # [batch * choices, ...] inside the model
        hidden_states = hidden_states.reshape(BATCH, CHOICES, *hidden_states.shape[1:])
    io["hidden_states"] = hidden_states
    for key in ("logits", "start_logits", "end_logits"):
        if getattr(outputs, key, None) is not None:
            io[key] = getattr(outputs, key).numpy()
    os.makedirs(folder, exist_ok=True)
    model.save_pretrained(folder)
    transformers.BertTokenizerFast.from_pretrained(vocab_dir, do_lower_case=True).save_pretrained(folder)
    shutil.copyfile(os.path.join(vocab_dir, "vocab.txt"), os.path.join(folder, "vocab.txt"))
    save_file({key: np.ascontiguousarray(value) for key, value in io.items()}, os.path.join(folder, "io.safetensors"))
    for name in os.listdir(folder):  # only what the tests read
        if name not in KEPT_FILES:
            os.remove(os.path.join(folder, name))


def main(argv):
    del argv
    import numpy as np
    import tensorflow as tf
    import tf_keras
    import transformers

    rng = np.random.default_rng(FLAGS.seed)
    tf.random.set_seed(FLAGS.seed)
    os.makedirs(FLAGS.output_dir, exist_ok=True)
    vocab_dir = os.path.join(FLAGS.output_dir, "_vocab.tmp")
    os.makedirs(vocab_dir, exist_ok=True)
    with open(FLAGS.source_vocab, encoding="utf-8") as f:
        tokens = [next(f).rstrip("\n") for _ in range(FLAGS.vocab_size)]
    with open(os.path.join(vocab_dir, "vocab.txt"), "w", encoding="utf-8") as f:
        f.writelines(token + "\n" for token in tokens)
    for name, (class_name, config_values) in FIXTURES.items():
        folder = os.path.join(FLAGS.output_dir, name)
        shutil.rmtree(folder, ignore_errors=True)
        write_fixture(folder, class_name, config_values, vocab_dir, rng)
        print(f"{name}: {class_name} → {folder}")
    shutil.rmtree(vocab_dir)
    with open(os.path.join(FLAGS.output_dir, "README.json"), "w", encoding="utf-8") as f:
        json.dump({"generator": "tools/make_tf_h5_fixtures.py", "transformers": transformers.__version__,
                   "tensorflow": tf.__version__, "tf_keras": tf_keras.__version__, "seed": FLAGS.seed,
                   "fixtures": {name: spec[0] for name, spec in FIXTURES.items()}}, f, indent=2)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(root, name)) for root, _, names in os.walk(FLAGS.output_dir)
                for name in names)
    print(f"total {total / 1e3:.0f} KB")


if __name__ == "__main__":
    app.run(main)
