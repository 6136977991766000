"""The pre-training variants table (`VARIANTS`), one row per name of `objective`, `weight_sharing`, `generator_type`
and `training_algorithm`: what it builds and its FLOPs formula (by import path, so the table loads without
TensorFlow), and what it cannot be combined with. Everything that decodes a variant's name reads it.

Example:
>>> from electra_tf.config import PretrainingConfig
>>> names("generator_type")
('masked_lm', 'unigram', 'pretrained')
>>> broken_rule(PretrainingConfig())
>>> from types import SimpleNamespace
>>> config = SimpleNamespace(**{**vars(PretrainingConfig()), "objective": "clm", "training_algorithm": "adversarial"})
>>> broken_rule(config)
('training_algorithm', "'adversarial' trains a discriminator by RTD, not objective='clm'")
"""

import dataclasses

TEMPERATURE_SCHEDULES = ("exponential", "linear", "cosine")  # Fast-ELECTRA's temperature schedules


@dataclasses.dataclass(frozen=True)
class Needs:
    """The config's `field` (`sharing`: `weight_sharing` as the config reads it) must be one of `allowed`; else the
    error names `named` (default: `field`) and says `message`, formatted with `value` and `config`."""

    field: str
    allowed: tuple
    message: str
    named: str | None = None

    def broken(self, config):
        value = getattr(config, self.field)
        if value not in self.allowed:
            named = self.named or ("weight_sharing" if self.field == "sharing" else self.field)
            return named, self.message.format(value=value, config=config)
        return None


@dataclasses.dataclass(frozen=True)
class Holds:
    """`test(config)` must be true; else the error names `named` and says `message` (formatted with `config`)."""

    test: object
    named: str
    message: str

    def broken(self, config):
        return None if self.test(config) else (self.named, self.message.format(config=config))


def _full_size(config):
    return config.generator_hidden_size == 1.0 and config.generator_layers == 1.0


_NO_GENERATOR_CHECKPOINT = Holds(lambda c: not c.generator_checkpoint, "generator_checkpoint",
                                 "needs generator_type='pretrained'")
_NO_TWO_STAGE_STEPS = Holds(lambda c: c.two_stage_generator_steps == 0, "two_stage_generator_steps",
                            "is only used with training_algorithm='two_stage'")

@dataclasses.dataclass(frozen=True)
class Variant:
    """One row: `part`, what `name` builds (`module:attribute`); `flops`, its forward FLOPs per input token
    (`module:function` of `(model_config, pretraining_config)`); `rules`, what it needs of the other settings;
    `reads_unigram_counts`, it samples from the corpus's token counts."""

    field: str
    name: object
    part: str | None = None
    flops: str | None = None
    rules: tuple = ()
    full_size_generator: bool = False
    reads_unigram_counts: bool = False


_PRETRAINING, _FLOPS = "electra_tf.pretraining.", "electra_tf.pretraining.flops:"
_SOURCES = _PRETRAINING + "generator_sources:"
_ALGORITHMS = _PRETRAINING + "training_algorithms:"

VARIANTS = (
    # The older spelling of weight_sharing="none" (no name of its own: a rule).
    Variant("untied_generator_embeddings", True, rules=(
        Needs("weight_sharing", ("none", "embeddings"), "contradicts weight_sharing={value!r}",
              named="untied_generator_embeddings"),)),
    Variant("objective", "electra", _PRETRAINING + "electra:ReplacedTokenDetection", _FLOPS + "rtd_flops"),
    Variant("objective", "mlm", _PRETRAINING + "mlm:MaskedLanguageModel", _FLOPS + "no_flops", full_size_generator=True,
            rules=tuple(Needs(field, allowed, "{value!r} needs a generator and a discriminator, not objective='mlm'")
                        for field, allowed in (("sharing", ("embeddings", "none")), ("generator_type", ("masked_lm",)),
                                               ("training_algorithm", ("joint",))))),
    Variant("objective", "electra_15", _PRETRAINING + "electra_15:MaskedReplacedTokenDetection", _FLOPS + "rtd_flops"),
    # The encoder and the kept masked LM at the masked positions.
    Variant("objective", "replace_mlm", _PRETRAINING + "replace_mlm:ReplaceMLM", _FLOPS + "masked_lm_forward_flops"),
    Variant("objective", "all_tokens_mlm", _PRETRAINING + "all_tokens_mlm:AllTokensMLM",
            _FLOPS + "rtd_and_kept_mlm_flops"),
    Variant("objective", "clm", _PRETRAINING + "corrective_lm:CorrectiveLanguageModel",
            _FLOPS + "rtd_and_kept_mlm_flops"),
    Variant("weight_sharing", "none", _SOURCES + "SHARE_NONE"),
    Variant("weight_sharing", "embeddings", _SOURCES + "SHARE_EMBEDDINGS"),
    Variant("weight_sharing", "all", _SOURCES + "SHARE_ALL", full_size_generator=True, rules=(
        Holds(_full_size, "weight_sharing",
              "'all' shares one encoder, so generator_hidden_size and generator_layers must be 1.0"),)),
    Variant("weight_sharing", "gdes", _SOURCES + "SHARE_GDES"),
    Variant("generator_type", "masked_lm", _SOURCES + "GeneratorNetwork", _FLOPS + "generator_network_flops",
            rules=(_NO_GENERATOR_CHECKPOINT,)),
    Variant("generator_type", "unigram", _SOURCES + "UnigramGenerator", _FLOPS + "no_flops", reads_unigram_counts=True,
            rules=(*(Needs(field, allowed, "{value!r} needs a generator network, not generator_type='unigram'")
                     for field, allowed in (("sharing", ("none", "embeddings")), ("disallow_correct", (False,)),
                                            ("training_algorithm", ("joint",)))),
                   _NO_GENERATOR_CHECKPOINT)),
    Variant("generator_type", "pretrained", _PRETRAINING + "fast_electra:PretrainedGenerator",
            _FLOPS + "pretrained_generator_flops", rules=(
                Holds(lambda c: bool(c.generator_checkpoint), "generator_checkpoint",
                      "is the generator of generator_type='pretrained', and needs it"),
                Needs("sharing", ("none",), "{value!r} does not go with generator_type='pretrained' (use 'none')"),
                Needs("training_algorithm", ("joint",),
                      "{value!r} does not go with generator_type='pretrained' (use 'joint')"),
                Holds(lambda c: c.initial_temperature > 0, "initial_temperature", "must be > 0"),
                Holds(lambda c: c.temperature_decay_steps >= 0, "temperature_decay_steps", "must be >= 0"),
                Needs("temperature_schedule", TEMPERATURE_SCHEDULES,
                      f"{{value!r}} is not one of {TEMPERATURE_SCHEDULES}"))),
    Variant("training_algorithm", "joint", _ALGORITHMS + "joint", rules=(_NO_TWO_STAGE_STEPS,)),
    Variant("training_algorithm", "two_stage", _ALGORITHMS + "two_stage", full_size_generator=True, rules=(
        Needs("objective", ("electra",), "'two_stage' trains with objective='electra', not {value!r}",
              named="training_algorithm"),
        Holds(_full_size, "training_algorithm", "'two_stage' initialises the discriminator from the generator, "
              "so generator_hidden_size and generator_layers must be 1.0"),
        Needs("sharing", ("none", "embeddings"), "{value!r} does not go with training_algorithm='two_stage'"),
        Holds(lambda c: 1 <= c.two_stage_generator_steps < c.train_steps, "two_stage_generator_steps",
              "must be in [1, train_steps={config.train_steps}) for 'two_stage', "
              "got {config.two_stage_generator_steps}"))),
    Variant("training_algorithm", "adversarial", _ALGORITHMS + "Adversarial", rules=(
        _NO_TWO_STAGE_STEPS,
        Needs("objective", ("electra", "electra_15"),
              "'adversarial' trains a discriminator by RTD, not objective={value!r}", named="training_algorithm"))),
)
# The fields whose names are rows, in the order their rules are checked.
FIELDS = ("untied_generator_embeddings", "objective", "weight_sharing", "generator_type", "training_algorithm")


def names(field):
    """The names `field` accepts, in the table's order."""
    return tuple(row.name for row in VARIANTS if row.field == field)


def variant_of(config, field):
    """The row of `config`'s value of `field`, or None (a value without a row: `untied_generator_embeddings=False`)."""
    value = getattr(config, field)
    return next((row for row in VARIANTS if row.field == field and row.name == value), None)


def rows_of(config):
    """The rows of `config`'s variants, in `FIELDS` order."""
    return [row for row in (variant_of(config, field) for field in FIELDS) if row is not None]


def full_size_generator(config):
    """Whether `config`'s generator is the discriminator's full-size model (`config.generator_config`)."""
    return any(row.full_size_generator for row in rows_of(config))


def reads_unigram_counts(config):
    return any(row.reads_unigram_counts for row in rows_of(config))


def broken_rule(config):
    """`(field, message)` of the first rule `config`'s variants break, or None."""
    for row in rows_of(config):
        for rule in row.rules:
            broken = rule.broken(config)
            if broken:
                return broken
    return None
