"""Checkpoint formats: ours, Hugging Face, the original Google (TF1) release and keras-hub presets, both ways.

Formats only: nothing here imports a model class. A model declares what the
loaders need (`backbone`, `hf_architecture`; see `electra_tf.models.base`).

- `mapping`: the one name table (ours ↔ Hugging Face ↔ Google) and the layouts;
- `loading`: strict all-or-nothing assignment of named arrays into variables;
- `transfer`: which parts of a checkpoint a model takes (encoder, same-class head, new head);
- `safetensors_io`: `.safetensors` read/write, with clear errors for truncated files;
- `hf`: Hugging Face folders (`config.json` ↔ `ElectraConfig`, BERT too); `hf_tf_weights`: their
  transformers 4.x `tf_model.h5` weights;
- `google`: Google TF1 checkpoints (read with `tf.train.load_checkpoint`, written with `SaveV2`);
- `ours`: our run folders and `.keras` files;
- `tokenizer_files`: `vocab.txt`, `tokenizer_config.json`, `tokenizer.json`;
- `keras_hub_preset`: keras-hub ELECTRA backbone presets;
- `sources`: any of these formats, recognised and read into a `Source`;
- `hub`: Hugging Face hub ids resolved to local folders (the Hugging Face cache, or a download).

Loading goes through `from_pretrained` on every model class; saving through
`model.save_pretrained(folder)` (`hf.save_huggingface`: a Hugging Face folder
`transformers` loads), `google.save_google(prefix, discriminator, generator)`
(the original TF1 names) or `electra_tf.checkpoints.convert` (any format into any other).
"""
