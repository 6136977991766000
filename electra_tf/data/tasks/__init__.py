"""Fine-tuning data: GLUE and text files, CoNLL tagging, SQuAD, multiple choice."""
