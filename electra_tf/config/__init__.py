"""Model, pre-training and fine-tuning configuration: three checked dataclasses, each field with its `--help`
text; a run's JSON file (`configs/`) holds a model's and a pre-training's under `"model"` and `"pretraining"`:

>>> from electra_tf.config import load_run_config
>>> model_config, pretraining_config = load_run_config("electra_small")
>>> model_config.hidden_size, pretraining_config.generator_hidden_size
(256, 0.25)
>>> pretraining_config.predictions_per_seq
19
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.resources
import json
import math
import operator
import os
from typing import Any

from electra_tf.config import variants as variant_rules
from electra_tf.util.atomic import read_json, write_text
from electra_tf.version import VERSION_FIELD, __version__

_ACTIVATIONS = ("gelu", "gelu_approximate", "relu")
_OBJECTIVES = variant_rules.names("objective")
_WEIGHT_SHARING = variant_rules.names("weight_sharing")
_GENERATOR_TYPES = variant_rules.names("generator_type")
_TRAINING_ALGORITHMS = variant_rules.names("training_algorithm")
_OPTIMIZERS = ("adamw", "lamb")
_SAMPLERS = ("inverse_cdf", "gumbel")
# transformers' names of `ElectraConfig` fields where they differ from ours, and its `hidden_act` values.
HF_FIELD_NAMES = {"num_hidden_layers": "num_layers", "num_attention_heads": "num_heads",
                  "hidden_dropout_prob": "hidden_dropout", "attention_probs_dropout_prob": "attention_dropout"}
HF_ACTIVATIONS = {"gelu": "gelu", "gelu_new": "gelu_approximate", "gelu_pytorch_tanh": "gelu_approximate",
                  "gelu_fast": "gelu_approximate", "relu": "relu"}
# `ElectraConfig.from_pretrained`'s reader: `checkpoints.hf`, a layer above, hands it over when imported.
_pretrained_config_reader = None


_RULES = {">= 0": lambda v: v >= 0, ">= 1": lambda v: v >= 1, "> 0": lambda v: v > 0,
          "in (0, 1)": lambda v: 0 < v < 1, "in [0, 1)": lambda v: 0 <= v < 1, "in (0, 1]": lambda v: 0 < v <= 1,
          "in [0, 1]": lambda v: 0 <= v <= 1}


def _field(default, help_text: str, valid=None):
    """A config field with its `--help` text and the values it takes (a rule of `_RULES`, or the names it accepts)."""
    return dataclasses.field(default=default, metadata={"help": help_text, "valid": valid})


def field_help(field: dataclasses.Field) -> str:
    """The `--help` text of a config field (`_field`)."""
    if "help" not in field.metadata:
        raise TypeError(f"config field {field.name!r} has no help text: declare it with _field(default, help)")
    return field.metadata["help"]


def _check(condition: bool, cls_name: str, field: str, message: str) -> None:
    if not condition:
        raise ValueError(f"{cls_name}.{field}: {message}")


class _JsonConfig:
    """JSON round-trip shared by both configs; unknown keys are an error."""

    @classmethod
    def from_dict(cls, values: dict[str, Any]):
        if not isinstance(values, dict):
            raise ValueError(f"{cls.__name__}: expected a JSON object, got {type(values).__name__}")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"{cls.__name__}: unknown key(s) {unknown}; valid keys are {sorted(known)}")
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def replace(self, **changes):
        """A copy with `changes` applied and validated again."""
        return self.from_dict({**self.to_dict(), **changes})

    def differences(self, other, ignore=()):
        """`{field: (self's value, other's value)}` for the fields that differ.

        >>> ElectraConfig(hidden_size=64).differences(ElectraConfig(), ignore=("hidden_dropout",))
        {'hidden_size': (64, 256)}
        """
        mine, theirs = self.to_dict(), other.to_dict()
        return {key: (value, theirs[key]) for key, value in mine.items() if key not in ignore and theirs[key] != value}

    def _check_fields(self) -> None:
        name = type(self).__name__
        for field in dataclasses.fields(self):
            value, valid = getattr(self, field.name), field.metadata.get("valid")
            expected = {"int": int, "float": (int, float), "bool": bool, "str": str}.get(field.type.split(" ")[0])
            if expected is None or (value is None and "None" in field.type):
                continue
            _check(isinstance(value, expected) and not (expected is not bool and isinstance(value, bool)), name,
                   field.name, f"expected {field.type}, got {value!r}")
            if isinstance(valid, tuple):
                _check(value in valid, name, field.name, f"{value!r} is not one of {valid}")
            elif valid is not None:  # (a rule is a finite number's: inf > 0, and training steps of inf epochs fail)
                _check(math.isfinite(value) and _RULES[valid](value), name, field.name,
                       f"must be {'a finite number ' * (not math.isfinite(value))}{valid}, got {value}")


def set_pretrained_config_reader(reader):
    """Makes `reader(path, **hub_options)` the reader of `ElectraConfig.from_pretrained`."""
    global _pretrained_config_reader
    _pretrained_config_reader = reader


def _takes_transformers_names(cls):
    """`cls` also taking and answering to transformers' names, so code written for `transformers.ElectraConfig` runs."""
    init = cls.__init__

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        for theirs, ours in HF_FIELD_NAMES.items():
            if theirs in kwargs:
                if ours in kwargs:
                    raise TypeError(f"{cls.__name__}: {ours} and {theirs} (transformers' name of it) both given")
                kwargs[ours] = kwargs.pop(theirs)
        if isinstance(kwargs.get("hidden_act"), str):
            kwargs["hidden_act"] = HF_ACTIVATIONS.get(kwargs["hidden_act"], kwargs["hidden_act"])
        init(self, *args, **kwargs)

    cls.__init__ = __init__
    for theirs, ours in HF_FIELD_NAMES.items():
        setattr(cls, theirs, property(operator.attrgetter(ours), doc=f"`{ours}`, by transformers' name."))
    return cls


@_takes_transformers_names
@dataclasses.dataclass(frozen=True)
class ElectraConfig(_JsonConfig):
    """The transformer (embeddings, optional projection, post-LN BERT encoder); defaults are ELECTRA-Small's
    discriminator. transformers' field names work too, as keywords and attributes.

    Example:
    >>> ElectraConfig(hidden_size=64, num_heads=2, embedding_size=32).head_size
    32
    >>> config = ElectraConfig(num_hidden_layers=2, hidden_dropout_prob=0.2, hidden_act="gelu_new")
    >>> config.num_layers, config.num_hidden_layers, config.hidden_dropout, config.hidden_act
    (2, 2, 0.2, 'gelu_approximate')
    >>> ElectraConfig(hidden_size=65, num_heads=2)
    Traceback (most recent call last):
    ...
    ValueError: ElectraConfig.hidden_size: 65 is not divisible by num_heads=2
    """

    vocab_size: int = _field(30522, "WordPiece vocabulary size (the tools take it from --vocab_file).", ">= 1")
    embedding_size: int = _field(128, "Width of the embeddings (E); projected to hidden_size when it differs.",
                                 ">= 1")
    hidden_size: int = _field(256, "Width of the transformer (H).", ">= 1")
    num_layers: int = _field(12, "Transformer layers.", ">= 1")
    num_heads: int = _field(4, "Attention heads (hidden_size must divide by it).", ">= 1")
    intermediate_size: int = _field(1024, "Feed-forward width.", ">= 1")
    hidden_act: str = _field("gelu", "Activation: gelu (exact), gelu_approximate (tanh) or relu.", _ACTIVATIONS)
    hidden_dropout: float = _field(0.1, "Dropout on hidden states.", "in [0, 1)")
    attention_dropout: float = _field(0.1, "Dropout on attention probabilities.", "in [0, 1)")
    max_position_embeddings: int = _field(512, "Learned positions (the longest sequence the model takes).", ">= 1")
    type_vocab_size: int = _field(2, "Segment (token type) ids.", ">= 1")
    initializer_range: float = _field(0.02, "Stddev of the truncated-normal initialiser.", "> 0")
    layer_norm_eps: float = _field(1e-12, "LayerNorm epsilon.", "in (0, 1)")

    def __post_init__(self):
        self._check_fields()
        _check(self.hidden_size % self.num_heads == 0, type(self).__name__, "hidden_size",
               f"{self.hidden_size} is not divisible by num_heads={self.num_heads}")

    @property
    def head_size(self) -> int:
        return self.hidden_size // self.num_heads

    @classmethod
    def from_pretrained(cls, path, revision=None, cache_dir=None, token=None, local_files_only=None, **changes):
        """transformers' `ElectraConfig.from_pretrained`: the config of a Hugging Face folder or hub id (only its
        `config.json` is fetched), or of our own model folder; `changes` replace fields, by either name.

        >>> config = ElectraConfig.from_pretrained("tests/fixtures/hf/discriminator", hidden_dropout_prob=0.0)
        >>> config.num_attention_heads, config.hidden_dropout
        (2, 0.0)
        """
        config = _pretrained_config_reader(path, revision=revision, cache_dir=cache_dir, token=token,
                                           local_files_only=local_files_only)
        return config.replace(**{HF_FIELD_NAMES.get(name, name): value for name, value in changes.items()})


@dataclasses.dataclass(frozen=True)
class PretrainingConfig(_JsonConfig):
    """Pre-training settings, with the original code's (`configure_pretraining.py`) defaults for ELECTRA-Small; the
    variants (`objective`, `weight_sharing`, ...) are docs/pretraining_variants.md's.

    Example:
    >>> PretrainingConfig(mask_prob=0.25, max_seq_length=512).predictions_per_seq
    130
    >>> PretrainingConfig(mask_prob=1.5)
    Traceback (most recent call last):
    ...
    ValueError: PretrainingConfig.mask_prob: must be in (0, 1), got 1.5
    """

    # What an unset (None) field stands for in the tools' --help.
    UNSET_DEFAULTS = {"max_predictions_per_seq": "derived from mask_prob and max_seq_length"}

    objective: str = _field("electra", "electra (replaced token detection), mlm (a BERT-style baseline), the "
                                       "paper's electra_15, replace_mlm, all_tokens_mlm, or clm (COCO-LM's "
                                       "corrective LM).", _OBJECTIVES)
    generator_hidden_size: float = _field(0.25, "Generator width as a fraction of hidden_size.", "in (0, 1]")
    generator_layers: float = _field(1.0, "Generator depth as a fraction of num_layers.", "in (0, 1]")
    untied_generator_embeddings: bool = _field(False, "Give the generator its own embeddings (weight_sharing=none).")
    weight_sharing: str = _field("embeddings", "Generator-discriminator sharing: none, embeddings, all, or gdes.",
                                 _WEIGHT_SHARING)
    generator_type: str = _field("masked_lm", "masked_lm (a small transformer), unigram (samples the corpus's token "
                                              "counts) or pretrained (Fast-ELECTRA: a frozen pre-trained masked LM, "
                                              "generator_checkpoint).", _GENERATOR_TYPES)
    generator_checkpoint: str = _field("", "The pre-trained masked LM of generator_type=pretrained (any checkpoint "
                                           "format).")
    initial_temperature: float = _field(2.0, "generator_type=pretrained: sampling temperature at step 0, annealed to "
                                             "temperature.")
    temperature_decay_steps: int = _field(0, "generator_type=pretrained: steps of the temperature's descent (0: "
                                             "train_steps).")
    temperature_schedule: str = _field("exponential", "generator_type=pretrained: exponential, linear or cosine "
                                                      "descent.")
    training_algorithm: str = _field("joint", "joint, two_stage (generator first, then discriminator) or adversarial.",
                                     _TRAINING_ALGORITHMS)
    two_stage_generator_steps: int = _field(0, "Generator-only MLM updates before the discriminator (two_stage).")
    max_seq_length: int = _field(128, "Example length, special tokens included (must match the shards).")
    mask_prob: float = _field(0.15, "Fraction of tokens to predict.", "in (0, 1)")
    max_predictions_per_seq: int | None = _field(None, "Prediction slots per example.")
    mask_token_rate: float = _field(0.85, "Of the selected tokens, the share replaced by [MASK].", "in [0, 1]")
    keep_token_rate: float = _field(0.15, "Of the selected tokens, the share kept unchanged.", "in [0, 1]")
    random_token_rate: float = _field(0.0, "Of the selected tokens, the share replaced by a random token.", "in [0, 1]")
    mask_with_replacement: bool = _field(False, "Draw positions with replacement, as the original code.")
    whole_word_masking: bool = _field(False, "Mask whole words (a word and its ## pieces together).")
    temperature: float = _field(1.0, "Sampling temperature of the generator's replacements.", "> 0")
    disallow_correct: bool = _field(False, "Never sample the original token.")
    sampler: str = _field("inverse_cdf", "How replacements are drawn from the generator's softmax: inverse_cdf (one "
                                         "uniform per slot, faster) or gumbel (Gumbel-max, the original's); the same "
                                         "distribution.", _SAMPLERS)
    gen_weight: float = _field(1.0, "Weight of the generator's MLM loss.", ">= 0")
    disc_weight: float = _field(50.0, "Weight of the discriminator's RTD loss (50 in the paper).", ">= 0")
    optimizer: str = _field("adamw", "adamw or lamb.", _OPTIMIZERS)
    learning_rate: float = _field(5e-4, "Peak learning rate.", "> 0")
    batch_size: int = _field(128, "Global batch size, over all replicas.", ">= 1")
    train_steps: int = _field(1_000_000, "Optimizer updates in all.", ">= 1")
    warmup_steps: int = _field(10_000, "Linear warm-up updates (must be below train_steps).", ">= 0")
    original_lr_schedule: bool = _field(False, "Multiply the warm-up into the decay, as the original code.")
    gradient_accumulation_steps: int = _field(1, "Micro-batches per update.", ">= 1")
    weight_decay_rate: float = _field(0.01, "AdamW weight decay (not on LayerNorm and biases).", ">= 0")
    adam_epsilon: float = _field(1e-6, "Adam epsilon.", "> 0")
    clip_norm: float = _field(1.0, "Global gradient-norm clipping.", "> 0")
    seed: int = _field(0, "Seed of initialisation, masking, sampling and data order.")
    adam_bias_correction: bool = _field(True, "Adam's bias correction (off: the original's optimizer).")

    def __post_init__(self):
        self._check_fields()
        name = type(self).__name__
        _check(self.adam_bias_correction or self.optimizer == "adamw", name, "adam_bias_correction",
               f"false needs optimizer='adamw' (the original's Adam), got {self.optimizer!r}")
        _check(self.max_seq_length >= 5, name, "max_seq_length",
               f"must be >= 5 ([CLS] A [SEP] B [SEP], as examples are packed), got {self.max_seq_length}")
        _check(1 <= self.predictions_per_seq <= self.max_seq_length, name,
               "max_predictions_per_seq",
               f"must be in [1, max_seq_length={self.max_seq_length}], got {self.predictions_per_seq}")
        rates = (self.mask_token_rate, self.keep_token_rate, self.random_token_rate)
        _check(math.isclose(sum(rates), 1.0, abs_tol=1e-6), name, "mask_token_rate",
               f"mask_token_rate + keep_token_rate + random_token_rate must be 1, got {sum(rates)}")
        broken = variant_rules.broken_rule(self)
        if broken:
            _check(False, name, *broken)

    @property
    def predictions_per_seq(self) -> int:
        """`max_predictions_per_seq`, or where unset (`None`, kept so that a changed `mask_prob` or
        `max_seq_length` derives it again) `int((mask_prob + 0.005) * max_seq_length)`."""
        if self.max_predictions_per_seq is not None:
            return self.max_predictions_per_seq
        return int((self.mask_prob + 0.005) * self.max_seq_length)

    @property
    def sharing(self) -> str:
        """`weight_sharing`, or `none` where the older spelling `untied_generator_embeddings=true` says so."""
        return "none" if self.untied_generator_embeddings else self.weight_sharing

    def to_dict(self) -> dict[str, Any]:
        values = super().to_dict()
        values.pop("untied_generator_embeddings")  # read for old configs; weight_sharing says it
        values["weight_sharing"] = self.sharing
        return values


# The fine-tuning tasks by name (a test keeps them equal to `finetuning.TASKS`), for `--task`'s help without TensorFlow.
FINETUNING_TASKS = ("chunk", "cola", "conll2003", "docstring_kinds", "mnli", "mrpc", "qnli", "qqp", "rte", "squad",
                    "squadv1", "sst2", "stsb", "swag", "text_classification", "wnli")


@dataclasses.dataclass(frozen=True)
class FinetuningConfig(_JsonConfig):
    """Fine-tuning settings, with the original `configure_finetuning.py` defaults; fields left `None` take the task's
    and the model's defaults when it is trained (`electra_tf.finetuning.defaults`).

    Example:
    >>> config = FinetuningConfig.for_task("rte", model_size="large")
    >>> config.learning_rate, config.layerwise_lr_decay, config.epochs
    (5e-05, 0.9, None)
    >>> FinetuningConfig.for_task("rte").learning_rate is None  # set by the model's width when it is trained
    True
    """

    # What an unset (None) field stands for in the tools' --help, where it is not the task's default.
    UNSET_DEFAULTS = {"learning_rate": "by the model's width", "layerwise_lr_decay": "0.8, 0.9 for Large models"}

    task: str = _field("sst2", "The task to fine-tune on.")
    head: str = _field("huggingface", "huggingface (loads in transformers) or original (ELECTRA's own).",
                       ("original", "huggingface"))
    learning_rate: float | None = _field(None, "Peak learning rate (docs/finetuning.md).", "> 0")
    layerwise_lr_decay: float | None = _field(None, "Each layer down gets this factor of the rate above it.",
                                              "in (0, 1]")
    original_top_layer_decay: bool = _field(False, "Reproduce the original code's top-layer decay quirk.")
    weight_decay_rate: float = _field(0.01, "AdamW weight decay.")
    adam_epsilon: float = _field(1e-6, "Adam epsilon.", "> 0")
    warmup_proportion: float = _field(0.1, "Share of the steps spent warming up.", "in [0, 1)")
    epochs: float | None = _field(None, "Training epochs.", "> 0")
    max_seq_length: int | None = _field(None, "Tokens per example.")
    batch_size: int = _field(32, "Training batch size.", ">= 1")
    predict_batch_size: int = _field(64, "Evaluation and prediction batch size.", ">= 1")
    pad_to_max_length: bool = _field(False, "Pad every batch to max_seq_length (default: length-aware, to its "
                                            "longest).")
    double_unordered: bool = _field(True, "Train MRPC and STS-B on both sentence orders.")
    seed: int = _field(0, "Seed of the first trial (trial i uses seed + i).")
    max_query_length: int = _field(64, "Question answering: question tokens kept.", ">= 1")
    doc_stride: int = _field(128, "Question answering: tokens between window starts.", ">= 1")
    n_best_size: int = _field(20, "Question answering: best starts and ends considered.", ">= 1")
    max_answer_length: int = _field(30, "Question answering: longest answer, in tokens.", ">= 1")
    beam_size: int = _field(20, "Question answering: start candidates of the original head.", ">= 1")
    answerable_classifier: bool = _field(True, "SQuAD 2.0: the original head's answerable classifier.")
    answerable_weight: float = _field(0.5, "SQuAD 2.0: weight of the answerable classifier's loss.")
    qa_na_threshold: float = _field(-2.75, "SQuAD 2.0: no answer above these null odds.")

    @classmethod
    def for_task(cls, task: str, model_size: str | None = None, **overrides) -> "FinetuningConfig":
        """The paper's defaults for `task` and `model_size` (without it, the model's width sets them when trained),
        then `overrides` (`None` values are ignored)."""
        _check(model_size in (None, *PAPER_SHAPES), cls.__name__, "model_size",
               f"{model_size!r} is not one of small, base, large")
        values = {"task": task}
        if model_size is not None:
            values["learning_rate"] = default_learning_rate(PAPER_SHAPES[model_size][0])
            values["layerwise_lr_decay"] = default_layerwise_decay(PAPER_SHAPES[model_size][0])
        return cls.from_dict({**values, **{k: v for k, v in overrides.items() if v is not None}})

    def __post_init__(self):
        self._check_fields()
        _check(self.max_seq_length is None or self.max_seq_length >= 8, type(self).__name__, "max_seq_length",
               "must be >= 8")


# The paper's model sizes (width, layers); its fine-tuning learning rates by width (Clark et al., 2020, Table 7).
PAPER_SHAPES = {"small": (256, 12), "base": (768, 12), "large": (1024, 24)}
PAPER_LEARNING_RATES = {256: 3e-4, 768: 1e-4, 1024: 5e-5}


def size_name(config: ElectraConfig) -> str:
    """The paper's name of the size of a model of `config` (small, base, large), or "custom".

    >>> size_name(ElectraConfig(hidden_size=768, num_layers=12)), size_name(ElectraConfig(hidden_size=32))
    ('base', 'custom')
    """
    return {shape: name for name, shape in PAPER_SHAPES.items()}.get((config.hidden_size, config.num_layers), "custom")


def default_layerwise_decay(hidden_size: int) -> float:
    """The fine-tuning layer-wise learning-rate decay for a model `hidden_size` wide: 0.8, 0.9 from Large up.

    >>> default_layerwise_decay(256), default_layerwise_decay(1024)
    (0.8, 0.9)
    """
    return 0.9 if hidden_size >= PAPER_SHAPES["large"][0] else 0.8


def default_learning_rate(hidden_size: int) -> float:
    """The fine-tuning learning rate for a model `hidden_size` wide: the paper's per-size rates, joined on
    log(width) against log(rate) (docs/finetuning.md).

    >>> [default_learning_rate(width) for width in (256, 768, 1024)]
    [0.0003, 0.0001, 5e-05]
    >>> default_learning_rate(64), default_learning_rate(512), default_learning_rate(896)
    (0.0012, 0.00015, 6.9e-05)
    """
    widths = sorted(PAPER_LEARNING_RATES)
    if hidden_size >= widths[-1]:
        return PAPER_LEARNING_RATES[widths[-1]]
    if hidden_size in PAPER_LEARNING_RATES:
        return PAPER_LEARNING_RATES[hidden_size]
    low, high = (widths[0], widths[1]) if hidden_size < widths[1] else (widths[1], widths[2])
    slope = math.log(PAPER_LEARNING_RATES[high] / PAPER_LEARNING_RATES[low]) / math.log(high / low)
    rate = min(3e-3, PAPER_LEARNING_RATES[low] * (hidden_size / low) ** slope)
    return float(f"{rate:.2g}")  # two significant digits, as the paper states its rates


def generator_config(model: ElectraConfig, pretraining: PretrainingConfig) -> ElectraConfig:
    """The generator's config, as the original `get_generator_config` derives it (heads `max(1, width // 64)`), or the
    model's own for the variants that need a full-size generator.

    Example:
    >>> generator_config(ElectraConfig(), PretrainingConfig()).hidden_size
    64
    """
    if variant_rules.full_size_generator(pretraining):
        return model
    width = int(round(model.hidden_size * pretraining.generator_hidden_size))
    layers = int(round(model.num_layers * pretraining.generator_layers))
    _check(width >= 1, "PretrainingConfig", "generator_hidden_size",
           f"gives a generator of width {width} for hidden_size={model.hidden_size}")
    _check(layers >= 1, "PretrainingConfig", "generator_layers",
           f"gives a generator of {layers} layers for num_layers={model.num_layers}")
    heads = max(1, width // 64)
    _check(width % heads == 0, "PretrainingConfig", "generator_hidden_size",
           f"gives a generator width {width} not divisible by its {heads} heads")
    return model.replace(hidden_size=width, num_layers=layers, num_heads=heads,
                         intermediate_size=4 * width)


def _resolve_config_path(path_or_name: str) -> str:
    """A JSON path, or the name of a config shipped in `configs/`."""
    if os.path.exists(path_or_name):
        return path_or_name
    name = path_or_name if path_or_name.endswith(".json") else path_or_name + ".json"
    shipped = importlib.resources.files("electra_tf.configs").joinpath(name)
    if shipped.is_file():
        return str(shipped)
    raise FileNotFoundError(f"no config file {path_or_name!r} (not a path, nor a shipped config in configs/)")


def load_run_config(path_or_name: str) -> tuple[ElectraConfig, PretrainingConfig]:
    """Reads `{"model": {...}, "pretraining": {...}}` from a path or a shipped name (a run's file may also record
    its vocabulary: `run_config_vocabulary`)."""
    path = _resolve_config_path(path_or_name)
    values = _run_config_values(path)
    try:
        return (ElectraConfig.from_dict(values.get("model", {})),
                PretrainingConfig.from_dict(values.get("pretraining", {})))
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


def run_config_vocabulary(path: str) -> str | None:
    """The sha256 of the vocabulary the run config file `path` records (None in a file from before they did).

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "run_config.json")
    >>> save_run_config(path, ElectraConfig(), PretrainingConfig(), vocabulary_sha256="3f2a")
    >>> run_config_vocabulary(path), load_run_config(path)[0].hidden_size
    ('3f2a', 256)
    """
    return _run_config_values(path).get("vocabulary", {}).get("sha256")


def _run_config_values(path):
    values = read_json(path)
    if (not isinstance(values, dict) or set(values) - {"model", "pretraining", "vocabulary", VERSION_FIELD}
            or not isinstance(values.get("vocabulary", {}), dict)):
        raise ValueError(f"{path}: expected an object with keys 'model' and 'pretraining'")
    return values


def save_run_config(path: str, model: ElectraConfig, pretraining: PretrainingConfig,
                    vocabulary_sha256: str | None = None) -> None:
    """Writes both configs as one JSON file, atomically, with the vocabulary's sha256 and the electra_tf version."""
    values = {"model": model.to_dict(), "pretraining": pretraining.to_dict(), VERSION_FIELD: __version__}
    if vocabulary_sha256:
        values["vocabulary"] = {"sha256": vocabulary_sha256}
    write_text(path, json.dumps(values, indent=2) + "\n")
