"""Which export serves fastest on this CPU, in one line: `electra-export` prints it after every export.

The fastest path depends on the CPU's int8 dot-product instructions (VNNI or AMX), as measured by
`benchmarks/serving.py` side by side with ONNX Runtime and OpenVINO on two kinds of 2-core AMD EPYC
(docs/serving.md, "Against ONNX Runtime and OpenVINO", has the tables and the command):

- with VNNI: LiteRT int8 (ids in, the interpreter on all cores) is the fastest path of all from 1 × 32 on
  (1.01–1.31× the best peer) and level with ONNX Runtime int8 at 1 × 8; in TF Serving (raw text in) the compiled
  export wins single requests and bfloat16 batches;
- without (AVX2 only; measured with LiteRT on one thread): ONNX Runtime int8 is fastest in every cell, and the
  compiled export is TF Serving's fastest.

Example:
>>> fastest_exports({"avx2", "avx512f", "avx512_vnni", "avx512_bf16"})  # doctest: +ELLIPSIS
'fastest on this CPU (avx512_vnni, avx512_bf16): --format=litert --precision=int8 on all cores ...'
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
    batches = "--precision=bf16 for batches" if bf16 else "also for batches"
    return (f"fastest on this CPU ({', '.join(int8 + bf16)}): --format=litert --precision=int8 on all cores "
            f"(num_threads=os.cpu_count()), or --format=onnx --precision=int8 in ONNX Runtime; in TF Serving, "
            f"--compile ({batches})")
