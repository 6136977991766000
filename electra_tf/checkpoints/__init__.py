"""Checkpoint interop: Hugging Face (safetensors) and original Google (TF1) checkpoints, both ways.

- `mapping`: the one name table (ours ↔ Hugging Face ↔ Google) and the layouts;
- `safetensors_io`: `.safetensors` read/write, with clear errors for truncated files;
- `hf`: Hugging Face folders (`config.json` ↔ `ElectraConfig`, BERT too, tokenizer files);
- `google`: Google TF1 checkpoints (read with `tf.train.load_checkpoint`, written with `SaveV2`);
- `loading`: strict all-or-nothing assignment of named arrays into variables;
- `transfer`: which parts of a checkpoint a model takes (encoder, same-class head, new head).

Loading goes through `from_pretrained` (see `electra_tf.pretrained`); saving:

- `save_huggingface(model, folder, vocabulary=None)`: one of our models as a
  Hugging Face folder `transformers` loads (`ElectraModel`, `ElectraForPreTraining`,
  `ElectraForMaskedLM`, and the task models built with `head="huggingface"`);
- `save_google(prefix, discriminator, generator=None)`: a pre-training pair (or a
  discriminator) under the original TF1 names.
"""

from electra_tf.checkpoints.loading import CheckpointMismatchError, LoadReport


def save_huggingface(model, folder, vocabulary=None, lowercase=True, strip_accents=None):
    """Writes `config.json` and `model.safetensors` (and, given a vocabulary, `vocab.txt` and
    `tokenizer_config.json`) that `transformers` loads into the equivalent class."""
    from electra_tf.checkpoints import hf

    hf.write_folder(model, folder, vocabulary=vocabulary, lowercase=lowercase, strip_accents=strip_accents)


def save_google(prefix, discriminator, generator=None, pretraining=None, tied=None):
    """Writes a discriminator (and generator) under the original TF1 names at `prefix`, with
    `config.json` (our run config) beside it. The embedding block is written once, under
    `electra/embeddings/`, when the generator shares the discriminator's (`tied=None`: when
    `pretraining` does not untie them)."""
    from electra_tf.checkpoints import google, mapping
    from electra_tf.config import PretrainingConfig

    if tied is None:
        tied = pretraining is None or not pretraining.untied_generator_embeddings
    config = mapping.encoder_of(discriminator).config
    google.write_checkpoint(prefix, mapping.model_state(discriminator),
                            None if generator is None else mapping.model_state(generator), tied=tied,
                            run_config=(config, pretraining or PretrainingConfig()))


__all__ = ["CheckpointMismatchError", "LoadReport", "save_google", "save_huggingface"]
