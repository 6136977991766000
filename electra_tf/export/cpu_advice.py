"""Which export serves fastest on this CPU, in one line: `electra-export` prints it after every export.

The fastest path depends on the CPU's int8 dot-product instructions (VNNI or AMX), as measured by
`benchmarks/serving.py` side by side with ONNX Runtime and OpenVINO on two kinds of 2-core CPU
(docs/serving.md, "Which path for your CPU", has the tables and the command):

- with VNNI/AMX, the LiteRT int8 export (ids in) is the fastest TensorFlow path in every cell, as fast as ONNX
  Runtime's int8 or faster; in TF Serving (raw text in), bfloat16 where the CPU has it, else the compiled export;
- without (AVX2 only), LiteRT int8 wins single requests but loses at batch 32, where ONNX Runtime int8 (our
  `--format=onnx --precision=int8`) is fastest and the compiled export is TensorFlow's best.

Example:
>>> fastest_exports({"avx2", "avx512f", "avx512_vnni", "avx512_bf16"})
'fastest on this CPU (avx512_vnni, avx512_bf16): --format=litert --precision=int8 (ids in); in TF Serving, --precision=bf16'
>>> fastest_exports({"avx2", "fma"})  # doctest: +ELLIPSIS
'fastest on this CPU (no VNNI/AMX): --format=onnx --precision=int8 in ONNX Runtime; ...'
"""

from electra_tf.export import precision

INT8_DOT_PRODUCT = ("avx512_vnni", "avx_vnni", "amx_int8")
BF16 = precision.CPU_FLAGS["bf16"]


def fastest_exports(flags=None):
    """The one-line advice for the CPU with `flags` (default: this one's, `precision.cpu_flags()`)."""
    flags = precision.cpu_flags() if flags is None else set(flags)
    int8 = [flag for flag in INT8_DOT_PRODUCT if flag in flags]
    bf16 = [flag for flag in BF16 if flag in flags]
    if not int8:
        return ("fastest on this CPU (no VNNI/AMX): --format=onnx --precision=int8 in ONNX Runtime; in TF Serving, "
                "--compile (--format=litert --precision=int8 for single requests only)")
    serving = "--precision=bf16" if bf16 else "--compile"
    return (f"fastest on this CPU ({', '.join(int8 + bf16)}): --format=litert --precision=int8 (ids in); "
            f"in TF Serving, {serving}")
