"""electra_tf: ELECTRA pre-training and fine-tuning on Keras 3 / TensorFlow.

The pipeline, in the order of the tree: text → vocabulary (`tokenization`) →
TFRecord shards (`data`) → `ElectraPretrainer` → checkpoint → fine-tune →
SavedModel.
"""

from electra_tf.config import (
    ElectraConfig,
    FinetuningConfig,
    PretrainingConfig,
    generator_config,
    load_run_config,
    save_run_config,
)
from electra_tf.finetuning import finetune, make_task
from electra_tf.models.discriminator import ElectraDiscriminator
from electra_tf.models.embeddings import ElectraEmbedding
from electra_tf.models.encoder import ElectraModel
from electra_tf.models.generator import ElectraGenerator
from electra_tf.models.pretrainer import ElectraPretrainer
from electra_tf.models.tasks import (
    ElectraForMultipleChoice,
    ElectraForQuestionAnswering,
    ElectraForSequenceClassification,
    ElectraForTokenClassification,
)
from electra_tf.tokenization import ElectraTokenizer
from electra_tf.training.optimization import WarmupLinearDecay, create_optimizer, pretraining_optimizer

__all__ = [
    "ElectraConfig",
    "ElectraDiscriminator",
    "ElectraEmbedding",
    "ElectraForMultipleChoice",
    "ElectraForQuestionAnswering",
    "ElectraForSequenceClassification",
    "ElectraForTokenClassification",
    "ElectraGenerator",
    "ElectraModel",
    "ElectraPretrainer",
    "ElectraTokenizer",
    "FinetuningConfig",
    "PretrainingConfig",
    "WarmupLinearDecay",
    "create_optimizer",
    "finetune",
    "generator_config",
    "load_run_config",
    "make_task",
    "pretraining_optimizer",
    "save_run_config",
]
