"""transformers 4.x's TensorFlow surface for electra_tf: its names, calls, outputs, tokenizer, pipelines."""
