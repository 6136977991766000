"""Pre-training: in-graph masking, sampling of replacements, and `ElectraPretrainer`'s joint step."""
