"""electra_tf: ELECTRA pre-training and fine-tuning on Keras 3 / TensorFlow.

The pipeline, in the order of the tree: text → vocabulary (`vocabulary`,
`tokenization`) → TFRecord shards (`data`) → `ElectraPretrainer`
(`pretraining`, on the networks of `models`, built from `layers`) →
checkpoint (`checkpoints`) → fine-tune (`finetuning`) → SavedModel (`export`).

Importing the package registers every model, layer, loss and schedule with
Keras, so any `.keras` file of ours loads with `keras.saving.load_model`.
TensorFlow's start-up notices are off unless asked for (`electra_tf.quiet_start`).

transformers 4.x's names are ours too (`TFElectraForSequenceClassification`,
`AutoTokenizer`, ...; `electra_tf.transformers_names`), so code written for
its TensorFlow classes migrates by its imports.
"""

from electra_tf.quiet_start import import_tensorflow

import_tensorflow()  # before anything else imports TensorFlow


from electra_tf.config import (
    ElectraConfig,
    FinetuningConfig,
    PretrainingConfig,
    generator_config,
    load_run_config,
    save_run_config,
)
from electra_tf.finetuning import finetune, make_task
from electra_tf.keras_hub_export import ElectraTextClassifier, save_keras_hub_preset
from electra_tf.layers.embeddings import ElectraEmbedding
from electra_tf.models.discriminator import ElectraDiscriminator
from electra_tf.models.encoder import ElectraModel
from electra_tf.models.generator import ElectraGenerator
from electra_tf.models.multiple_choice import ElectraForMultipleChoice
from electra_tf.models.question_answering import ElectraForQuestionAnswering
from electra_tf.models.sequence_classification import ElectraForSequenceClassification
from electra_tf.models.token_classification import ElectraForTokenClassification
from electra_tf.pipelines import pipeline
from electra_tf.preprocessor import ElectraPreprocessor
from electra_tf.pretraining.pretrainer import ElectraPretrainer
from electra_tf.tokenization import ElectraTokenizer
from electra_tf.training.optimization import WarmupLinearDecay, create_optimizer, pretraining_optimizer
from electra_tf.transformers_names import (
    AutoTokenizer,
    ElectraForMaskedLM,
    ElectraForPreTraining,
    ElectraTokenizerFast,
    TFElectraForMaskedLM,
    TFElectraForMultipleChoice,
    TFElectraForPreTraining,
    TFElectraForQuestionAnswering,
    TFElectraForSequenceClassification,
    TFElectraForTokenClassification,
    TFElectraModel,
)

__all__ = [
    "AutoTokenizer",
    "ElectraConfig",
    "ElectraDiscriminator",
    "ElectraEmbedding",
    "ElectraForMaskedLM",
    "ElectraForMultipleChoice",
    "ElectraForPreTraining",
    "ElectraForQuestionAnswering",
    "ElectraForSequenceClassification",
    "ElectraForTokenClassification",
    "ElectraGenerator",
    "ElectraModel",
    "ElectraPreprocessor",
    "ElectraPretrainer",
    "ElectraTextClassifier",
    "ElectraTokenizer",
    "ElectraTokenizerFast",
    "FinetuningConfig",
    "PretrainingConfig",
    "TFElectraForMaskedLM",
    "TFElectraForMultipleChoice",
    "TFElectraForPreTraining",
    "TFElectraForQuestionAnswering",
    "TFElectraForSequenceClassification",
    "TFElectraForTokenClassification",
    "TFElectraModel",
    "WarmupLinearDecay",
    "create_optimizer",
    "finetune",
    "generator_config",
    "load_run_config",
    "make_task",
    "pipeline",
    "pretraining_optimizer",
    "save_keras_hub_preset",
    "save_run_config",
]
