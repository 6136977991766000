"""Latency and throughput of an exported raw-text signature beside the in-process Keras model.

    python benchmarks/serving.py [--config=electra_small] [--max_seq_length=128] [--vocab=vocab.txt]

An ELECTRA-Small sequence classifier (random weights: speed does not depend on
them; but non-zero biases, as a trained model's: `trained_like_biases`) is
exported with `electra_tf.export.export_model` and reloaded as TF Serving would
run it (`tf.saved_model.load`, only TF and tf-text). On the same
texts (default-corpus sentences, cut to `max_seq_length` tokens) and at batch
sizes 1 and 32, it times:

1. export, `serving_default`: raw text in (tokenization in the graph);
2. export, `serve_ids`: the same texts' token ids in (the model alone);
3. in process: `tokenizer.encode` then Keras `predict_on_batch` (raw text in);
4. in process: `predict_on_batch` on the ids (the model alone);
5. the in-graph featurization alone (`tf.function` of what `serving_default` runs before the model).

Reports p50/p95 latency per call and throughput (texts/s), and tokenization's
share of the exported raw-text time: (1 - 2) / 1, and 5 / 1. Every path is timed
as it runs alone, in bursts of calls back to back inside the process that runs it
(`latencies`), the paths taking turns burst by burst, so a shared machine's
changing load hits them alike.

Then, against the peer, on texts of exactly --lengths tokens ([CLS] and [SEP]
included; default-corpus words) at each batch size, raw text in, probabilities out:

a. the export's `serving_default`, each request padded to its longest text;
b. the same model exported with `pad_to_max_length=True` (every request padded to
   `max_seq_length`, as exports were before), and with `constant_weights=False` (the weights read as
   variables at each call, as exports were before);
c. the same model exported with `compile=True` (the model call under XLA, over bucketed shapes);
c'. (`--low_precision`) the same model exported at `precision="bf16"` and `"int8"`, and as LiteRT fp32 and
   int8 (`tf.lite.Interpreter` on the ids of the in-graph featurization: tokenization included);
d. the Python path (`--python`): `model.predict` on the raw texts (a `TextPredictor`), and
   `electra_tf.pipeline("text-classification", ...)`, also with `compile=True`;
d'. (`--floor`) the encoder's projection matmuls alone on the request's padded shape, their kernels as graph
   constants, as a TF graph and under XLA: a lower bound for any fp32 TensorFlow export (tokenization,
   attention scores, norms left out);
e. transformers: `ElectraTokenizerFast` on the same vocabulary (padding to the
   longest, truncation) and `ElectraForSequenceClassification` under
   `torch.inference_mode`, in its own worker process (`peer_worker.py`; it times
   its own bursts of calls), `--peer=stub` for a NumPy stand-in (tests), `none` to skip;
f. the runtimes CPU deployments serve with (--runtimes): that transformers model exported to ONNX, in ONNX
   Runtime and OpenVINO, fp32 and int8, and our `--format=onnx` export in them (--runtimes_ours), each in
   its own worker process fed by the same fast tokenizer ("vs best": against the fastest peer of the cell);
   `orttext_*`: our export's `text_model.onnx` in ONNX Runtime, its own tokenizer inside, fed the raw texts.

And first (`--tokenizer`), the tokenizer alone on short corpus lines (cut to --max_chars characters):
ours before (`tokenize_by_rules`: BERT's rules as TF string ops, today the fallback) and now (`tokenize`:
tf-text's fused WordPiece), each eagerly, as a `tf.function` called from Python, and in-graph (the op time of
one batch inside a graph: --graph_repeats batches in one `tf.while_loop`, no Python call per batch, as a
serving graph runs it), against Hugging Face's Rust tokenizer (`tokenizers.BertWordPieceTokenizer`, the
core of transformers' `BertTokenizerFast`) and, where transformers is installed, `ElectraTokenizerFast`
itself, on the same `vocab.txt`; the ids are checked equal before timing.
"""

import os
import shutil
import tempfile
import time

import numpy as np
from absl import app, flags
from peer_worker import PeerProcess, burst

FLAGS = flags.FLAGS
flags.DEFINE_string("config", "electra_small", "A run config (name in configs/ or a JSON path) for the model size.")
flags.DEFINE_integer("max_seq_length", 128, "Sequence length of the export.")
flags.DEFINE_string("vocab", None, "vocab.txt (default: learned from the default corpus, --vocab_size tokens).")
flags.DEFINE_integer("vocab_size", 8000, "Vocabulary learned when --vocab is not given.")
flags.DEFINE_list("batch_sizes", ["1", "32"], "Batch sizes to time.")
flags.DEFINE_float("seconds", 8.0, "Timed seconds per path and batch size (after warm-up).")
flags.DEFINE_bool("breakdown", True, "Time the five paths above on corpus lines (export, ids, Keras in process).")
flags.DEFINE_list("lengths", ["8", "32", "128"], "Text lengths in tokens for the comparison with the peer.")
flags.DEFINE_enum("peer", "hf", ["hf", "stub", "none"], "hf: transformers + torch in a worker process; stub: a "
                  "NumPy stand-in over the same pipe (tests); none: no peer (ours only, both paddings).")
flags.DEFINE_string("json", None, "Also write the comparison with the peer to this JSON file.")
flags.DEFINE_float("peer_seconds", 3.0, "Timed seconds per path and cell of the comparison with the peer.")
flags.DEFINE_bool("tokenizer", True, "Time the tokenizer alone against Hugging Face's Rust tokenizer.")
flags.DEFINE_integer("max_chars", 60, "The tokenizer table's texts are cut to this many characters.")
flags.DEFINE_bool("compiled", True, "Add the XLA-compiled export (compile=True) to the comparison with the peer.")
flags.DEFINE_list("low_precision", [], "Add these exports to the "
                  "comparison with the peer: bf16, int8 (export_model(precision=...)), litert_fp32, litert_int8 "
                  "(model.tflite in tf.lite.Interpreter, on ids tokenized in a tf.function).")
flags.DEFINE_bool("floor", True, "Add the model's projection matmuls alone (TF graph and XLA): a lower bound for "
                  "any fp32 TensorFlow export at that shape.")
flags.DEFINE_bool("python", True, "Add model.predict and electra_tf.pipeline (raw text) to the comparison.")
flags.DEFINE_integer("threads", 0, "Threads per operation for ours (TensorFlow's intra-op pool, as TF Serving's "
                     "--tensorflow_intra_op_parallelism) and the peer (torch.set_num_threads); 0: each library's "
                     "default.")
flags.DEFINE_list("runtimes", ["ort_fp32", "ort_int8", "ortfused_int8", "openvino_fp32", "openvino_int8"],
                  "Peers besides torch eager: the transformers model exported to ONNX (as optimum exports it) in ONNX "
                  "Runtime (ort; ortfused: after ONNX Runtime's transformer fusions, as optimum's O2) or OpenVINO, "
                  "fp32 or int8 (ORT's dynamic quantization; OpenVINO: NNCF's int8 weights), each in its own worker "
                  "process.")
flags.DEFINE_list("runtimes_ours", ["ort_fp32", "ort_int8", "orttext_int8", "openvino_fp32"], "Our --format=onnx "
                  "export in the same runtimes (same worker and tokenizer as the peers; ortfused: after ONNX Runtime's "
                  "transformer fusions, as the peer's); orttext: its text_model.onnx "
                  "(tokenizer inside: raw text in, no tokenizer beside it) exported at that precision, in ONNX Runtime "
                  "with onnxruntime-extensions.")
flags.DEFINE_string("peer_python", None, "The Python of the peers' worker processes (a venv with torch, transformers, "
                    "onnxruntime, openvino, nncf); default: this one.")
flags.DEFINE_float("burst_seconds", 0.5, "Each path is timed in bursts of this many seconds of calls back to "
                   "back (as it runs alone), the paths taking turns burst by burst.")
flags.DEFINE_integer("graph_repeats", 100, "Batches per graph call of the tokenizer's in-graph rows.")


PEER = "transformers (tokenizer + model)"
PEERS = ("transformers", "peer:")  # the peers' row names start so; ours do not
RUNTIMES = {"ort": "onnxruntime", "ortfused": "onnxruntime", "orttext": "onnxruntime", "openvino": "openvino"}


def latencies(functions, seconds, peers=None):
    """Per-call seconds of each function, for about `seconds` each, timed as each runs alone.

    Each function runs in bursts (`peer_worker.burst`: --burst_seconds of calls back to back, the first call of
    each untimed), the functions taking turns burst by burst, so a change in the machine's load (it may be
    shared) hits them all alike, while each is timed in a tight loop as it would run alone. `peers`: name → a
    call taking the burst's seconds that a peer worker answers with the per-call seconds of its own burst, timed
    in its own process the same way.
    """
    timed = {**{name: (lambda burst_seconds, function=function: burst(function, burst_seconds))
                for name, function in functions.items()}, **(peers or {})}
    times = {name: [] for name in timed}
    for run in timed.values():  # warm-up
        run(0.0)
    rounds = max(1, round(seconds / FLAGS.burst_seconds))
    for _ in range(rounds):
        for name, run in timed.items():
            times[name] += run(min(FLAGS.burst_seconds, seconds))
    return {name: np.array(values) for name, values in times.items()}


def texts_of_length(lines, tokenizer, length, count, seed=0):
    """`count` texts of `length` tokens with [CLS] and [SEP] (as near as whole words allow), of corpus words."""
    import tensorflow as tf

    words = " ".join(lines).split()
    unique = sorted(set(words))
    pieces = dict(zip(unique, tokenizer(tf.constant(unique)).row_lengths().numpy().tolist()))
    texts, rng = [], np.random.default_rng(seed)
    for _ in range(count):
        chosen, used, position = [], 0, int(rng.integers(len(words)))
        while used < length - 2 and len(chosen) < 4 * length:
            word = words[position % len(words)]
            position += 1
            if 0 < pieces[word] <= length - 2 - used:
                chosen.append(word)
                used += pieces[word]
        texts.append(" ".join(chosen))
    return texts


def in_graph(tokenize, repeats):
    """A graph running `tokenize` on its `[batch]` strings `repeats` times in a `tf.while_loop` (each time on
    the texts joined to an empty string made from the loop counter, so no pass can hoist the work out)."""
    import tensorflow as tf

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def run(texts):
        def body(step, total):
            fresh = tf.strings.join([texts, tf.strings.substr(tf.strings.as_string(step), 0, 0)])
            return step + 1, total + tf.reduce_sum(tf.cast(tokenize(fresh).flat_values, tf.int64))
        return tf.while_loop(lambda step, _: step < repeats, body, [tf.constant(0), tf.constant(0, tf.int64)])[1]
    return run


def compare_tokenizers(tokenizer, vocab, lines):
    """Ours before and now (eager, tf.function, in-graph) against Hugging Face's fast tokenizers at --batch_sizes."""
    import tensorflow as tf
    import tokenizers

    rust = tokenizers.BertWordPieceTokenizer(vocab, lowercase=True)
    try:
        import transformers
        fast = transformers.ElectraTokenizerFast(vocab, do_lower_case=True)  # (see peer_worker._electra_tokenizer)
    except ImportError:  # the project's own venv has tokenizers but not transformers
        fast = None
    spec = [tf.TensorSpec([None], tf.string)]
    graph_rules = tf.function(tokenizer.tokenize_by_rules, input_signature=spec)
    graph_fused = tf.function(tokenizer.tokenize, input_signature=spec)
    repeats = FLAGS.graph_repeats
    loop_rules, loop_fused = in_graph(tokenizer.tokenize_by_rules, repeats), in_graph(tokenizer.tokenize, repeats)
    lines = [line[:FLAGS.max_chars].rsplit(" ", 1)[0] if len(line) > FLAGS.max_chars else line for line in lines]
    print(f"\ntokenizer alone: corpus lines cut to {FLAGS.max_chars} characters; in-graph: per batch, {repeats} "
          "batches in one graph call")
    header = f"{'batch':>5}  {'path':<48} {'p50 ms':>8} {'texts/s':>9} {'vs before':>9} {'vs HF':>6}"
    print(header + "\n" + "-" * len(header))
    rows, rng = [], np.random.default_rng(0)
    for batch_size in map(int, FLAGS.batch_sizes):
        texts = [lines[i] for i in rng.permutation(len(lines))[:batch_size]]
        batch = tf.constant(texts)
        expected = tokenizer.tokenize_by_rules(batch).to_list()
        assert tokenizer(batch).to_list() == expected == [
            encoding.ids for encoding in rust.encode_batch(texts, add_special_tokens=False)]
        runs = {"ours before: string-op rules, eager": lambda: tokenizer.tokenize_by_rules(batch),
                "ours before: string-op rules, tf.function": lambda: graph_rules(batch),
                "ours before: string-op rules, in-graph": lambda: loop_rules(batch),
                "ours now: fused WordPiece, eager": lambda: tokenizer(batch),
                "ours now: fused WordPiece, tf.function": lambda: graph_fused(batch),
                "ours now: fused WordPiece, in-graph": lambda: loop_fused(batch),
                "HF tokenizers (Rust), encode_batch": lambda: rust.encode_batch(texts, add_special_tokens=False)}
        if fast is not None:
            assert fast(texts, add_special_tokens=False)["input_ids"] == expected
            runs["transformers ElectraTokenizerFast, __call__"] = lambda: fast(texts, add_special_tokens=False)
        times = latencies(runs, FLAGS.seconds / 4)
        for name in times:
            if name.endswith("in-graph"):
                times[name] = times[name] / repeats
        medians = {name: np.median(values) for name, values in times.items()}
        rust_median = medians["HF tokenizers (Rust), encode_batch"]
        for name, values in times.items():
            before = medians[name.replace("now: fused WordPiece", "before: string-op rules")]
            ratio = f"{before / medians[name]:.1f}x" if "now" in name else ""
            rows.append({"batch_size": batch_size, "path": name, "p50_ms": 1e3 * medians[name],
                         "texts_per_s": batch_size / np.mean(values)})
            print(f"{batch_size:>5}  {name:<48} {rows[-1]['p50_ms']:8.3f} {rows[-1]['texts_per_s']:9.0f} "
                  f"{ratio:>9} {rust_median / medians[name]:5.2f}x", flush=True)
    return rows


def cpu_description():
    """The CPU's model name and its vector / matrix instruction flags (from /proc/cpuinfo, where it exists)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            info = f.read()
    except OSError:
        return "unknown CPU"
    model = next((line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name")), "?")
    flags_line = next((line for line in info.splitlines() if line.startswith("flags")), "")
    wanted = sorted(flag for flag in flags_line.split() if flag.startswith(("avx512", "amx", "avx_vnni")))
    return f"{model}; {' '.join(wanted) or 'no AVX-512 / AMX'}"


def low_precision_calls(model, tokenizer, work):
    """name → function(texts) for the exports of --low_precision (a list of raw texts in, probabilities out)."""
    import tensorflow as tf

    from electra_tf.text import featurize
    from electra_tf.export import export_model, load_export
    from electra_tf.export.litert import MODEL_FILE, export_litert

    length, calls = FLAGS.max_seq_length, {}
    encode = tf.function(lambda t: featurize.encode(tokenizer, length, t, pad_to_max_length=False),
                         input_signature=[tf.TensorSpec([None], tf.string)])
    for name in FLAGS.low_precision:
        if name.startswith("litert_"):
            path = export_litert(model, tokenizer, work, model_name=name, max_seq_length=length,
                                 precision=name.split("_")[1])
            # The interpreter runs one thread unless told: the same budget as the others' (all cores by default).
            runner = tf.lite.Interpreter(model_path=os.path.join(path, MODEL_FILE),
                                         num_threads=FLAGS.threads or os.cpu_count()).get_signature_runner()
            calls[f"export, LiteRT {name.split('_')[1]}"] = (
                lambda texts, runner=runner: runner(**{k: v.numpy() for k, v in encode(tf.constant(texts)).items()}))
        else:
            path = export_model(model, tokenizer, work, model_name=name, max_seq_length=length, precision=name)
            signature = load_export(path).signatures["serving_default"]
            calls[f"export, {name}"] = lambda texts, signature=signature: signature(text=tf.constant(texts))
    return calls


def matmul_floor_calls(model, tokenizer):
    """name → function(texts): the encoder's six projection matmuls per layer alone, on a request's shape.

    No embeddings, attention scores, norms, activations or head: what is left
    is the weights' traffic and the matmuls, which any fp32 TensorFlow export
    of the model runs at least once per call, so their time bounds it from below.
    The kernels are constants of the graph, as in a compiled export (their
    layout fixed once, at compile time): an export that reads variables is slower.
    """
    import tensorflow as tf

    kernels = [w.numpy().reshape([-1, w.shape[-1]] if w.path.endswith("attention_output/kernel") else [w.shape[0], -1])
               for w in model.weights if "transformer_layer_" in w.path and w.path.endswith("kernel")]

    def matmuls(rows):
        # Constants of the graph (made while tracing), as in a compiled export: the kernels' layout is fixed once.
        constants = [tf.constant(kernel) for kernel in kernels]
        for query, key, value, attention_output, intermediate, output in (
                constants[i:i + 6] for i in range(0, len(constants), 6)):  # query, key, value, output, ...
            rows += (rows @ query + rows @ key + rows @ value) @ attention_output
            rows += (rows @ intermediate) @ output
        return rows

    shapes = {}

    def rows_of(texts):  # the request's padded [batch·tokens, hidden] (tokenized once per batch, outside the timing)
        key = (len(texts), texts[0])
        if key not in shapes:
            tokens = int(tf.reduce_max(tokenizer(tf.constant(texts)).row_lengths())) + 2
            shapes[key] = tf.ones([len(texts) * min(tokens, FLAGS.max_seq_length), kernels[0].shape[0]])
        return shapes[key]

    calls = {}
    for name, jit in (("floor: projection matmuls (graph)", False), ("floor: projection matmuls (XLA)", True)):
        function = tf.function(matmuls, jit_compile=jit)
        calls[name] = lambda texts, function=function: function(rows_of(texts)).numpy()
    return calls


def compare_with_peer(model, tokenizer, vocab, texts, work):
    """Ours (padded to the longest, and to max_seq_length) against the peer at --batch_sizes × --lengths."""
    import tensorflow as tf

    from electra_tf.export import export_model, load_export

    length = FLAGS.max_seq_length
    exports = {"export, padded to longest": export_model(model, tokenizer, work, model_name="longest",
                                                         max_seq_length=length),
               f"export, padded to {length}": export_model(model, tokenizer, work, model_name="fixed",
                                                          max_seq_length=length, pad_to_max_length=True),
               "export, weights as variables": export_model(model, tokenizer, work, model_name="variables",
                                                            max_seq_length=length, constant_weights=False)}
    if FLAGS.compiled:
        exports["export, compiled (XLA)"] = export_model(model, tokenizer, work, model_name="compiled",
                                                         max_seq_length=length, compile=True)
    runs_of = {name: (lambda texts, signature=load_export(path).signatures["serving_default"]:
                      signature(text=tf.constant(texts))) for name, path in exports.items()}
    if FLAGS.python:
        from electra_tf import pipeline
        from electra_tf.text.preprocessor import ElectraPreprocessor

        model.preprocessor = ElectraPreprocessor(tokenizer, length)
        classify = pipeline("text-classification", model, tokenizer=tokenizer, max_seq_length=length)
        compiled = pipeline("text-classification", model, tokenizer=tokenizer, max_seq_length=length, compile=True)
        runs_of.update({"Python: model.predict (raw text)": lambda texts: model.predict(texts, verbose=0),
                        "Python: pipeline": classify, "Python: pipeline, compile=True": compiled})
    runs_of.update(low_precision_calls(model, tokenizer, work))
    if FLAGS.floor:
        runs_of.update(matmul_floor_calls(model, tokenizer))
    workers = start_peers(model, tokenizer, vocab, work)
    header = (f"{'batch':>5} {'tokens':>6}  {'path':<33} {'p50 ms':>8} {'p95 ms':>8} {'texts/s':>8} "
              f"{'vs peer':>8} {'vs best':>8} {'vs fixed':>8}")
    print("\n" + header + "\n" + "-" * len(header))
    rows = []
    try:
        for batch_size in map(int, FLAGS.batch_sizes):
            for tokens in map(int, FLAGS.lengths):
                batch = texts_of_length(texts, tokenizer, min(tokens, length), batch_size)
                constant = tf.constant(batch)
                measured = float(np.mean(tokenizer(constant).row_lengths().numpy())) + 2  # with [CLS], [SEP]
                runs = {name: (lambda run=run: run(batch)) for name, run in runs_of.items()}
                peers = {name: (lambda seconds, worker=worker: worker.call("burst", seconds=seconds,
                                                                           texts=batch)["times"])
                         for name, worker in workers.items()}
                times = latencies(runs, FLAGS.peer_seconds, peers=peers)
                medians = {name: np.median(values) for name, values in times.items()}
                best = min((medians[name] for name in workers if name.startswith(PEERS)), default=None)
                for name, values in times.items():
                    row = {"batch_size": batch_size, "tokens": tokens, "text_tokens": measured, "path": name,
                           "p50_ms": 1e3 * medians[name],
                           "p95_ms": 1e3 * np.percentile(values, 95), "texts_per_s": batch_size / np.mean(values)}
                    ours = not name.startswith(PEERS)
                    vs_peer = f"{medians[PEER] / medians[name]:.2f}x" if ours and PEER in medians else ""
                    vs_best = f"{best / medians[name]:.2f}x" if ours and best else ""
                    vs_fixed = (f"{medians[f'export, padded to {length}'] / medians[name]:.2f}x"
                                if name in ("export, padded to longest", "export, compiled (XLA)") else "")
                    print(f"{batch_size:>5} {tokens:>6}  {name:<33} {row['p50_ms']:8.2f} {row['p95_ms']:8.2f} "
                          f"{row['texts_per_s']:8.1f} {vs_peer:>8} {vs_best:>8} {vs_fixed:>8}", flush=True)
                    rows.append(row)
    finally:
        for worker in workers.values():
            worker.close()
    return rows


def start_peers(model, tokenizer, vocab, work):
    """name → a started worker process (`peer_worker.py`), each serving the same classifier by itself:
    transformers + torch eager (`PEER`), then --runtimes (the transformers model exported to ONNX, in ONNX
    Runtime or OpenVINO) and --runtimes_ours (our `--format=onnx` export in them), fed by transformers' fast
    tokenizer; one process each, so no two runtimes' thread pools share one."""
    if FLAGS.peer == "none":
        return {}
    length, settings = FLAGS.max_seq_length, {"model": model.config.to_dict(), "vocab_file": vocab, "lowercase": True,
                                              "max_seq_length": FLAGS.max_seq_length}
    runtimes = {f"{PEERS[1]} {name}": {"role": "runtime_serving", "runtime": RUNTIMES[name.split("_")[0]],
                                       "precision": name.split("_")[1], "threads": FLAGS.threads,
                                       "fused": name.startswith("ortfused")}
                for name in FLAGS.runtimes}
    if FLAGS.runtimes_ours and FLAGS.peer == "hf":
        from electra_tf.export.onnx import MODEL_FILE, export_onnx
        from electra_tf.export.onnx_text import TEXT_MODEL_FILE

        for name in FLAGS.runtimes_ours:
            kind, precision = name.split("_")
            text = kind == "orttext"  # our export at that precision, raw text in; else our fp32 file, ids in
            model_name = f"onnx_text_{precision}" if text else "onnx"
            folder = os.path.join(work, model_name, "1")
            if not os.path.isdir(folder):
                export_onnx(model, tokenizer, work, model_name=model_name, max_seq_length=length,
                            precision=precision if text else "fp32", text_model=text)
            runtimes[f"ours: ONNX {'text model' if text else 'export'}, {name}"] = {
                "role": "runtime_serving", "onnx": os.path.join(folder, TEXT_MODEL_FILE if text else MODEL_FILE),
                "threads": FLAGS.threads, "runtime": RUNTIMES[kind], "precision": "fp32" if text else precision,
                "text_model": text, "fused": kind == "ortfused"}
    workers = {}
    try:
        for name, options in {PEER: {"role": "serving"}, **runtimes}.items():
            workers[name] = PeerProcess(FLAGS.peer, threads=FLAGS.threads, python=FLAGS.peer_python)
            workers[name].call("init", **settings, **options)
            print(f"started {name} ({workers[name].call('versions')['peer']})", flush=True)
    except BaseException:
        for worker in workers.values():
            worker.close()
        raise
    return workers


def benchmark_classifier(work):
    """`(corpus lines, vocab.txt, tokenizer, classifier)` of the flags (--config, --vocab or one learned from the
    default corpus, written in `work`): random weights, seeded; zero biases as initialised."""
    import keras

    from electra_tf import ElectraForSequenceClassification, load_run_config
    from electra_tf.text.tokenizer import WordPieceTokenizer
    from electra_tf.text.vocabulary import save_vocabulary
    from electra_tf.text.vocabulary_learning import build_vocabulary

    corpus = os.path.join(work, "corpus.txt")
    lines = corpus_lines(corpus)
    vocab = FLAGS.vocab
    if vocab is None:
        vocab = os.path.join(work, "vocab.txt")
        save_vocabulary(build_vocabulary([corpus], FLAGS.vocab_size), vocab)
    tokenizer = WordPieceTokenizer(vocab)
    model_config, _ = load_run_config(FLAGS.config)
    keras.utils.set_random_seed(0)
    model = ElectraForSequenceClassification(model_config.replace(vocab_size=tokenizer.vocabulary_size()),
                                             num_labels=2)
    return lines, vocab, tokenizer, model


def trained_like_biases(model, seed=1):
    """Gives `model`'s biases and LayerNorm offsets small non-zero values, as a trained model's (a random init's
    are all zero, and TensorFlow's graph optimizer folds an add of zeros away, and with it the fusions a trained
    model's graph gets). Returns how many weights it set."""
    rng = np.random.default_rng(seed)
    offsets = [weight for weight in model.weights if weight.path.endswith(("bias", "beta"))]
    for weight in offsets:
        weight.assign(rng.normal(0.0, 0.02, weight.shape).astype(weight.dtype))
    return len(offsets)


def corpus_lines(path):
    """Sentence lines (4 words or more) of the default corpus (docstrings), written to `path`."""
    from electra_tf.data.default_corpus import write_default_corpus

    write_default_corpus(path)
    with open(path, encoding="utf-8") as f:
        return [line.strip() for line in f if len(line.split()) >= 4]


def breakdown(model, tokenizer, texts, work):
    """The five paths of the module docstring on corpus lines, at --batch_sizes."""
    import tensorflow as tf

    from electra_tf.text import featurize
    from electra_tf.export import export_model, load_export

    length = FLAGS.max_seq_length
    served = load_export(export_model(model, tokenizer, work, model_name="bench", max_seq_length=length))
    raw_text, ids = served.signatures["serving_default"], served.signatures["serve_ids"]
    encode = tf.function(lambda t: featurize.encode(tokenizer, length, t, pad_to_max_length=False),
                         input_signature=[tf.TensorSpec([None], tf.string)])
    header = f"{'batch':>5}  {'path':<44} {'p50 ms':>8} {'p95 ms':>8} {'texts/s':>8}"
    print(header + "\n" + "-" * len(header))
    for batch_size in map(int, FLAGS.batch_sizes):
        batch = tf.constant(texts[:batch_size])
        encoded = encode(batch)  # as serving_default pads: to the request's longest text
        encoded_numpy = {key: value.numpy() for key, value in encoded.items()}
        runs = {
            "export serving_default (raw text)": lambda: raw_text(text=batch),
            "export serve_ids (token ids)": lambda: ids(**encoded),
            "Keras in process: encode + predict_on_batch": lambda: model.predict_on_batch(encode(batch)),
            "Keras in process: predict_on_batch (ids)": lambda: model.predict_on_batch(encoded_numpy),
            "in-graph tokenization alone": lambda: encode(batch),
        }
        medians = {}
        for name, times in latencies(runs, FLAGS.seconds).items():
            medians[name] = np.median(times)
            p50, p95 = 1e3 * np.median(times), 1e3 * np.percentile(times, 95)
            print(f"{batch_size:>5}  {name:<44} {p50:8.2f} {p95:8.2f} {batch_size * len(times) / times.sum():8.1f}")
        total = medians["export serving_default (raw text)"]
        print(f"{batch_size:>5}  tokenization share of the exported raw-text time: "
              f"{(total - medians['export serve_ids (token ids)']) / total:.0%} (raw text - ids), "
              f"{medians['in-graph tokenization alone'] / total:.0%} (tokenization alone)", flush=True)


def main(argv):
    del argv
    from electra_tf.tools.common import quiet_libraries

    quiet_libraries()
    import tensorflow as tf

    if FLAGS.threads:  # before TensorFlow runs its first op
        tf.config.threading.set_intra_op_parallelism_threads(FLAGS.threads)

    from electra_tf.util.atomic import write_json

    work = tempfile.mkdtemp(prefix="electra_serving_bench_")
    try:
        lines, vocab, tokenizer, model = benchmark_classifier(work)
        trained_like_biases(model)
        texts = [lines[i] for i in np.random.default_rng(0).permutation(len(lines))[:256]]
        lengths = tokenizer(tf.constant(texts)).row_lengths().numpy()
        print(f"model: {FLAGS.config} ({model.count_params():,} parameters), vocabulary {tokenizer.vocabulary_size()}, "
              f"max_seq_length {FLAGS.max_seq_length}; corpus lines: {np.mean(lengths):.0f} tokens on average "
              f"({np.mean(lengths > FLAGS.max_seq_length - 2):.0%} cut); threads per op: {FLAGS.threads or 'default'}; "
              f"CPUs: {os.cpu_count()}; load average {os.getloadavg()[0]:.1f}", flush=True)
        print(f"CPU: {cpu_description()}")
        tokenizer_rows = compare_tokenizers(tokenizer, vocab, lines) if FLAGS.tokenizer else []
        if FLAGS.breakdown:
            breakdown(model, tokenizer, texts, work)
        rows = compare_with_peer(model, tokenizer, vocab, lines, work)
        if FLAGS.json:
            write_json(FLAGS.json, {"rows": rows, "tokenizer_rows": tokenizer_rows, "cpu": cpu_description(),
                                    "cpus": os.cpu_count(), "load_average": os.getloadavg()[0]})
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    app.run(main)
