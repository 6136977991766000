"""The pre-trainer's parts by their config names, each imported from its row of the variants table
(`config.variants.VARIANTS`, which names it by import path).

Example:
>>> from electra_tf.config import ElectraConfig, PretrainingConfig
>>> parts = variant_parts(PretrainingConfig(objective="electra_15"), ElectraConfig(), special_token_ids=(0,))
>>> type(parts.objective).__name__, type(parts.source).__name__, type(parts.algorithm).__name__
('MaskedReplacedTokenDetection', 'GeneratorNetwork', 'MaskedLMTraining')
>>> flops_formula(PretrainingConfig(), "objective").__name__
'rtd_flops'
"""

import dataclasses
import importlib

from electra_tf.config.variants import VARIANTS, variant_of


def load(path):
    """The attribute a `module:attribute` import path names."""
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)


def _parts(field):
    return {row.name: load(row.part) for row in VARIANTS if row.field == field}


OBJECTIVES = _parts("objective")
GENERATOR_SOURCES = _parts("generator_type")
WEIGHT_SHARING = _parts("weight_sharing")
TRAINING_ALGORITHMS = _parts("training_algorithm")


@dataclasses.dataclass(frozen=True)
class VariantParts:
    objective: object
    source: object
    algorithm: object


def source_class(pretraining_config):
    """The generator source class `pretraining_config.generator_type` names."""
    return GENERATOR_SOURCES[pretraining_config.generator_type]


def algorithm_of(pretraining_config):
    """The training algorithm `pretraining_config.training_algorithm` names."""
    return TRAINING_ALGORITHMS[pretraining_config.training_algorithm](pretraining_config)


def flops_formula(pretraining_config, field):
    """The forward-FLOPs formula per input token of `pretraining_config`'s variant of `field`."""
    return load(variant_of(pretraining_config, field).flops)


def variant_parts(pretraining_config, model_config, special_token_ids, unigram_counts=None):
    """The objective, generator source and training algorithm of a pre-trainer of `model_config`."""
    source = source_class(pretraining_config)(model_config, pretraining_config, special_token_ids,
                                              unigram_counts=unigram_counts,
                                              sharing=WEIGHT_SHARING[pretraining_config.sharing])
    return VariantParts(OBJECTIVES[pretraining_config.objective](), source, algorithm_of(pretraining_config))
