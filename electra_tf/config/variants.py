"""What each pre-training variant cannot be combined with, declared per variant; `PretrainingConfig` checks every
config against it (`broken_rule`), one `ValueError` naming the field.

Here rather than in the variants' own modules because it must load without TensorFlow: every config is checked,
`--help`'s too. `RULES[field][name]` is what the variant `name` of `field` needs of the other settings, in
order: `Needs(field, allowed)`, the config's `field` (`sharing` is `weight_sharing` as `untied_generator_embeddings`
may override it) one of `allowed`; `Holds(test)`, a test of the config's numbers. A variant without an entry
combines with everything; `tests/config/test_variants.py` keeps every registered name here.
`FULL_SIZE_GENERATOR` names the variants whose generator is the discriminator's full-size model
(`config.generator_config`), `READS_UNIGRAM_COUNTS` those that need the corpus's token counts (`variant_inputs`).

Example:
>>> from electra_tf.config import PretrainingConfig
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
    """The config's `field` must be one of `allowed`; else the error names `named` (default: `field`) and says
    `message`, formatted with `value` (the field's) and `config`."""

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

# field -> variant name -> what it needs; the fields in the order they are checked.
RULES = {
    "untied_generator_embeddings": {  # the older spelling of weight_sharing="none"
        True: [Needs("weight_sharing", ("none", "embeddings"), "contradicts weight_sharing={value!r}",
                     named="untied_generator_embeddings")],
    },
    "objective": {  # objectives: electra.py, electra_15.py, replace_mlm.py, all_tokens_mlm.py, corrective_lm.py, mlm.py
        "mlm": [Needs(field, allowed, "{value!r} needs a generator and a discriminator, not objective='mlm'")
                for field, allowed in (("sharing", ("embeddings", "none")), ("generator_type", ("masked_lm",)),
                                       ("training_algorithm", ("joint",)))],
    },
    "weight_sharing": {  # generator_sources.py
        "all": [Holds(_full_size, "weight_sharing",
                      "'all' shares one encoder, so generator_hidden_size and generator_layers must be 1.0")],
    },
    "generator_type": {  # generator_sources.py, fast_electra.py
        "masked_lm": [_NO_GENERATOR_CHECKPOINT],
        "unigram": [*(Needs(field, allowed, "{value!r} needs a generator network, not generator_type='unigram'")
                      for field, allowed in (("sharing", ("none", "embeddings")), ("disallow_correct", (False,)),
                                             ("training_algorithm", ("joint",)))),
                    _NO_GENERATOR_CHECKPOINT],
        "pretrained": [
            Holds(lambda c: bool(c.generator_checkpoint), "generator_checkpoint",
                  "is the generator of generator_type='pretrained', and needs it"),
            Needs("sharing", ("none",), "{value!r} does not go with generator_type='pretrained' (use 'none')"),
            Needs("training_algorithm", ("joint",),
                  "{value!r} does not go with generator_type='pretrained' (use 'joint')"),
            Holds(lambda c: c.initial_temperature > 0, "initial_temperature", "must be > 0"),
            Holds(lambda c: c.temperature_decay_steps >= 0, "temperature_decay_steps", "must be >= 0"),
            Needs("temperature_schedule", TEMPERATURE_SCHEDULES,
                  f"{{value!r}} is not one of {TEMPERATURE_SCHEDULES}"),
        ],
    },
    "training_algorithm": {  # training_algorithms.py
        "joint": [_NO_TWO_STAGE_STEPS],
        "two_stage": [
            Needs("objective", ("electra",), "'two_stage' trains with objective='electra', not {value!r}",
                  named="training_algorithm"),
            Holds(_full_size, "training_algorithm", "'two_stage' initialises the discriminator from the generator, "
                  "so generator_hidden_size and generator_layers must be 1.0"),
            Needs("sharing", ("none", "embeddings"), "{value!r} does not go with training_algorithm='two_stage'"),
            Holds(lambda c: 1 <= c.two_stage_generator_steps < c.train_steps, "two_stage_generator_steps",
                  "must be in [1, train_steps={config.train_steps}) for 'two_stage', "
                  "got {config.two_stage_generator_steps}"),
        ],
        "adversarial": [
            _NO_TWO_STAGE_STEPS,
            Needs("objective", ("electra", "electra_15"),
                  "'adversarial' trains a discriminator by RTD, not objective={value!r}", named="training_algorithm"),
        ],
    },
}


# The variants whose generator has the discriminator's exact shape: `mlm` trains it alone, `two_stage` starts the
# discriminator from it, `weight_sharing="all"` shares one encoder (field -> names, `sharing` as in `Needs`).
FULL_SIZE_GENERATOR = {"objective": ("mlm",), "training_algorithm": ("two_stage",), "sharing": ("all",)}
# The variants that sample from the corpus's token counts, counted before the run (`variant_inputs`).
READS_UNIGRAM_COUNTS = {"generator_type": ("unigram",)}


def names_any(config, variants):
    """Whether `config` has one of `variants` (`{field: names}`, e.g. `FULL_SIZE_GENERATOR`)."""
    return any(getattr(config, field) in names for field, names in variants.items())


def broken_rule(config):
    """`(field, message)` of the first rule `config`'s variants break, or None."""
    for field, variants in RULES.items():
        for rule in variants.get(getattr(config, field), ()):
            broken = rule.broken(config)
            if broken:
                return broken
    return None
