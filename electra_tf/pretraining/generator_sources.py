"""Where the replacements come from: a generator network trained alongside, with the configured weight sharing,
or the corpus's unigram counts (Clark et al., 2020, §3.2); `fast_electra.PretrainedGenerator` is a third source.
What the step asks a source: docs/pretraining_variants.md, "How a variant is built".

Example:
>>> from electra_tf.config import ElectraConfig, PretrainingConfig
>>> source = UnigramGenerator(ElectraConfig(vocab_size=4), PretrainingConfig(generator_type="unigram"), (0,),
...                           unigram_counts=[9, 1, 1, 0], sharing=SHARE_EMBEDDINGS)
>>> source.unigram_counts, source.trained
((0.0, 1.0, 1.0, 0.0), False)
"""

import dataclasses

import tensorflow as tf

from electra_tf.config import generator_config
from electra_tf.models.discriminator import ElectraDiscriminator
from electra_tf.models.generator import ElectraGenerator
from electra_tf.pretraining.gdes import DisentangledEmbedding, fold
from electra_tf.pretraining.sampling import sample_replacements, sample_unigram


def discriminator_network(config, **kwargs):
    """The discriminator every source builds."""
    return ElectraDiscriminator(config, name="discriminator", **kwargs)


def _share_none(config, gen_config):
    return discriminator_network(config), ElectraGenerator(gen_config, name="generator")


def _share_embeddings(config, gen_config):
    discriminator = discriminator_network(config)
    return discriminator, ElectraGenerator(gen_config, embedding=discriminator.backbone.embedding, name="generator")


def _share_all(config, gen_config):
    """One encoder: the generator is the discriminator's with an MLM head."""
    discriminator = discriminator_network(config)
    return discriminator, ElectraGenerator(config, backbone=discriminator.backbone, name="generator")


def _share_gdes(config, gen_config):
    generator = ElectraGenerator(gen_config, name="generator")
    embedding = DisentangledEmbedding(generator.backbone.embedding, name="embeddings")
    return discriminator_network(config, embedding=embedding), generator


@dataclasses.dataclass(frozen=True)
class WeightSharing:
    """How the generator and the discriminator share weights (`PretrainingConfig.weight_sharing`)."""

    build: object  # (config, generator config) -> (discriminator, generator)
    fold: object = None  # the discriminator as saved, when it is not the trained one (GDES)
    ties_embeddings: bool = False  # the two networks share their embedding block and nothing else


SHARE_NONE = WeightSharing(_share_none)
SHARE_EMBEDDINGS = WeightSharing(_share_embeddings, ties_embeddings=True)
SHARE_ALL = WeightSharing(_share_all)  # one encoder
SHARE_GDES = WeightSharing(_share_gdes, fold=fold)

# What a checkpoint network without a masked-LM head is, by its Hugging Face class, for an error.
_ROLES = {"ElectraForPreTraining": "a discriminator", "ElectraModel": "a bare encoder", "BertModel": "a bare encoder",
          "BertForPreTraining": "a BERT model, whose cls. head electra_tf does not load"}


def check_masked_lm(network, name, use):
    """Refuses the checkpoint network `network` (a `checkpoints.sources.Network` of the checkpoint `name`) as the
    start of a generator when it holds no masked-LM head (the loaded head would be random); `use` names the generator.

    >>> from electra_tf.checkpoints.sources import Network
    >>> from electra_tf.config import ElectraConfig
    >>> discriminator = Network(ElectraConfig(), "ElectraForPreTraining", {})
    >>> check_masked_lm(discriminator, "runs/small/final", "a generator")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: runs/small/final: holds a ElectraForPreTraining (a discriminator) without a trained masked-LM head, ...
    """
    if network.architecture != ElectraGenerator.hf_class:
        role = _ROLES.get(network.architecture)
        raise ValueError(f"{name}: holds a {network.architecture or 'model of ours'}{f' ({role})' if role else ''} "
                         f"without a trained masked-LM head, which {use} needs; give a masked LM (our run's final/ "
                         "with generator.keras, a Hugging Face ElectraForMaskedLM folder, a Google checkpoint with "
                         "its generator)")


def reads_no_checkpoint(pretraining_config):
    """A source's `check_checkpoints` when it reads none: nothing to refuse."""


class GeneratorNetwork:
    """`generator_type="masked_lm"`: a small masked LM trained jointly, sharing weights as configured."""

    trained = True

    def __init__(self, config, pretraining_config, special_token_ids, unigram_counts=None, sharing=SHARE_NONE):
        self.pretraining_config = pretraining_config
        self.sharing = sharing

    def networks(self, config):
        return self.sharing.build(config, generator_config(config, self.pretraining_config))

    check_checkpoints = staticmethod(reads_no_checkpoint)

    def sample(self, mlm_logits, masked, keys, counter):
        return sample_from_logits(mlm_logits, masked, keys, self.pretraining_config.temperature,
                                  self.pretraining_config)


def sample_from_logits(mlm_logits, masked, keys, temperature, pretraining_config):
    """A generator network's replacements at `temperature`, as `pretraining_config` draws them."""
    return sample_replacements(mlm_logits, masked.labels, keys, temperature=temperature,
                               disallow_correct=pretraining_config.disallow_correct, sampler=pretraining_config.sampler)


class UnigramGenerator:
    """`generator_type="unigram"`: replacements drawn from the corpus's `unigram_counts` (`[vocab_size]`,
    `variant_inputs.count_tokens`), never a special token; no network, no cost."""

    trained = False

    def __init__(self, config, pretraining_config, special_token_ids, unigram_counts=None, sharing=SHARE_NONE):
        self.sharing = sharing
        counts = unigram_counts
        if counts is None or len(counts) != config.vocab_size or min(counts) < 0 or not sum(counts) > 0:
            raise ValueError(f"ElectraPretrainer: generator_type='unigram' needs unigram_counts, "
                             f"{config.vocab_size} non-negative token counts with a positive sum "
                             "(variant_inputs.count_tokens)")
        self.unigram_counts = tuple(0.0 if i in special_token_ids else float(c) for i, c in enumerate(counts))

    def networks(self, config):
        return discriminator_network(config), None

    check_checkpoints = staticmethod(reads_no_checkpoint)

    def sample(self, mlm_logits, masked, keys, counter):
        return sample_unigram(tf.constant(self.unigram_counts, tf.float32), masked.labels, keys)
