"""The one place config names map to the pre-trainer's parts: objectives, generator sources and training
algorithms (`PretrainingConfig.objective`, `generator_type`, `training_algorithm`). Adding a variant is its
module plus its line here (and its name in `config.py`, which checks the combinations).

Example:
>>> from electra_tf.config import PretrainingConfig
>>> parts = variant_parts(PretrainingConfig(objective="electra_15"))
>>> type(parts.objective).__name__, type(parts.algorithm).__name__
('MaskedReplacedTokenDetection', 'Joint')
"""

import dataclasses

from electra_tf.pretraining.all_tokens_mlm import AllTokensMLM
from electra_tf.pretraining.electra_15 import MaskedReplacedTokenDetection
from electra_tf.pretraining.fast_electra import PretrainedGenerator
from electra_tf.pretraining.generator_sources import GeneratorNetwork, UnigramGenerator
from electra_tf.pretraining.mlm_objective import MaskedLanguageModel
from electra_tf.pretraining.objective import ReplacedTokenDetection
from electra_tf.pretraining.replace_mlm import ReplaceMLM
from electra_tf.pretraining.training_algorithms import Adversarial, Joint, TwoStage

OBJECTIVES = {
    "electra": ReplacedTokenDetection,
    "electra_15": MaskedReplacedTokenDetection,
    "replace_mlm": ReplaceMLM,
    "all_tokens_mlm": AllTokensMLM,
    "mlm": MaskedLanguageModel,
}
GENERATOR_SOURCES = {
    "masked_lm": GeneratorNetwork,
    "unigram": UnigramGenerator,
    "pretrained": PretrainedGenerator,
}
TRAINING_ALGORITHMS = {
    "joint": Joint,
    "two_stage": TwoStage,
    "adversarial": Adversarial,
}


@dataclasses.dataclass(frozen=True)
class VariantParts:
    objective: object
    algorithm: object


def variant_parts(pretraining_config):
    """The objective and training algorithm `pretraining_config` names (the generator source needs the
    model's config and the vocabulary's inputs: `GENERATOR_SOURCES[generator_type](...)`)."""
    return VariantParts(OBJECTIVES[pretraining_config.objective](),
                        TRAINING_ALGORITHMS[pretraining_config.training_algorithm](pretraining_config))
