"""Fine-tuning a pre-trained discriminator: tasks (one module each), their registry, and `finetune`.

- `task`: the `FinetuningTask` base, the contract of a task;
- `classification` (GLUE, CSV/TSV/JSONL files), `tagging` (CoNLL NER and
  chunking), `question_answering` (SQuAD 1.1/2.0), `multiple_choice` (SWAG),
  `docstring_kinds` (a task from the embedded corpus);
- `registry`: `TASKS` by name and `make_task`;
- `trainer`: `finetune`, the original recipe; `monitoring`: its progress lines, dev scores and best model.
- `run`: `run_finetuning`, a whole run as `electra-finetune` does it (trials, resume, `results.json`).
"""

from electra_tf.finetuning.registry import TASKS, make_task
from electra_tf.finetuning.task import FinetuningTask
from electra_tf.finetuning.trainer import finetune

__all__ = ["TASKS", "FinetuningTask", "finetune", "make_task"]
