"""transformers 4.x's names for electra_tf's classes, so that code written for them migrates by its imports.

transformers 5 removed its TensorFlow models; code using `TFElectraForSequenceClassification`,
`TFElectraForPreTraining` and the like runs here with `from electra_tf import ...` instead of
`from transformers import ...`. Each name is our class itself, not a copy: `TFElectraModel` is `ElectraModel`,
`TFElectraForPreTraining` and `ElectraForPreTraining` are `ElectraDiscriminator`, `TFElectraForMaskedLM` and
`ElectraForMaskedLM` are `ElectraGenerator`, `ElectraTokenizerFast` is `ElectraTokenizer`. One exception:
`TFElectraForQuestionAnswering` is `ElectraForQuestionAnswering` with transformers' head by default
(`head="huggingface"`), where ours defaults to ELECTRA's original head, whose outputs transformers code does not
expect. `AutoTokenizer.from_pretrained` gives an `ElectraTokenizer` for a BERT or ELECTRA WordPiece tokenizer
(the one kind electra_tf has), and refuses any other kind (SentencePiece, BPE) in one line; the kind is what the
files say (`tokenizer_config.json`'s `tokenizer_class`, else `config.json`'s `model_type`), else what they hold
(`ElectraTokenizer.from_pretrained` refuses a `tokenizer.json` that is not WordPiece).

Example:
>>> from electra_tf import AutoTokenizer, ElectraConfig, TFElectraForSequenceClassification
>>> TFElectraForSequenceClassification is ElectraForSequenceClassification
True
>>> type(AutoTokenizer.from_pretrained("tests/fixtures/hf/discriminator")).__name__
'ElectraTokenizer'
>>> ElectraConfig.from_pretrained("tests/fixtures/hf/discriminator").num_hidden_layers
2
"""

import os

import keras

from electra_tf.util.atomic import read_json
from electra_tf.checkpoints import hub
from electra_tf.checkpoints.hf import CONFIG_NAME
from electra_tf.checkpoints.tokenizer_files import TOKENIZER_CONFIG
from electra_tf.models.discriminator import ElectraDiscriminator
from electra_tf.models.encoder import ElectraModel
from electra_tf.models.generator import ElectraGenerator
from electra_tf.models.multiple_choice import ElectraForMultipleChoice
from electra_tf.models.question_answering import ElectraForQuestionAnswering
from electra_tf.models.sequence_classification import ElectraForSequenceClassification
from electra_tf.models.token_classification import ElectraForTokenClassification
from electra_tf.text.tokenizer import ElectraTokenizer

TFElectraModel = ElectraModel
TFElectraForPreTraining = ElectraForPreTraining = ElectraDiscriminator
TFElectraForMaskedLM = ElectraForMaskedLM = ElectraGenerator
TFElectraForSequenceClassification = ElectraForSequenceClassification
TFElectraForTokenClassification = ElectraForTokenClassification
TFElectraForMultipleChoice = ElectraForMultipleChoice
ElectraTokenizerFast = ElectraTokenizer

# The `model_type`s, and their `<Name>Tokenizer[Fast]` classes, whose tokenizer is BERT's WordPiece with [CLS]/[SEP].
WORDPIECE_MODEL_TYPES = {"bert": "Bert", "electra": "Electra", "distilbert": "DistilBert"}
WORDPIECE_CLASSES = {name + suffix for name in WORDPIECE_MODEL_TYPES.values() for suffix in ("Tokenizer",
                                                                                               "TokenizerFast")}


@keras.saving.register_keras_serializable(package="electra_tf")
class TFElectraForQuestionAnswering(ElectraForQuestionAnswering):
    """transformers' `TFElectraForQuestionAnswering`: `ElectraForQuestionAnswering` with transformers' head by
    default (`qa_outputs`: `start_logits` and `end_logits` `[batch, sequence]`)."""

    def __init__(self, config, head="huggingface", **kwargs):
        super().__init__(config, head=head, **kwargs)


def _declared_kind(folder):
    """`(file, kind, is WordPiece)` as a folder's files name its tokenizer; None when they do not."""
    for name, key, accepted in ((TOKENIZER_CONFIG, "tokenizer_class", WORDPIECE_CLASSES),
                                (CONFIG_NAME, "model_type", WORDPIECE_MODEL_TYPES)):
        path = os.path.join(folder, name)
        kind = read_json(path, expect=dict).get(key) if os.path.isfile(path) else None
        if kind:
            return path, kind, kind in accepted
    return None


class AutoTokenizer:
    """transformers' `AutoTokenizer` for BERT and ELECTRA WordPiece tokenizers: `from_pretrained` gives an
    `ElectraTokenizer`. Not instantiated, as transformers' is not."""

    def __init__(self):
        raise TypeError("AutoTokenizer is not instantiated: call AutoTokenizer.from_pretrained(path_or_hub_id)")

    @staticmethod
    def from_pretrained(path, use_fast=True, do_lower_case=None, strip_accents=None, revision=None, cache_dir=None,
                        token=None, local_files_only=None):
        """The `ElectraTokenizer` of a folder, file or hub id (at `revision`, from or into `cache_dir`, with
        `token`; `local_files_only` keeps to the cache). `use_fast` is taken and ignored (there is one tokenizer);
        `do_lower_case` and `strip_accents` override the files' settings. Another kind of tokenizer is a
        ValueError in one line."""
        del use_fast
        local = hub.resolve(path, revision=revision, cache_dir=cache_dir, token=token,
                            local_files_only=local_files_only, tokenizer_only=True)
        declared = _declared_kind(local) if os.path.isdir(local) else None
        if declared is not None and not declared[2]:
            file, kind, _ = declared
            raise ValueError(f"{path}: {os.path.basename(file)} says {kind!r}, not a BERT or ELECTRA WordPiece "
                             "tokenizer; electra_tf reads only those (AutoTokenizer gives an ElectraTokenizer)")
        return ElectraTokenizer.from_pretrained(local, lowercase=do_lower_case, strip_accents=strip_accents)
