"""The one place config names map to the pre-trainer's parts: objectives, generator sources, weight sharing and
training algorithms (`PretrainingConfig.objective`, `generator_type`, `weight_sharing`, `training_algorithm`).
Adding a variant is its module plus its line here (and its name in `config.py`, which checks the combinations);
no other module branches on a name (`tests/config/test_variants.py`).

Example:
>>> from electra_tf.config import PretrainingConfig
>>> from electra_tf.config import ElectraConfig
>>> parts = variant_parts(PretrainingConfig(objective="electra_15"), ElectraConfig(), special_token_ids=(0,))
>>> type(parts.objective).__name__, type(parts.source).__name__, type(parts.algorithm).__name__
('MaskedReplacedTokenDetection', 'GeneratorNetwork', 'MaskedLMTraining')
"""

import dataclasses

from electra_tf.pretraining.all_tokens_mlm import AllTokensMLM
from electra_tf.pretraining.corrective_lm import CorrectiveLanguageModel
from electra_tf.pretraining.electra import ReplacedTokenDetection
from electra_tf.pretraining.electra_15 import MaskedReplacedTokenDetection
from electra_tf.pretraining.fast_electra import PretrainedGenerator
from electra_tf.pretraining.generator_sources import (
    SHARE_ALL,
    SHARE_EMBEDDINGS,
    SHARE_GDES,
    SHARE_NONE,
    GeneratorNetwork,
    UnigramGenerator,
)
from electra_tf.pretraining.mlm import MaskedLanguageModel
from electra_tf.pretraining.replace_mlm import ReplaceMLM
from electra_tf.pretraining.training_algorithms import Adversarial, joint, two_stage

OBJECTIVES = {
    "electra": ReplacedTokenDetection,
    "electra_15": MaskedReplacedTokenDetection,
    "replace_mlm": ReplaceMLM,
    "all_tokens_mlm": AllTokensMLM,
    "clm": CorrectiveLanguageModel,
    "mlm": MaskedLanguageModel,
}
GENERATOR_SOURCES = {
    "masked_lm": GeneratorNetwork,
    "unigram": UnigramGenerator,
    "pretrained": PretrainedGenerator,
}
WEIGHT_SHARING = {
    "none": SHARE_NONE,
    "embeddings": SHARE_EMBEDDINGS,
    "all": SHARE_ALL,
    "gdes": SHARE_GDES,
}
TRAINING_ALGORITHMS = {
    "joint": joint,
    "two_stage": two_stage,
    "adversarial": Adversarial,
}


@dataclasses.dataclass(frozen=True)
class VariantParts:
    objective: object
    source: object
    algorithm: object


def objective_of(pretraining_config):
    """The objective `pretraining_config.objective` names."""
    return OBJECTIVES[pretraining_config.objective]()


def source_class(pretraining_config):
    """The generator source class `pretraining_config.generator_type` names (its run checks are class members)."""
    return GENERATOR_SOURCES[pretraining_config.generator_type]


def algorithm_of(pretraining_config):
    """The training algorithm `pretraining_config.training_algorithm` names."""
    return TRAINING_ALGORITHMS[pretraining_config.training_algorithm](pretraining_config)


def variant_parts(pretraining_config, model_config, special_token_ids, unigram_counts=None):
    """The objective, generator source and training algorithm of a pre-trainer of `model_config` (the source
    takes the vocabulary's special ids, the weight sharing and, for a unigram generator, the corpus's counts)."""
    source = source_class(pretraining_config)(model_config, pretraining_config, special_token_ids,
                                              unigram_counts=unigram_counts,
                                              sharing=WEIGHT_SHARING[pretraining_config.sharing])
    return VariantParts(objective_of(pretraining_config), source, algorithm_of(pretraining_config))
