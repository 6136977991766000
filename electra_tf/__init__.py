"""electra_tf: ELECTRA pre-training and fine-tuning on Keras 3 / TensorFlow (the tree: docs/development.md).

`import electra_tf` imports neither TensorFlow nor Keras: each name below is imported on first use (PEP 562), and
the first use of any but the configs' registers our Keras objects (`register_keras_objects()`, to load a `.keras`
file first). transformers 4.x's TensorFlow names are ours too (`electra_tf.transformers`); `create_optimizer` is
transformers', ours `electra_tf.training.optimization.create_optimizer`.

>>> import electra_tf
>>> electra_tf.ElectraConfig(hidden_size=64).hidden_size
64
>>> electra_tf.__version__ == electra_tf.version.__version__
True
"""

import importlib
import importlib.util

from electra_tf.version import __version__

# Each public name and the module that defines it.
_MODULE_OF = {
    **dict.fromkeys(["ElectraConfig", "FinetuningConfig", "PretrainingConfig", "generator_config", "load_run_config",
                     "save_run_config"], "electra_tf.config"),
    **dict.fromkeys(["finetune", "make_task"], "electra_tf.finetuning"),
    **dict.fromkeys(["ElectraTextClassifier", "save_keras_hub_preset"], "electra_tf.export.keras_hub"),
    "ElectraEmbedding": "electra_tf.layers.embeddings",
    "ElectraDiscriminator": "electra_tf.models.discriminator",
    "ElectraGenerator": "electra_tf.models.generator",
    **dict.fromkeys(["ElectraForMaskedLM", "ElectraForMultipleChoice", "ElectraForPreTraining",
                     "ElectraForQuestionAnswering", "ElectraForSequenceClassification",
                     "ElectraForTokenClassification", "ElectraModel", "TFElectraForQuestionAnswering"],
                    "electra_tf.transformers.modeling"),
    "pipeline": "electra_tf.transformers.pipelines",
    "ElectraPreprocessor": "electra_tf.text.preprocessor",
    "ElectraPretrainer": "electra_tf.pretraining.pretrainer",
    "ElectraTokenizer": "electra_tf.transformers.tokenizer",
    "WordPieceTokenizer": "electra_tf.text.tokenizer",
    **dict.fromkeys(["WarmupLinearDecay", "pretraining_optimizer"], "electra_tf.training.optimization"),
    "PushToHubCallback": "electra_tf.training.hub_callback",
    # transformers 4.x's TensorFlow names (electra_tf.transformers)
    **dict.fromkeys(["ElectraTokenizerFast", "TFElectraForMaskedLM", "TFElectraForMultipleChoice",
                     "TFElectraForPreTraining", "TFElectraForSequenceClassification",
                     "TFElectraForTokenClassification", "TFElectraModel"], "electra_tf.transformers.names"),
    **dict.fromkeys(["AutoConfig", "AutoTokenizer", "TFAutoModel", "TFAutoModelForMaskedLM",
                     "TFAutoModelForMultipleChoice", "TFAutoModelForPreTraining", "TFAutoModelForQuestionAnswering",
                     "TFAutoModelForSequenceClassification", "TFAutoModelForTokenClassification"],
                    "electra_tf.transformers.auto"),
    **dict.fromkeys(["DataCollatorForLanguageModeling", "DataCollatorForMultipleChoice",
                     "DataCollatorForTokenClassification", "DataCollatorForWholeWordMask", "DataCollatorWithPadding",
                     "DefaultDataCollator"], "electra_tf.transformers.collators"),
    **dict.fromkeys(["AdamWeightDecay", "WarmUp", "create_optimizer"], "electra_tf.transformers.optimization"),
    "KerasMetricCallback": "electra_tf.transformers.callbacks",
}
# The modules that register classes with Keras (`keras.saving.register_keras_serializable`) when imported.
KERAS_OBJECT_MODULES = (
    "electra_tf.finetuning.question_answering", "electra_tf.export.keras_hub", "electra_tf.layers.activations",
    "electra_tf.layers.choice_reshape", "electra_tf.layers.embeddings", "electra_tf.layers.heads",
    "electra_tf.layers.qa_head", "electra_tf.layers.transformer_layer", "electra_tf.models.discriminator",
    "electra_tf.models.encoder", "electra_tf.models.generator", "electra_tf.models.multiple_choice",
    "electra_tf.models.question_answering", "electra_tf.models.sequence_classification",
    "electra_tf.models.token_classification", "electra_tf.text.preprocessor", "electra_tf.pretraining.gdes",
    "electra_tf.pretraining.pretrainer", "electra_tf.text.tokenizer", "electra_tf.training.optimization", "electra_tf.transformers.modeling", "electra_tf.transformers.optimization",
    "electra_tf.transformers.tokenizer",
)

__all__ = sorted([*_MODULE_OF, "__version__", "register_keras_objects"])


def register_keras_objects():
    """Registers every model, layer, loss and schedule of the package with Keras (imports TensorFlow and Keras),
    so that any `.keras` file of ours loads with `keras.saving.load_model`."""
    for module in KERAS_OBJECT_MODULES:
        importlib.import_module(module)


def __getattr__(name):
    """A public name, imported on first use (registering the Keras objects first, but for the configs); a
    submodule (`electra_tf.finetuning`), imported."""
    module = _MODULE_OF.get(name)
    if module is None:
        if importlib.util.find_spec(f"{__name__}.{name}") is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return importlib.import_module(f"{__name__}.{name}")
    if module != "electra_tf.config":
        register_keras_objects()
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
