"""Fine-tuning a pre-trained discriminator: one module per task, `registry.TASKS`, `finetune`, `run_finetuning`.
"""

from electra_tf.finetuning.registry import TASKS, make_task
from electra_tf.finetuning.task import FinetuningTask
from electra_tf.finetuning.trainer import finetune

__all__ = ["TASKS", "FinetuningTask", "finetune", "make_task"]
