"""transformers 4.x's names for electra_tf's classes, so that code written for them migrates by its imports.

transformers 5 removed its TensorFlow models; code using `TFElectraForSequenceClassification`,
`TFElectraForPreTraining` and the like runs here with `from electra_tf import ...` instead of
`from transformers import ...`. Each `TF*` name is the room's class itself (`electra_tf.transformers.modeling`),
not a copy: `TFElectraModel` is `ElectraModel`, `TFElectraForPreTraining` is `ElectraForPreTraining`, ... One
exception: `TFElectraForQuestionAnswering` is `ElectraForQuestionAnswering` with transformers' head by default
(`head="huggingface"`), where ours defaults to ELECTRA's original head, whose outputs transformers code does not
expect. (`AutoTokenizer` and the `TFAutoModel*` classes: `electra_tf.transformers.auto`.)

Example:
>>> from electra_tf import AutoTokenizer, ElectraConfig, TFElectraForSequenceClassification
>>> TFElectraForSequenceClassification is ElectraForSequenceClassification
True
>>> type(AutoTokenizer.from_pretrained("tests/fixtures/hf/discriminator")).__name__
'ElectraTokenizer'
>>> ElectraConfig.from_pretrained("tests/fixtures/hf/discriminator").num_hidden_layers
2
"""

from electra_tf.transformers.tokenizer import ElectraTokenizer
from electra_tf.transformers.modeling import (
    ElectraForMaskedLM,
    ElectraForMultipleChoice,
    ElectraForPreTraining,
    ElectraForQuestionAnswering,
    ElectraForSequenceClassification,
    ElectraForTokenClassification,
    ElectraModel,
    TFElectraForQuestionAnswering,
)

TFElectraModel = ElectraModel
TFElectraForPreTraining = ElectraForPreTraining
TFElectraForMaskedLM = ElectraForMaskedLM
TFElectraForSequenceClassification = ElectraForSequenceClassification
TFElectraForTokenClassification = ElectraForTokenClassification
TFElectraForMultipleChoice = ElectraForMultipleChoice
ElectraTokenizerFast = ElectraTokenizer
__all__ = ["ElectraModel", "ElectraForPreTraining", "ElectraForMaskedLM", "ElectraForSequenceClassification",
           "ElectraForTokenClassification", "ElectraForQuestionAnswering", "ElectraForMultipleChoice",
           "TFElectraForQuestionAnswering"]
