"""Pre-training: `ElectraPretrainer`'s step, its objectives and training algorithms, in-graph masking and sampling of
replacements, and the run (`run.run_pretraining`)."""
