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

`pretraining_step/step.safetensors` pins one joint ELECTRA step on those two
networks (`ElectraForMaskedLM` + `ElectraForPreTraining`, the embedding block
and the generator's output layer tied by hand, as the original): the batch,
its masked positions and labels, the Gumbel-max samples and the corrupted
ids, the MLM, RTD and total losses (`1·MLM + 50·RTD`, each normalised as the
original) and the gradient of the total loss for every parameter, named
`discriminator/<name>` (shared ones once, there) and `generator/<name>`.
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


STEP_SLOTS, STEP_TEMPERATURE, DISC_WEIGHT = 3, 1.0, 50.0


def write_pretraining_step(folder, discriminator, generator, rng, torch_generator):
    """One joint step of the two networks in eval mode (no dropout), as described in the docstring."""
    import numpy as np
    import torch
    from safetensors.numpy import save_file

    shared = discriminator.electra.embeddings
    generator.electra.embeddings = shared  # the whole embedding block, as the original
    generator.generator_lm_head.weight = shared.word_embeddings.weight
    inputs = make_inputs(rng, FLAGS.vocab_size)
    ids, mask = inputs["input_ids"], inputs["attention_mask"]
    # Masked slots: real, non-special positions; the padded row uses two of its three slots.
    positions = np.stack([np.sort(rng.choice([p for p in range(SEQUENCE) if mask[b, p] and ids[b, p] > 4],
                                             STEP_SLOTS, replace=False)) for b in range(BATCH)]).astype(np.int64)
    weights = np.ones((BATCH, STEP_SLOTS), np.float32)
    weights[-1, -1] = 0.0
    positions[-1, -1] = 0
    labels = np.take_along_axis(ids, positions, 1)
    masked = ids.copy()
    for b in range(BATCH):
        for p in range(STEP_SLOTS):
            if weights[b, p] and (b, p) != (0, 1):  # one selected token stays unchanged, as 15 % do
                masked[b, positions[b, p]] = 4  # [MASK]
    tensor = {name: torch.from_numpy(value) for name, value in inputs.items()}
    t_positions, t_weights, t_labels = map(torch.from_numpy, (positions, weights, labels))
    hidden = generator.electra(torch.from_numpy(masked), attention_mask=tensor["attention_mask"],
                               token_type_ids=tensor["token_type_ids"]).last_hidden_state
    hidden = torch.gather(hidden, 1, t_positions[:, :, None].expand(-1, -1, hidden.shape[-1]))
    logits = generator.generator_lm_head(generator.generator_predictions(hidden))
    per_slot = torch.nn.functional.cross_entropy(logits.flatten(0, 1), t_labels.flatten(), reduction="none")
    mlm_loss = (per_slot * t_weights.flatten()).sum() / (t_weights.sum() + 1e-6)
    with torch.no_grad():
        uniform = torch.rand(logits.shape, generator=torch_generator)
        gumbel = -torch.log(-torch.log(uniform + 1e-9) + 1e-9)
        sampled = torch.argmax(logits / STEP_TEMPERATURE + gumbel, -1)
    corrupted = ids.copy()
    for b in range(BATCH):
        for p in range(STEP_SLOTS):
            if weights[b, p]:
                corrupted[b, positions[b, p]] = sampled[b, p]
    real = tensor["attention_mask"].float()
    rtd_labels = torch.from_numpy((corrupted != ids).astype(np.float32)) * real
    rtd_logits = discriminator(torch.from_numpy(corrupted), attention_mask=tensor["attention_mask"],
                               token_type_ids=tensor["token_type_ids"]).logits
    per_token = torch.nn.functional.binary_cross_entropy_with_logits(rtd_logits, rtd_labels, reduction="none")
    rtd_loss = (per_token * real).sum() / (real.sum() + 1e-6)
    loss = mlm_loss + DISC_WEIGHT * rtd_loss
    loss.backward()
    step = {name: value.astype(np.int32) for name, value in inputs.items()}
    step.update(masked_input_ids=masked.astype(np.int32), mask_positions=positions.astype(np.int32),
                mask_weights=weights, mask_labels=labels.astype(np.int32), sampled=sampled.numpy().astype(np.int32),
                corrupted_ids=corrupted.astype(np.int32), rtd_labels=rtd_labels.numpy(),
                mlm_loss=np.float32(mlm_loss.item()), rtd_loss=np.float32(rtd_loss.item()),
                loss=np.float32(loss.item()))
    seen = set()
    for network, model in (("discriminator", discriminator), ("generator", generator)):
        for name, parameter in model.named_parameters():  # a shared parameter once, under its first owner
            if id(parameter) not in seen:
                seen.add(id(parameter))
                step[f"grad/{network}/{name}"] = parameter.grad.numpy()
    os.makedirs(folder, exist_ok=True)
    save_file({k: np.ascontiguousarray(np.asarray(v)) for k, v in step.items()},
              os.path.join(folder, "step.safetensors"))


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
    shared, models = None, {}
    for name, (class_name, config_values, extra) in FIXTURES.items():
        folder = os.path.join(FLAGS.output_dir, name)
        shutil.rmtree(folder, ignore_errors=True)
        model = models[name] = write_fixture(folder, class_name, config_values, extra, vocab_dir, rng, generator,
                                             shared_embeddings=shared if name == "generator" else None)
        if name == "discriminator":
            shared = {key: value.detach().clone() for key, value in model.named_parameters()
                      if key.startswith("electra.embeddings.")}
        print(f"{name}: {class_name} → {folder}")
    shutil.rmtree(vocab_dir)
    # Last, so the fixtures above do not depend on it.
    write_pretraining_step(os.path.join(FLAGS.output_dir, "pretraining_step"), models["discriminator"],
                           models["generator"], rng, generator)
    print(f"pretraining_step: one joint step → {os.path.join(FLAGS.output_dir, 'pretraining_step')}")
    with open(os.path.join(FLAGS.output_dir, "README.json"), "w", encoding="utf-8") as f:
        import transformers
        json.dump({"generator": "tools/make_hf_fixtures.py", "transformers": transformers.__version__,
                   "torch": torch.__version__, "seed": FLAGS.seed,
                   "fixtures": {**{name: spec[0] for name, spec in FIXTURES.items()},
                                "pretraining_step": "ElectraForMaskedLM + ElectraForPreTraining, one joint step"}},
                  f, indent=2)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(root, name)) for root, _, names in os.walk(FLAGS.output_dir)
                for name in names)
    print(f"total {total / 1e6:.2f} MB")


def run():
    run_tool(main)


if __name__ == "__main__":
    run()
