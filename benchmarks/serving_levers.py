"""The serving levers, each an A/B on one classifier (ELECTRA-Small by default; random weights, non-zero biases as
a trained model's), p50 ms per request at batch 1 and 32 × 8, 32 and 128 tokens, the variants taking turns:

    python benchmarks/serving_levers.py [--levers=biases,onednn,threads,compiled_threads,xla_flags,litert,\\
        openvino_tf,where,matmuls] [--seconds=2] [--rounds=2] [--peer_python=/path/to/venv/bin/python]

- `biases` (one process): the stock export of the model with all-zero biases (a random init) against the
  same model with non-zero ones. Grappler folds an add of zeros away, and with it the `MatMul + BiasAdd (+ GELU)`
  patterns its remapper fuses, so a random-init model does not time what a trained one runs.
- `onednn` (processes taking turns): the stock export with TensorFlow's oneDNN ops (the default on x86) and
  without (`TF_ENABLE_ONEDNN_OPTS=0`): what the serving process's environment chooses.
- `threads` (processes taking turns): the stock export with TensorFlow's default intra-op pool (one thread per
  core) and with one thread per op (TF Serving's `--tensorflow_intra_op_parallelism=1`); `compiled_threads`:
  the same for the compiled export.
- `xla_flags` (processes taking turns): the compiled export (`compile=True`) under XLA's CPU flags: none,
  oneDNN matmuls (`--xla_cpu_use_onednn`), XNNPACK (`--xla_cpu_use_xnnpack`), fast math, and YNNPACK's dot
  kernels (`--xla_cpu_experimental_ynn_fusion_type=dot`, which XLA 2.21 does apply: its HLO then has
  `__ynn_fusion`s), and glibc's transparent huge pages for large allocations
  (`GLIBC_TUNABLES=glibc.malloc.hugetlb=1`, the weights' pages).
- `where` (one process): where a raw-text call's time goes: the stock and the compiled export's
  `serving_default` (raw text) and `serve_ids` (the same request's ids: the model alone), a SavedModel whose
  signature only returns its batch size (the cost of a signature call), and the model's projection matmuls
  alone under XLA (`matmuls_xla`, below).
- `matmuls` (processes taking turns; ONNX Runtime in --peer_python): the model's 48 projection matmuls alone
  (per layer: q/k/v as one `[H, 3H]` kernel, the attention output `[H, H]`, the feed-forward `[H, I]` and
  `[I, H]`; the kernels are the model's, constants of the graph), on the request's `[batch·tokens, H]` rows,
  under XLA and in ONNX Runtime (MLAS, whose kernels are packed once, when the session loads): how much of
  the gap to ONNX Runtime is the matmul kernels.
- `litert` (one process): LiteRT int8 as exported (dynamic range: int8 weights, float activations) on the
  Python interpreter's default one thread and on all cores, and full int8 (int8 activations too, calibrated on
  corpus texts; XNNPACK's QS8 kernels) on all cores, on the same ids.
- `openvino_tf` (one worker of --peer_python): OpenVINO reading our SavedModel's `serve_ids` (its TensorFlow
  front end) against OpenVINO reading our ONNX export, on the same ids.

Raw text in for the SavedModels (`serving_default`, tokenization in the graph); token ids in for LiteRT and
OpenVINO (the same ids for both variants). Benchmark alone: a second busy process ruins multi-threaded timings.
"""

import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serving import (benchmark_classifier, cpu_description, latencies, texts_of_length,  # noqa: E402
                     trained_like_biases)

FLAGS = flags.FLAGS
LEVERS = ("biases", "onednn", "threads", "compiled_threads", "xla_flags", "litert", "openvino_tf", "where",
          "matmuls")
flags.DEFINE_list("levers", list(LEVERS), "The A/Bs to run.")
flags.register_validator("levers", lambda names: set(names) <= set(LEVERS), f"--levers are some of {', '.join(LEVERS)}")
flags.DEFINE_integer("rounds", 2, "Rounds of the levers whose variants run in processes of their own.")
flags.DEFINE_string("worker", None, "(internal) Run one worker from this JSON spec and print its times.")
# serving.py's flags apply: --config, --vocab (--vocab_size), --max_seq_length, --batch_sizes, --lengths, --json,
# --seconds (here per variant, cell and round) and --peer_python (a venv with openvino and absl-py, for openvino_tf).
FLAGS.set_default("seconds", 2.0)

XLA_FLAG_VARIANTS = {"XLA defaults": "", "oneDNN matmuls": "--xla_cpu_use_onednn=true",
                     "XNNPACK": "--xla_cpu_use_xnnpack=true", "fast math": "--xla_cpu_enable_fast_math=true",
                     "YNNPACK dots": "--xla_cpu_experimental_ynn_fusion_type=dot"}
HUGE_PAGES = {"GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"}


def _saved_model_call(path):
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (the export's tokenizer ops)

    signature = tf.saved_model.load(path).signatures["serving_default"]
    return lambda cell: signature(text=tf.constant(cell["texts"]))


def _ids_call(path):
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (the export's tokenizer ops, loaded with it)

    signature = tf.saved_model.load(path).signatures["serve_ids"]
    return lambda cell: signature(**{name: tf.constant(value, tf.int32) for name, value in cell["ids"].items()})


def _rows(cell, hidden):
    """The request's `[batch·tokens, hidden]` rows (as its ids are padded), for the matmuls alone."""
    ids = np.asarray(cell["ids"]["input_ids"])
    return np.random.default_rng(0).normal(size=[ids.size, hidden]).astype(np.float32)


def _layers(path):
    """The projection kernels of `matmul_kernels`'s file, four per layer."""
    with np.load(path) as kernels:
        return [[kernels[f"{i}_{j}"] for j in range(4)] for i in range(len(kernels.files) // 4)]


def _xla_matmuls_call(path):
    import tensorflow as tf

    layers = _layers(path)

    @tf.function(jit_compile=True)
    def matmuls(rows):
        hidden = rows.shape[-1]
        for qkv, attention_output, intermediate, output in layers:  # constants of the graph, as in an export
            rows = tf.matmul(tf.matmul(rows, tf.constant(qkv))[:, :hidden], tf.constant(attention_output))
            rows = tf.matmul(tf.matmul(rows, tf.constant(intermediate)), tf.constant(output))
        return rows

    inputs = {}
    return lambda cell: matmuls(inputs.setdefault(id(cell), tf.constant(_rows(cell, layers[0][0].shape[0]))))


def _ort_matmuls_call(path):
    import onnxruntime
    from onnx import TensorProto, helper, numpy_helper

    layers = _layers(path)
    hidden = layers[0][0].shape[0]
    row_type = helper.make_tensor_value_info  # a [rows, hidden] float32 graph input or output
    weights = [numpy_helper.from_array(np.array([value], np.int64), name)
               for name, value in (("start", 0), ("end", hidden), ("axis", 1))]
    nodes, rows = [], "rows"
    for i, layer in enumerate(layers):
        for j, kernel in enumerate(layer):
            weights.append(numpy_helper.from_array(kernel, f"w{i}_{j}"))
            nodes.append(helper.make_node("MatMul", [rows, f"w{i}_{j}"], [f"y{i}_{j}"]))
            rows = f"y{i}_{j}"
            if j == 0:  # the q of q/k/v, as the XLA chain
                nodes.append(helper.make_node("Slice", [rows, "start", "end", "axis"], [f"q{i}"]))
                rows = f"q{i}"
    graph = helper.make_graph(nodes, "matmuls", [row_type("rows", TensorProto.FLOAT, ["n", hidden])],
                              [row_type(rows, TensorProto.FLOAT, ["n", hidden])], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    inputs = {}
    return lambda cell: session.run(None, {"rows": inputs.setdefault(id(cell), _rows(cell, hidden))})


def matmul_kernels(model, path):
    """Writes `model`'s projection kernels as 2-D matrices, four per layer (q/k/v as one `[H, 3H]`, as the
    exported graph runs them), to `path` (an .npz); returns it."""
    kernels = [w.numpy().reshape([-1, w.shape[-1]] if w.path.endswith("attention_output/kernel") else [w.shape[0], -1])
               for w in model.weights if "transformer_layer_" in w.path and w.path.endswith("kernel")]
    layers = [kernels[i:i + 6] for i in range(0, len(kernels), 6)]  # query, key, value, output, intermediate, output
    np.savez(path, **{f"{i}_{j}": kernel for i, (query, key, value, *rest) in enumerate(layers)
                      for j, kernel in enumerate([np.concatenate([query, key, value], axis=1), *rest])})
    return path


def empty_signature(path):
    """A SavedModel whose `serving_default` only returns the number of its texts: the cost of a signature call."""
    import tensorflow as tf

    module = tf.Module()
    module.serve = tf.function(lambda text: {"batch_size": tf.shape(text)[0]},
                               input_signature=[tf.TensorSpec([None], tf.string)])
    tf.saved_model.save(module, path, signatures={"serving_default": module.serve})
    return path


def _litert_call(path, threads=None):
    import tensorflow as tf

    runner = tf.lite.Interpreter(model_path=path, num_threads=threads or os.cpu_count()).get_signature_runner()
    return lambda cell: runner(**{name: np.asarray(value, np.int32) for name, value in cell["ids"].items()})


def _openvino_call(path):
    import openvino

    core = openvino.Core()
    compiled = core.compile_model(core.read_model(path) if path.endswith(".onnx") else openvino.convert_model(path),
                                  "CPU", {"PERFORMANCE_HINT": "LATENCY"})
    names = [port.any_name for port in compiled.inputs]
    return lambda cell: compiled({name: np.asarray(cell["ids"][name], np.int32) for name in names})


CALLS = {"saved_model": _saved_model_call, "saved_model_ids": _ids_call,
         "matmuls_xla": _xla_matmuls_call, "matmuls_ort": _ort_matmuls_call, "litert": _litert_call,
         "litert_1_thread": lambda path: _litert_call(path, threads=1), "openvino": _openvino_call}


def run_worker(spec_file):
    """Times the spec's variants on its cells (variants taking turns) and prints `{variant: {cell: [s, ...]}}`."""
    with open(spec_file, encoding="utf-8") as f:
        spec = json.load(f)
    calls = {name: CALLS[kind](path) for name, (kind, path) in spec["variants"].items()}
    times = {name: {} for name in calls}
    for key, cell in spec["cells"].items():
        measured = latencies({name: (lambda call=call, cell=cell: call(cell)) for name, call in calls.items()},
                             spec["seconds"])
        for name, values in measured.items():
            times[name][key] = values.tolist()
    print("TIMES " + json.dumps(times), flush=True)


def _worker_times(spec, work, env=None, python=None):
    path = os.path.join(work, "spec.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(spec, f)
    done = subprocess.run([python or sys.executable, os.path.abspath(__file__), f"--worker={path}"],
                          env={**os.environ, **(env or {})}, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"a worker of {sorted(spec['variants'])} failed:\n{done.stderr[-3000:]}")
    return json.loads(next(line for line in done.stdout.splitlines() if line.startswith("TIMES "))[6:])


def _pooled(results):
    pooled = {}
    for result in results:
        for name, cells in result.items():
            for key, values in cells.items():
                pooled.setdefault(name, {}).setdefault(key, []).extend(values)
    return pooled


def report(lever, times, rows):
    """Prints one lever's table: p50 ms per cell for each variant, and its ratio to the first (A: >1 is faster)."""
    names = list(times)
    cells = list(times[names[0]])
    print(f"\n{lever}: p50 ms (speed-up over '{names[0]}')")
    print(f"{'variant':<42}" + "".join(f"{key:>16}" for key in cells))
    for name in names:
        line = f"{name:<42}"
        for key in cells:
            p50 = 1e3 * np.median(times[name][key])
            base = 1e3 * np.median(times[names[0]][key])
            line += f"{p50:9.2f} ({base / p50:4.2f})"
            rows.append({"lever": lever, "variant": name, "cell": key, "p50_ms": p50, "speedup": base / p50})
        print(line, flush=True)


def main(argv):
    del argv
    if FLAGS.worker:
        return run_worker(FLAGS.worker)
    from electra_tf.tools.common import quiet_libraries

    quiet_libraries()
    import tensorflow as tf

    from electra_tf.text import featurize
    from electra_tf.util.atomic import write_json
    from electra_tf.export import export_model
    from electra_tf.export.litert import MODEL_FILE as LITERT_FILE
    from electra_tf.export.litert import convert as convert_litert
    from electra_tf.export.litert import export_litert
    from electra_tf.export.signatures import make_serving_task

    work = tempfile.mkdtemp(prefix="electra_levers_")
    rows = []
    try:
        lines, _, tokenizer, model = benchmark_classifier(work)
        length = FLAGS.max_seq_length
        encode = tf.function(lambda t: featurize.encode(tokenizer, length, t, pad_to_max_length=False))
        cells = {}
        for batch_size in map(int, FLAGS.batch_sizes):
            for tokens in map(int, FLAGS.lengths):
                texts = texts_of_length(lines, tokenizer, min(tokens, length), batch_size)
                ids = {name: value.numpy().tolist() for name, value in encode(tf.constant(texts)).items()}
                cells[f"{batch_size} x {tokens}"] = {"texts": texts, "ids": ids}
        print(f"CPU: {cpu_description()}; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}", flush=True)

        def export(name, **options):
            return export_model(model, tokenizer, work, model_name=name, max_seq_length=length, **options)

        def spec(variants):
            return {"variants": variants, "cells": cells, "seconds": FLAGS.seconds}

        def alternate(lever, variants, env_of, python_of=None):
            results = [_worker_times(spec({name: variants[name]}), work, env_of[name], (python_of or {}).get(name))
                       for _ in range(FLAGS.rounds) for name in variants]
            report(lever, _pooled(results), rows)

        zero_biases = ("saved_model", export("zero_biases"))
        trained_like_biases(model)
        stock = ("saved_model", export("stock"))

        def biases():
            report("biases", _worker_times(spec({"all biases zero (random init)": zero_biases,
                                                 "non-zero biases (as trained)": stock}), work), rows)

        def onednn():
            alternate("onednn", {"oneDNN ops (default)": stock, "no oneDNN (TF_ENABLE_ONEDNN_OPTS=0)": stock},
                      {"oneDNN ops (default)": {"TF_ENABLE_ONEDNN_OPTS": "1"},
                       "no oneDNN (TF_ENABLE_ONEDNN_OPTS=0)": {"TF_ENABLE_ONEDNN_OPTS": "0"}})

        compiled = functools.cache(lambda: export("compiled", compile=True))  # exported for the first lever using it

        def threads(lever, saved_model):
            alternate(lever, {"threads per op: default": saved_model, "threads per op: 1": saved_model},
                      {"threads per op: default": {}, "threads per op: 1": {"ELECTRA_LEVERS_INTRA_OP": "1"}})

        def xla_flags():
            variants = {**XLA_FLAG_VARIANTS, "huge pages": ""}
            alternate("xla_flags", dict.fromkeys(variants, ("saved_model", compiled())),
                      {name: {"XLA_FLAGS": value, **(HUGE_PAGES if name == "huge pages" else {})}
                       for name, value in variants.items()})

        def where():
            kernels = matmul_kernels(model, os.path.join(work, "kernels.npz"))
            report("where", _worker_times(spec({
                "compiled: serving_default (raw text)": ("saved_model", compiled()),
                "compiled: serve_ids (model alone)": ("saved_model_ids", compiled()),
                "stock: serving_default (raw text)": stock,
                "stock: serve_ids (model alone)": ("saved_model_ids", stock[1]),
                "a signature returning its batch size": ("saved_model", empty_signature(os.path.join(work, "empty"))),
                "projection matmuls alone (XLA)": ("matmuls_xla", kernels)}), work), rows)

        def matmuls():
            kernels = matmul_kernels(model, os.path.join(work, "kernels.npz"))
            alternate("matmuls", {"XLA (the compiled export's kernels)": ("matmuls_xla", kernels),
                                  "ONNX Runtime (MLAS)": ("matmuls_ort", kernels)},
                      {"XLA (the compiled export's kernels)": {}, "ONNX Runtime (MLAS)": {}},
                      {"ONNX Runtime (MLAS)": FLAGS.peer_python})

        def litert():
            dynamic = os.path.join(export_litert(model, tokenizer, work, model_name="litert",
                                                        max_seq_length=length, precision="int8"), LITERT_FILE)
            task = make_serving_task(model, tokenizer, length, None)
            calibration = [encode(tf.constant(lines[i:i + 8])) for i in range(0, 8 * 32, 8)]
            full = os.path.join(work, "full_int8.tflite")
            with open(full, "wb") as f:
                f.write(convert_litert(task, "int8", [{k: v.numpy() for k, v in ids.items()} for ids in calibration]))
            report("litert", _worker_times(spec({"LiteRT int8 dynamic range, 1 thread": ("litert_1_thread", dynamic),
                                                 "LiteRT int8 dynamic range, all cores": ("litert", dynamic),
                                                 "LiteRT int8 full (int8 act.), all cores": ("litert", full)}), work),
                   rows)

        def openvino_tf():
            from electra_tf.export.onnx import MODEL_FILE, export_onnx

            onnx = os.path.join(export_onnx(model, tokenizer, work, model_name="onnx", max_seq_length=length),
                                MODEL_FILE)
            # The export's `serve_ids` as its default signature: OpenVINO converts a SavedModel's default one (the
            # raw-text `serving_default` has tf-text ops it lacks).
            ids_model, loaded = os.path.join(work, "ids_saved_model"), tf.saved_model.load(stock[1])
            tf.saved_model.save(loaded, ids_model, signatures={"serving_default": loaded.signatures["serve_ids"]})
            report("openvino_tf", _worker_times(spec({"OpenVINO on our ONNX export": ("openvino", onnx),
                                                      "OpenVINO on our SavedModel (TF front end)":
                                                          ("openvino", ids_model)}),
                                                work, python=FLAGS.peer_python), rows)

        levers = {"biases": biases, "onednn": onednn, "threads": lambda: threads("threads", stock),
                  "compiled_threads": lambda: threads("compiled_threads", ("saved_model", compiled())),
                  "xla_flags": xla_flags, "litert": litert, "openvino_tf": openvino_tf, "where": where,
                  "matmuls": matmuls}
        for lever in FLAGS.levers:
            try:
                levers[lever]()
            except RuntimeError as error:  # a worker failed: the other levers still run
                print(f"\n{lever}: {error}", flush=True)
        if FLAGS.json:
            write_json(FLAGS.json, {"cpu": cpu_description(), "rows": rows})
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    if os.environ.get("ELECTRA_LEVERS_INTRA_OP"):  # before TensorFlow starts its pools
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(int(os.environ["ELECTRA_LEVERS_INTRA_OP"]))
    app.run(main)
