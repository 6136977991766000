"""Which export serves fastest on this CPU, in one line (`electra-export` prints it after every export): it depends
on the CPU's int8 dot-product instructions (docs/serving.md, "Benchmark").

Example:
>>> fastest_exports({"avx2", "avx512f", "avx512_vnni", "avx512_bf16"})  # doctest: +ELLIPSIS
'fastest on this CPU (avx512_vnni, avx512_bf16): --format=litert --precision=int8 on all cores ...'
>>> fastest_exports({"avx2", "fma"})  # doctest: +ELLIPSIS
'fastest on this CPU (no VNNI/AMX): --format=onnx --precision=int8 in ONNX Runtime; in TF Serving, --compile ...'
>>> fastest_exports({"avx2", "fma"}, done="--format=onnx --precision=int8")  # doctest: +ELLIPSIS
'fastest on this CPU (no VNNI/AMX): this export (--format=onnx --precision=int8) in ONNX Runtime; in TF ...'
"""

from electra_tf.export import precision

INT8_DOT_PRODUCT = ("avx512_vnni", "avx_vnni", "amx_int8")
BF16 = precision.CPU_FLAGS["bf16"]


def export_flags(format="saved_model", precision="fp32", compile=False):  # noqa: A002 -- electra-export's flags
    """The `electra-export` flags that make an export of this kind (empty for the default one).

    >>> export_flags("onnx", "int8"), export_flags(compile=True), export_flags()
    ('--format=onnx --precision=int8', '--compile', '')
    """
    return " ".join(flag for flag, wanted in ((f"--format={format}", format != "saved_model"),
                                              (f"--precision={precision}", precision != "fp32"),
                                              ("--compile", compile)) if wanted)


def fastest_exports(flags=None, done=None):
    """The one-line advice for the CPU with `flags` (default: this one's, `precision.cpu_flags()`); `done`: the
    flags of the export just written (`export_flags`), named "this export" where the advice would name it."""
    flags = precision.cpu_flags() if flags is None else set(flags)
    int8 = [flag for flag in INT8_DOT_PRODUCT if flag in flags]
    bf16 = [flag for flag in BF16 if flag in flags]

    def path(export):
        return f"this export ({export})" if export == done else export

    if not int8:
        return (f"fastest on this CPU (no VNNI/AMX): {path('--format=onnx --precision=int8')} in ONNX Runtime; in TF "
                f"Serving, {path('--compile')} ({path('--format=litert --precision=int8')} for single requests only)")
    batches = f"{path('--precision=bf16')} for batches" if bf16 else "also for batches"
    return (f"fastest on this CPU ({', '.join(int8 + bf16)}): {path('--format=litert --precision=int8')} on all "
            f"cores (num_threads=os.cpu_count()), or {path('--format=onnx --precision=int8')} in ONNX Runtime; in "
            f"TF Serving, {path('--compile')} ({batches})")
