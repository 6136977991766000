"""Low-precision copies of a model for CPU inference: bfloat16 weights and compute (refused on a CPU that would
emulate it), or Keras's int8 quantization (docs/serving.md, "Low precision").

Example:
>>> check_cpu("bf16", flags={"avx512f"})
Traceback (most recent call last):
...
ValueError: --precision=bf16 needs a CPU with avx512_bf16 or amx_bf16 (this one has neither): export at --precision=fp32
>>> check_cpu("bf16", flags={"avx512_bf16"}), check_cpu("int8", flags=set())
(None, None)
"""

import warnings

import keras

PRECISIONS = ("fp32", "bf16", "int8")
# Any one of these /proc/cpuinfo flags runs the precision natively.
CPU_FLAGS = {"bf16": ("avx512_bf16", "amx_bf16")}


def cpu_flags(path="/proc/cpuinfo"):
    """The instruction-set flags of the first CPU in `path` (empty where there is no such file, e.g. macOS)."""
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def check_cpu(precision, flags=None):
    """Refuses `precision` (a ValueError) when the CPU (`flags`, default `cpu_flags()`) cannot run it natively."""
    if precision not in PRECISIONS:
        raise ValueError(f"--precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    needed = CPU_FLAGS.get(precision, ())
    flags = cpu_flags() if flags is None else flags
    if needed and not set(needed) & set(flags):
        raise ValueError(f"--precision={precision} needs a CPU with {' or '.join(needed)} (this one has neither): "
                         f"export at --precision=fp32")


def at_precision(model, precision):
    """`model` itself at fp32, else a copy at `precision`.

    >>> from electra_tf import ElectraConfig, ElectraForSequenceClassification
    >>> config = ElectraConfig(vocab_size=16, embedding_size=8, hidden_size=8, num_layers=1, num_heads=1,
    ...                        intermediate_size=8)
    >>> model = ElectraForSequenceClassification(config)
    >>> at_precision(model, "bf16").dtype_policy.name, at_precision(model, "int8").dtype_policy.name
    ('bfloat16', 'float32')
    """
    if precision == "fp32":
        return model
    policy = keras.config.dtype_policy()
    keras.config.set_dtype_policy("bfloat16" if precision == "bf16" else "float32")
    # The copy shares the model's preprocessor: a tokenizer's vocabulary is an asset, which a config does not hold.
    config = {**model.get_config(), "preprocessor": None}
    try:
        copy = type(model).from_config(config)
        if getattr(model, "preprocessor", None) is not None:
            copy.preprocessor = model.preprocessor
    finally:
        keras.config.set_dtype_policy(policy)
    copy.set_weights(model.get_weights())  # cast to the copy's variable dtype
    copy.label_names = getattr(model, "label_names", None)
    if precision == "int8":
        with warnings.catch_warnings():  # one per layer without int8 kernels (norms, dropout, ...): by design
            warnings.filterwarnings("ignore", "Layer .* does not have a `quantize` method")
            # Built layers only: a preprocessor's tokenizer is never built (it holds no weights), and Keras
            # refuses to quantize an unbuilt layer.
            copy.quantize("int8", filters=lambda layer: layer.built)
    return copy
