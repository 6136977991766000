"""The weight-name table: our variables ↔ Hugging Face state-dict keys ↔ Google TF1 names, read both ways.

Each row is `(ours, huggingface, google, layout)`; `layout` says how one array becomes the other (`table` the
same everywhere; `vector` ours `[heads, head_size]` ↔ `[H]`; `kernel` ours `[in, ...out]` ↔ Google `[in, out]` ↔
HF `[out, in]`; `heads_kernel` ours `[heads, head_size, H]` ↔ Google `[H_in, H]` ↔ HF `[H, H_in]`). The Hugging
Face state dict is the form every other format converts to and from.

Example:
>>> from electra_tf import ElectraConfig, ElectraDiscriminator
>>> config = ElectraConfig(vocab_size=30, embedding_size=8, hidden_size=16, num_layers=1,
...                        num_heads=2, intermediate_size=32)
>>> entries = model_entries(ElectraDiscriminator(config))
>>> [(e.hf, e.hf_shape) for e in entries if "query" in e.hf]
[('electra.encoder.layer.0.attention.self.query.weight', (16, 16)),
 ('electra.encoder.layer.0.attention.self.query.bias', (16,))]
>>> [e.google for e in entries][-2:]
['discriminator_predictions/dense_1/kernel', 'discriminator_predictions/dense_1/bias']
"""

import dataclasses
import math

import numpy as np

TABLE, VECTOR, KERNEL, HEADS_KERNEL = "table", "vector", "kernel", "heads_kernel"
ENCODER_PREFIX = "electra."

_EMBEDDINGS = (
    ("embeddings/word_embeddings/embeddings", "embeddings.word_embeddings.weight", "embeddings/word_embeddings", TABLE),
    ("embeddings/position_embeddings/embeddings", "embeddings.position_embeddings.weight",
     "embeddings/position_embeddings", TABLE),
    ("embeddings/token_type_embeddings/embeddings", "embeddings.token_type_embeddings.weight",
     "embeddings/token_type_embeddings", TABLE),
    ("embeddings/layer_norm/gamma", "embeddings.LayerNorm.weight", "embeddings/LayerNorm/gamma", TABLE),
    ("embeddings/layer_norm/beta", "embeddings.LayerNorm.bias", "embeddings/LayerNorm/beta", TABLE),
)
_PROJECTION = (
    ("embeddings_project/kernel", "embeddings_project.weight", "embeddings_project/kernel", KERNEL),
    ("embeddings_project/bias", "embeddings_project.bias", "embeddings_project/bias", TABLE),
)
_LAYER = tuple(
    (f"transformer_layer_{{i}}/{ours}", f"encoder.layer.{{i}}.{hf}", f"encoder/layer_{{i}}/{google}", layout)
    for ours, hf, google, layout in (
        ("self_attention_layer/query/kernel", "attention.self.query.weight", "attention/self/query/kernel", KERNEL),
        ("self_attention_layer/query/bias", "attention.self.query.bias", "attention/self/query/bias", VECTOR),
        ("self_attention_layer/key/kernel", "attention.self.key.weight", "attention/self/key/kernel", KERNEL),
        ("self_attention_layer/key/bias", "attention.self.key.bias", "attention/self/key/bias", VECTOR),
        ("self_attention_layer/value/kernel", "attention.self.value.weight", "attention/self/value/kernel", KERNEL),
        ("self_attention_layer/value/bias", "attention.self.value.bias", "attention/self/value/bias", VECTOR),
        ("self_attention_layer/attention_output/kernel", "attention.output.dense.weight",
         "attention/output/dense/kernel", HEADS_KERNEL),
        ("self_attention_layer/attention_output/bias", "attention.output.dense.bias",
         "attention/output/dense/bias", TABLE),
        ("self_attention_layer_norm/gamma", "attention.output.LayerNorm.weight", "attention/output/LayerNorm/gamma",
         TABLE),
        ("self_attention_layer_norm/beta", "attention.output.LayerNorm.bias", "attention/output/LayerNorm/beta", TABLE),
        ("feedforward_intermediate_dense/kernel", "intermediate.dense.weight", "intermediate/dense/kernel", KERNEL),
        ("feedforward_intermediate_dense/bias", "intermediate.dense.bias", "intermediate/dense/bias", TABLE),
        ("feedforward_output_dense/kernel", "output.dense.weight", "output/dense/kernel", KERNEL),
        ("feedforward_output_dense/bias", "output.dense.bias", "output/dense/bias", TABLE),
        ("feedforward_layer_norm/gamma", "output.LayerNorm.weight", "output/LayerNorm/gamma", TABLE),
        ("feedforward_layer_norm/beta", "output.LayerNorm.bias", "output/LayerNorm/beta", TABLE),
    ))
ENCODER_ROWS = _EMBEDDINGS + _PROJECTION + _LAYER


def _dense(ours, hf, google=None):
    return ((f"{ours}/kernel", f"{hf}.weight", google and f"{google}/kernel", KERNEL),
            (f"{ours}/bias", f"{hf}.bias", google and f"{google}/bias", TABLE))


# Heads, by the Hugging Face class that holds them (our heads named after theirs).
HEAD_ROWS = {
    "ElectraModel": (),
    "ElectraForPreTraining": (
        _dense("discriminator_predictions/dense", "discriminator_predictions.dense", "discriminator_predictions/dense")
        + _dense("discriminator_predictions/dense_prediction", "discriminator_predictions.dense_prediction",
                 "discriminator_predictions/dense_1")),
    "ElectraForMaskedLM": (
        _dense("generator_predictions/intermediate_dense", "generator_predictions.dense", "generator_predictions/dense")
        + (("generator_predictions/intermediate_layer_norm/gamma", "generator_predictions.LayerNorm.weight",
            "generator_predictions/LayerNorm/gamma", TABLE),
           ("generator_predictions/intermediate_layer_norm/beta", "generator_predictions.LayerNorm.bias",
            "generator_predictions/LayerNorm/beta", TABLE),
           # The output projection is the (tied) word embedding table; only its bias is a weight.
           ("generator_predictions/output_bias", "generator_lm_head.bias", "generator_predictions/output_bias",
            TABLE))),
    "ElectraForSequenceClassification": (_dense("dense", "classifier.dense")
                                         + _dense("out_proj", "classifier.out_proj")),
    "ElectraForTokenClassification": _dense("classifier", "classifier"),
    "ElectraForQuestionAnswering": _dense("qa_outputs", "qa_outputs"),
    "ElectraForMultipleChoice": _dense("summary", "sequence_summary.summary") + _dense("classifier", "classifier"),
}

# Pre-training heads (key prefixes, by source class) a model started from the checkpoint drops, as `transformers`
# does; task heads are never dropped silently.
PRETRAINING_HEADS = {
    "ElectraForPreTraining": ("discriminator_predictions.",),
    "ElectraForMaskedLM": ("generator_predictions.", "generator_lm_head."),
    "BertModel": ("pooler.",),
    "BertForPreTraining": ("pooler.", "cls."),
    "BertForMaskedLM": ("pooler.", "cls."),
}


@dataclasses.dataclass(frozen=True)
class Entry:
    """One of a model's variables and its names in the other two formats."""

    variable: object  # a keras.Variable
    ours: str
    hf: str
    google: str | None
    layout: str
    part: str  # "encoder" or "head"

    @property
    def shape(self):
        return tuple(self.variable.shape)

    @property
    def hf_shape(self):
        return hf_shape(self.shape, self.layout)


def hf_shape(shape, layout):
    """The Hugging Face shape of an array of ours of `shape`."""
    if layout == TABLE:
        return tuple(shape)
    if layout == VECTOR:
        return (math.prod(shape),)
    inputs = 2 if layout == HEADS_KERNEL else 1
    return (math.prod(shape[inputs:]), math.prod(shape[:inputs]))


def to_hf(array, layout):
    """Ours → Hugging Face layout."""
    array = np.asarray(array)
    if layout == TABLE:
        return array
    if layout == VECTOR:
        return array.reshape(-1)
    inputs = 2 if layout == HEADS_KERNEL else 1
    return array.reshape(math.prod(array.shape[:inputs]), -1).T


def from_hf(array, layout, shape):
    """Hugging Face layout → ours, of our variable's `shape`."""
    array = np.asarray(array)
    return (array.T if layout in (KERNEL, HEADS_KERNEL) else array).reshape(shape)


def hf_to_google(array, layout):
    """Hugging Face → Google layout (kernels are `[in, out]` there); the inverse is the same."""
    return np.asarray(array).T if layout in (KERNEL, HEADS_KERNEL) else np.asarray(array)


def backbone_of(model):
    """The `ElectraModel` of one of our models: `model.backbone`, or the model itself (an encoder has no `backbone`
    pointing to itself: Keras's saving would walk it forever)."""
    return getattr(model, "backbone", model)


def encoder_rows(config):
    """The rows of an encoder of `config` (`(ours, hf without prefix, google, layout)`), layers numbered."""
    rows = _EMBEDDINGS + (_PROJECTION if config.embedding_size != config.hidden_size else ())
    return rows + tuple((o.format(i=i), h.format(i=i), g.format(i=i), layout)
                        for i in range(config.num_layers) for o, h, g, layout in _LAYER)


def model_entries(model):
    """Every variable of `model` (one of ours, declaring `hf_architecture`) with its names, encoder first; heads with no
    Hugging Face equivalent (the original heads) left out."""
    encoder = backbone_of(model)
    by_path = {v.path: v for v in encoder.weights}
    entries = []
    for ours, hf, google, layout in encoder_rows(encoder.config):
        if ours not in by_path:
            raise KeyError(f"internal: the mapping names {ours!r}, which the encoder does not have")
        entries.append(Entry(by_path[ours], ours, ENCODER_PREFIX + hf, google, layout, "encoder"))
    architecture = model.hf_architecture
    if architecture is not None and model is not encoder:
        encoder_ids = {id(v) for v in encoder.weights}
        heads = {v.path: v for v in model.weights if id(v) not in encoder_ids}
        for ours, hf, google, layout in HEAD_ROWS[architecture]:
            if ours not in heads:
                raise KeyError(f"internal: the mapping names {ours!r}, which {type(model).__name__} does not have")
            entries.append(Entry(heads[ours], ours, hf, google, layout, "head"))
    return entries


def model_state(model, strict=True):
    """The Hugging Face state dict of one of our models (float32); a ValueError for weights Hugging Face has no name for
    (an original head) unless not `strict`, which leaves them out."""
    entries = model_entries(model)
    covered = {id(entry.variable) for entry in entries}
    leftover = [v.path for v in model.weights if id(v) not in covered]
    if leftover and strict:
        raise ValueError(f"{type(model).__name__} has weights with no Hugging Face equivalent: {leftover[:6]} "
                         "(the original ELECTRA heads; build the model with head='huggingface' to export it)")
    return {entry.hf: to_hf(entry.variable.numpy(), entry.layout).astype(np.float32)
            for entry in entries}
