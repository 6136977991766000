"""transformers 4.x's names for electra_tf's classes, so that code written for them migrates by its imports: each
`TF*` name is the room's class itself, except `TFElectraForQuestionAnswering`, whose default head is
transformers' (`head="huggingface"`).

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
