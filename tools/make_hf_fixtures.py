"""Writes the Hugging Face parity fixtures: tiny random `transformers` models, their inputs and outputs.

Needs `transformers` and CPU `torch` (pip install -e ".[fixtures]" torch); the
tests that read the fixtures need neither. Run from the repository root:

    python -m electra_tf.tools.make_hf_fixtures --output_dir=tests/fixtures/hf

Each fixture is a folder as `save_pretrained` writes it (`config.json`,
`model.safetensors`, tokenizer files) plus `io.safetensors`: the inputs
(`input_ids`, `attention_mask`, `token_type_ids`, one row padded), every
layer's hidden states (`hidden_states`, `[batch, layers + 1, sequence,
hidden]`) and the head's outputs (`logits`, or `start_logits`/`end_logits`),
in float32. Every parameter is drawn at random (biases and LayerNorm
parameters included, not left at 0 and 1), and the models cover
embedding_size ≠ hidden_size and =, every ELECTRA class we load, a
`gelu_new` (tanh-approximate GELU) model, a non-default LayerNorm epsilon and a plain `BertModel`
(with its pooler). The generator shares the discriminator's embedding
block, as in the released pairs, so the two make a Google-layout pre-training
checkpoint too. The vocabulary is the first 99 tokens of
`tests/fixtures/tokenizer/vocab.txt`.
"""

import json
import os
import shutil

from absl import flags

from electra_tf.tools.common import run_tool

FLAGS = flags.FLAGS
flags.DEFINE_string("output_dir", "tests/fixtures/hf", "Where the fixture folders go.")
flags.DEFINE_string("source_vocab", "tests/fixtures/tokenizer/vocab.txt", "Vocabulary whose first tokens are used.")
flags.DEFINE_integer("vocab_size", 99, "Tokens kept (small, so the fixtures stay small).")
flags.DEFINE_integer("seed", 0, "Seed of the random weights and inputs.")

BATCH, SEQUENCE, CHOICES = 2, 9, 3
TEXT = "Hello, world! (tiny)"
COMMON = dict(max_position_embeddings=16, type_vocab_size=2, hidden_dropout_prob=0.1,
              attention_probs_dropout_prob=0.1)
PROJECTED = dict(embedding_size=16, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=48)
# name: (class, config, extra)
FIXTURES = {
    "electra_model_projected": ("ElectraModel", PROJECTED, {}),
    "electra_model_square": ("ElectraModel", dict(embedding_size=24, hidden_size=24, num_hidden_layers=2,
                                                  num_attention_heads=3, intermediate_size=40), {}),
    "discriminator": ("ElectraForPreTraining", PROJECTED, {}),
    # The original recipe's generator for the discriminator above at generator_hidden_size=0.5:
    # width 16, max(1, 16 // 64) = 1 head, 4 x 16 feed-forward, as many layers.
    "generator": ("ElectraForMaskedLM", dict(embedding_size=16, hidden_size=16, num_hidden_layers=2,
                                             num_attention_heads=1, intermediate_size=64), {}),
    "sequence_classification": ("ElectraForSequenceClassification", dict(PROJECTED, layer_norm_eps=1e-7),
                                {"num_labels": 3}),
    "token_classification": ("ElectraForTokenClassification", dict(
        embedding_size=32, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48),
        {"num_labels": 5}),
    "question_answering": ("ElectraForQuestionAnswering", PROJECTED, {}),
    "multiple_choice": ("ElectraForMultipleChoice", PROJECTED, {}),
    "electra_model_gelu_new": ("ElectraModel", dict(embedding_size=16, hidden_size=16, num_hidden_layers=1,
                                                    num_attention_heads=2, intermediate_size=32,
                                                    hidden_act="gelu_new"), {}),
    "bert_model": ("BertModel", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                     intermediate_size=48), {}),
}


def randomize(model, generator):
    """Every parameter at random: matrices N(0, 0.2²), biases N(0, 0.1²), LayerNorm weights 1 + N(0, 0.1²)."""
    import torch

    with torch.no_grad():
        for name, parameter in model.named_parameters():
            noise = torch.randn(parameter.shape, generator=generator)
            if "LayerNorm.weight" in name:
                parameter.copy_(1.0 + 0.1 * noise)
            elif name.endswith("bias"):
                parameter.copy_(0.1 * noise)
            else:
                parameter.copy_(0.2 * noise)


def make_inputs(rng, vocab_size, choices=None):
    import numpy as np

    shape = (BATCH, SEQUENCE) if choices is None else (BATCH, choices, SEQUENCE)
    ids = rng.integers(5, vocab_size, size=shape).astype(np.int64)
    types = np.zeros(shape, np.int64)
    mask = np.ones(shape, np.int64)
    ids[..., 0] = 2  # [CLS]
    types[..., 5:] = 1
    ids[..., 4] = 3  # [SEP]
    ids[..., -1] = 3
    # The last row ends early: [SEP] at 6, then padding.
    ids[-1, ..., 6], ids[-1, ..., 7:], mask[-1, ..., 7:], types[-1, ..., 7:] = 3, 0, 0, 0
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


def write_fixture(folder, class_name, config_values, extra, vocab_dir, rng, generator, shared_embeddings=None):
    import numpy as np
    import torch
    import transformers
    from safetensors.numpy import save_file

    model_type = "bert" if class_name.startswith("Bert") else "electra"
    config_class = transformers.BertConfig if model_type == "bert" else transformers.ElectraConfig
    config = config_class(vocab_size=FLAGS.vocab_size, **COMMON, **config_values, **extra)
    config._attn_implementation = "eager"
    model = getattr(transformers, class_name)(config).eval()
    randomize(model, generator)
    if shared_embeddings is not None:
        with torch.no_grad():
            for name, parameter in model.named_parameters():
                if name in shared_embeddings:
                    parameter.copy_(shared_embeddings[name])
    inputs = make_inputs(rng, FLAGS.vocab_size, CHOICES if class_name == "ElectraForMultipleChoice" else None)
    with torch.no_grad():
        outputs = model(**{k: torch.from_numpy(v) for k, v in inputs.items()}, output_hidden_states=True)
    io = {name: value.astype(np.int32) for name, value in inputs.items()}
    if outputs.hidden_states is not None:
        io["hidden_states"] = torch.stack(outputs.hidden_states, dim=1).numpy()
    for key in ("logits", "start_logits", "end_logits", "last_hidden_state"):
        if getattr(outputs, key, None) is not None:
            io[key] = getattr(outputs, key).numpy()
    if model_type == "electra" and len(outputs.hidden_states) != config.num_hidden_layers + 1:
        raise RuntimeError(f"{class_name}: {len(outputs.hidden_states)} hidden states")
    os.makedirs(folder, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer = transformers.BertTokenizerFast.from_pretrained(vocab_dir, do_lower_case=True)
    tokenizer.save_pretrained(folder)
    io["text_ids"] = np.asarray(tokenizer(TEXT, add_special_tokens=False)["input_ids"], np.int32)
    if class_name == "BertModel":  # this one keeps only tokenizer.json
        if os.path.exists(os.path.join(folder, "vocab.txt")):
            os.remove(os.path.join(folder, "vocab.txt"))
    else:
        shutil.copyfile(os.path.join(vocab_dir, "vocab.txt"), os.path.join(folder, "vocab.txt"))
    save_file({k: np.ascontiguousarray(v.astype(np.float32) if v.dtype.kind == "f" else v) for k, v in io.items()},
              os.path.join(folder, "io.safetensors"))
    for name in os.listdir(folder):  # only what the tests read
        if name not in ("config.json", "model.safetensors", "io.safetensors", "vocab.txt", "tokenizer.json",
                        "tokenizer_config.json"):
            os.remove(os.path.join(folder, name))
    return model


def main(argv):
    del argv
    import numpy as np
    import torch

    rng = np.random.default_rng(FLAGS.seed)
    generator = torch.Generator().manual_seed(FLAGS.seed)
    os.makedirs(FLAGS.output_dir, exist_ok=True)
    vocab_dir = os.path.join(FLAGS.output_dir, "_vocab.tmp")
    os.makedirs(vocab_dir, exist_ok=True)
    with open(FLAGS.source_vocab, encoding="utf-8") as f:
        tokens = [next(f).rstrip("\n") for _ in range(FLAGS.vocab_size)]
    with open(os.path.join(vocab_dir, "vocab.txt"), "w", encoding="utf-8") as f:
        f.writelines(token + "\n" for token in tokens)
    shared = None
    for name, (class_name, config_values, extra) in FIXTURES.items():
        folder = os.path.join(FLAGS.output_dir, name)
        shutil.rmtree(folder, ignore_errors=True)
        model = write_fixture(folder, class_name, config_values, extra, vocab_dir, rng, generator,
                              shared_embeddings=shared if name == "generator" else None)
        if name == "discriminator":
            shared = {key: value.detach().clone() for key, value in model.named_parameters()
                      if key.startswith("electra.embeddings.")}
        print(f"{name}: {class_name} → {folder}")
    shutil.rmtree(vocab_dir)
    with open(os.path.join(FLAGS.output_dir, "README.json"), "w", encoding="utf-8") as f:
        import transformers
        json.dump({"generator": "tools/make_hf_fixtures.py", "transformers": transformers.__version__,
                   "torch": torch.__version__, "seed": FLAGS.seed,
                   "fixtures": {name: spec[0] for name, spec in FIXTURES.items()}}, f, indent=2)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(root, name)) for root, _, names in os.walk(FLAGS.output_dir)
                for name in names)
    print(f"total {total / 1e6:.2f} MB")


def run():
    run_tool(main)


if __name__ == "__main__":
    run()
