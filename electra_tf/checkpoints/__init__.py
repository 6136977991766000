"""Checkpoint formats, read and written: ours, Hugging Face, Google's TF1 release and keras-hub presets.

Formats only: nothing here imports a model class (a model declares `backbone` and `hf_architecture`). Each
format is read into a Hugging Face-keyed state dict (`sources.read_source`); `convert` writes any into any other.
The modules are listed in docs/development.md.
"""
