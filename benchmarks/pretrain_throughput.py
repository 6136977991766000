"""ELECTRA-Small pre-training step throughput: electra_tf against Hugging Face `transformers` on this machine.

    pip install -e .[bench]     # the peer: transformers and CPU torch (never needed by the tests)
    python benchmarks/pretrain_throughput.py [--precisions=fp32,bf16] [--objectives=electra,mlm] [--rounds=6]

One machine, one script, the same step on both sides:
- ELECTRA-Small (paper sizes: discriminator 256×12, generator 1/4 wide, tied embedding block), batch 32,
  length 128: in-graph masking (15 %, 85 % [MASK]), generator MLM at the masked positions only, sampling
  (ours: `--sampler`, by default our default inverse CDF; the peer: Gumbel-max, as the original; the same
  distribution), discriminator RTD, loss MLM + 50·RTD, AdamW (weight decay 0.01, no decay on LayerNorm/bias),
  global-norm clipping at 1.0, warm-up/linear-decay schedule: a real update every step.
- The peer is `ElectraForMaskedLM` + `ElectraForPreTraining` (PyTorch, CPU) with the same config, the same
  masking and sampling rules, the generator's embedding block replaced by the discriminator's (shared, as the
  original) and its LM head tied to the word embeddings; `torch.optim.AdamW` (fused) and `clip_grad_norm_`;
  bf16 through `torch.autocast`. It runs in its own persistent worker process, driven over a pipe
  (`benchmarks/peer_worker.py`): TensorFlow and PyPI's default (CUDA) torch crash in one process, and this
  process never imports torch. `--peer=stub` drives a NumPy stand-in over the same pipe (tests).
- Ours runs through Keras's own `train_function` (what `fit` calls), fp32 or `mixed_bfloat16`, with or without
  `jit_compile` (`--jit=both` times both). The default is `electra-pretrain`'s (`electra_tf.training.speed`):
  XLA calling oneDNN's matmuls in fp32 (~10 % faster here), no XLA under bf16 (XLA's CPU code does not use the
  bf16 instructions oneDNN's kernels do).
- Timed steps alternate ours / peer (A/B/A/B...) so both see the same machine load; the ratio is the median
  of the per-round ratios. Tokens/s counts every position of the batch (32 × 128 per step).
- Breakdown: the same step cut into four separately timed parts, generator (masking, forward and backward
  of the MLM loss) / sampling (replacements, corrupted ids, labels) / discriminator (forward and backward of
  the RTD loss) / optimizer (clipping and AdamW), each part's outputs fetched before the next starts.
- Profile: our step without XLA under `tf.profiler`, op time by kind (matmul, random bits, ...).
- MFU: the step's model FLOPs (`electra_tf.pretraining.flops`, the paper's count) per second, divided by a
  2048³ `tf.matmul` timed in the same run at the same precision (oneDNN): this CPU's practical limit.
- Peak memory: each configuration once more in a fresh subprocess (its peak resident set, which includes the
  framework itself, and XLA's compilation when used).
- First step: the time from building the model to the end of its first step, for every row (a user's wait
  before training starts). For our electra step without XLA, a fresh subprocess also splits it into building,
  tracing (Python), graph optimisation (Grappler and the oneDNN rewrites, while the first call instantiates
  the graph) and the step itself, and a second one dumps the step's graph after Grappler
  (`TF_DUMP_GRAPH_PREFIX`), with those of the shared block calls it makes, and counts the fused ops
  TensorFlow's CPU rewrites produced ("fusions").
"""

import json
import os
import platform
import resource
import subprocess
import sys
import time

import numpy as np
from absl import app, flags
from peer_worker import PeerProcess

FLAGS = flags.FLAGS
flags.DEFINE_string("config", "electra_small", "Run config (configs/*.json); its vocabulary size is kept.")
flags.DEFINE_integer("batch_size", 32, "Sequences per step.")
flags.DEFINE_integer("seq_length", 128, "Tokens per sequence.")
flags.DEFINE_list("precisions", ["fp32", "bf16"], "fp32 and/or bf16.")
flags.DEFINE_list("objectives", ["electra", "mlm"], "electra (RTD, generator 1/4) and/or mlm (full-size MLM).")
flags.DEFINE_enum("jit", "auto", ["auto", "true", "false", "both"],
                  "Our step with jit_compile; auto: electra-pretrain's default per precision (XLA in fp32, not "
                  "under bf16: electra_tf.training.speed); both: time both paths.")
flags.DEFINE_bool("xla_cache", True, "With XLA: keep its compiled programs across runs as electra-pretrain does "
                  "(TF_XLA_FLAGS=--tf_xla_persistent_cache_directory; electra_tf.training.speed): the first step "
                  "of a second run of the same shapes loads them.")
flags.DEFINE_bool("xla_onednn", True, "With XLA: let XLA's CPU backend call oneDNN for its matmuls "
                  "(XLA_FLAGS=--xla_cpu_use_onednn=true, as electra-pretrain does); here the fastest fp32 path.")
flags.DEFINE_enum("sampler", "inverse_cdf", ["inverse_cdf", "gumbel"],
                  "Our sampler (PretrainingConfig.sampler): inverse_cdf, our default, or gumbel, the peer's and the "
                  "original's (the same distribution; gumbel times the same procedure on both sides).")
flags.DEFINE_integer("warmup", 2, "Untimed steps per model.")
flags.DEFINE_integer("rounds", 6, "Timed A/B rounds (one step of each model per round).")
flags.DEFINE_integer("breakdown_rounds", 3, "Rounds of the four-part breakdown (0: none).")
flags.DEFINE_enum("peer", "hf", ["hf", "stub", "none"],
                  "hf: time the Hugging Face peer (transformers and torch: the bench extra) in its own worker "
                  "process; stub: a NumPy stand-in over the same pipe (tests); none: ours only.")
flags.DEFINE_bool("memory", True, "Measure each configuration's peak memory in a fresh subprocess.")
flags.DEFINE_bool("profile", True, "Profile our electra step without XLA (tf.profiler) and print time per op kind.")
flags.DEFINE_integer("threads", 0, "Threads per framework (TensorFlow intra- and inter-op, torch); 0: their "
                     "defaults (all cores). 1 is steadier on a busy machine.")
flags.DEFINE_integer("matmul_size", 2048, "Size of the square matmul that measures the machine's limit.")
flags.DEFINE_string("json", None, "Also write all figures to this JSON file.")
flags.DEFINE_bool("graph", True, "Split our first step into its phases and count the fusions in its optimised "
                  "graph (each in a fresh subprocess).")
flags.DEFINE_string("probe", None, "Internal: side:objective:precision:jit, measure one step's peak memory; "
                    "phases:objective:precision or fusions:objective:precision, see --graph.")

PRECISIONS = {"fp32": "float32", "bf16": "mixed_bfloat16"}
PEER = "transformers (PyTorch)"
MASK_ID, SPECIAL_IDS = 4, (0, 2, 3, 4)


def configs(objective):
    from electra_tf.config import load_run_config
    model_config, pretraining_config = load_run_config(FLAGS.config)
    return model_config, pretraining_config.replace(
        objective=objective, batch_size=FLAGS.batch_size, max_seq_length=FLAGS.seq_length, sampler=FLAGS.sampler)


def make_batch(vocab_size):
    """Full-length packed sequences: [CLS] words [SEP], no padding (as packed pre-training data)."""
    rng = np.random.default_rng(0)
    ids = rng.integers(5, vocab_size, size=(FLAGS.batch_size, FLAGS.seq_length)).astype(np.int32)
    ids[:, 0], ids[:, -1] = 2, 3
    return {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}


def median_seconds(function, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


# === The machine's limit ===
def matmul_limits(size, peer=None):
    """GFLOP/s of a size³ matmul (median of 5), TensorFlow with and without XLA, and torch in `peer`'s worker."""
    import tensorflow as tf
    flop = 2 * size ** 3
    out = {}
    for precision, dtype in (("fp32", tf.float32), ("bf16", tf.bfloat16)):
        a = tf.cast(tf.random.normal([size, size]), dtype)
        b = tf.cast(tf.random.normal([size, size]), dtype)
        for path, jit in (("tf", False), ("xla", True)):
            function = tf.function(lambda x, y: tf.matmul(x, y), jit_compile=jit)
            function(a, b).numpy()
            out[f"{path}_{precision}"] = flop / median_seconds(lambda: function(a, b).numpy(), 5) / 1e9
    if peer is not None:
        out.update({f"torch_{precision}": gflops for precision, gflops in peer.call("matmul", size=size).items()})
    return out


# === Ours ===
class Ours:
    """An `ElectraPretrainer` step through Keras's `train_function`, and the same step in four parts."""

    def __init__(self, objective, precision, jit):
        import keras
        import tensorflow as tf

        from electra_tf import ElectraPretrainer, pretraining_optimizer
        model_config, pretraining_config = configs(objective)
        keras.mixed_precision.set_global_policy(PRECISIONS[precision])
        try:
            keras.utils.set_random_seed(0)
            self.model = ElectraPretrainer(model_config, pretraining_config, MASK_ID, SPECIAL_IDS)
            self.model.compile(optimizer=pretraining_optimizer(pretraining_config), jit_compile=jit)
        finally:
            keras.mixed_precision.set_global_policy("float32")
        self.model.optimizer.build(self.model.trainable_variables)  # as `fit` does before its first step
        self.model.make_train_function()
        self.batch = {k: tf.constant(v) for k, v in make_batch(model_config.vocab_size).items()}
        self.jit = jit
        self._parts = None

    def step(self):
        """One step; its seconds."""
        start = time.perf_counter()
        float(self.model.train_function([self.batch])["loss"])
        return time.perf_counter() - start

    def parts(self):
        if self._parts is None:
            self._parts = _OursParts(self.model, self.jit)
        return self._parts.run(self.batch)


class _OursParts:
    """`ElectraPretrainer.train_step` cut into generator / sampling / discriminator / optimizer functions.

    The step's own pieces (`_mask`, `_generate`, `_mlm_loss`, `_corrupt`, `_discriminate`, `_rtd_loss`,
    `optimizer.apply`); the shared embedding block gets the sum of its two gradients.
    """

    def __init__(self, model, jit):
        import tensorflow as tf

        from electra_tf.pretraining import losses
        self.model = model
        pc = model.pretraining_config
        variables = model.trainable_variables
        index = {id(v): i for i, v in enumerate(variables)}
        generator_variables = model.generator.trainable_variables
        discriminator_variables = model.discriminator.trainable_variables if model.is_electra else []

        def generator(inputs, counter):
            masked = model.mask_batch(inputs, counter)
            with tf.GradientTape() as tape:
                outputs = model.generate(inputs, masked, training=True)
                denominators = model.denominators(masked, outputs.real_tokens)
                loss = pc.gen_weight * losses.mlm_loss(masked, outputs.mlm_logits, denominators)
            return outputs, tape.gradient(loss, generator_variables)

        def sampling(inputs, outputs, counter):
            return model.corrupt(outputs, counter)

        def discriminator(inputs, corrupted):
            with tf.GradientTape() as tape:
                outputs = model.discriminate(inputs, corrupted, training=True)
                denominators = model.denominators(outputs.masked, outputs.real_tokens)
                loss = pc.disc_weight * losses.rtd_loss(outputs, denominators)
            return tape.gradient(loss, discriminator_variables)

        def optimizer(generator_gradients, discriminator_gradients):
            gradients = [None] * len(variables)
            for variable, gradient in zip(generator_variables, generator_gradients):
                gradients[index[id(variable)]] = gradient
            for variable, gradient in zip(discriminator_variables, discriminator_gradients):
                i = index[id(variable)]
                gradients[i] = gradient if gradients[i] is None else (
                    tf.convert_to_tensor(gradients[i]) + tf.convert_to_tensor(gradient))
            model.optimizer.apply(gradients, variables)
            return model.optimizer.iterations

        compiled = [tf.function(tf.autograph.experimental.do_not_convert(f), jit_compile=jit, reduce_retracing=True)
                    for f in (generator, sampling, discriminator, optimizer)]
        self.generator, self.sampling, self.discriminator, self.optimizer = compiled

    def run(self, batch):
        import tensorflow as tf
        counter = tf.convert_to_tensor(self.model.optimizer.iterations)
        clock = [time.perf_counter()]
        generated, generator_gradients = _fetch(self.generator(batch, counter))
        clock.append(time.perf_counter())
        if self.model.is_electra:
            corrupted = _fetch(self.sampling(batch, generated, counter))
            clock.append(time.perf_counter())
            discriminator_gradients = _fetch(self.discriminator(batch, corrupted))
            clock.append(time.perf_counter())
        else:
            discriminator_gradients = []
            clock += [clock[-1], clock[-1]]
        _fetch(self.optimizer(generator_gradients, discriminator_gradients))
        clock.append(time.perf_counter())
        return np.diff(clock)


def _fetch(structure):
    """Waits for every tensor of `structure` (TensorFlow runs eagerly-called functions asynchronously)."""
    import tensorflow as tf
    for tensor in tf.nest.flatten(structure, expand_composites=True):
        if tensor is not None:  # a field the step did not compute
            tensor.numpy()
    return structure


# === The Hugging Face peer, in its own process ===
class Peer:
    """The same step in transformers + torch (`peer_worker.HFPeer`), run by a worker process over a pipe.

    This process never imports torch: TensorFlow and PyPI's default (CUDA) torch crashed in one process.
    `kind="stub"` runs the worker's NumPy stand-in instead (tests without torch).
    """

    def __init__(self, objective, precision, kind="hf"):
        from electra_tf.config import generator_config
        model_config, pc = configs(objective)
        self.worker = PeerProcess(kind, FLAGS.threads)
        batch = {key: value.tolist() for key, value in make_batch(model_config.vocab_size).items()}
        pretraining = {**pc.to_dict(), "max_predictions_per_seq": pc.predictions_per_seq}
        self.first_step = self.worker.call(
            "init", model=model_config.to_dict(), generator=generator_config(model_config, pc).to_dict(),
            pretraining=pretraining, batch=batch, precision=precision, mask_id=MASK_ID,
            special_ids=list(SPECIAL_IDS))["first_step"]

    def step(self):
        return self.worker.call("step")["seconds"]

    def parts(self):
        return np.array(self.worker.call("parts")["parts"])

    def peak_mb(self):
        return self.worker.call("peak")["peak_mb"]

    def close(self):
        self.worker.close()


def start_peer_worker(kind):
    """A worker answering `versions`, or None (with the reason printed) when the peer cannot run here."""
    if kind == "none":
        return None
    worker = PeerProcess(kind, FLAGS.threads)
    try:
        worker.call("versions")
    except RuntimeError as e:
        worker.close()
        print(f"the peer cannot run here ({e}; pip install -e .[bench]): timing electra_tf only.")
        return None
    return worker


# === Measurements ===
def alternate(models, rounds, method):
    """Runs `method` of each model once per round, in turn; returns each model's list of results."""
    results = {name: [] for name in models}
    if method == "parts":  # traces (and compiles) the parts
        for model in models.values():
            model.parts()
    for _ in range(rounds):
        for name, model in models.items():
            if method == "step":
                results[name].append(model.step())
            else:
                results[name].append(model.parts())
    return results


_OP_KINDS = (  # (kind, op types), checked in order; anything else is "element-wise"
    ("matmul", ("MatMul", "BatchMatMul", "Einsum")),
    ("random bits (Philox, SplitMix)", ("StatelessRandom", "RightShift", "BitwiseXor", "BitwiseAnd", "LeftShift")),
    ("softmax, GELU, log (transcendental)", ("Softmax", "Erf", "Exp", "Log", "Tanh", "Sigmoid", "Rsqrt", "Sqrt",
                                             "Pow")),
    ("reductions, top-k, arg-max", ("Sum", "Mean", "Max", "Min", "ArgMax", "BiasAddGrad", "Prod", "TopK", "All",
                                    "Any")),
    ("transpose, gather, scatter, copy", ("Transpose", "Gather", "Scatter", "Concat", "Slice", "Pack", "Unpack",
                                          "Tile", "SegmentSum", "Pad", "Identity", "BroadcastTo")),
)


def profile_step(model, steps=2):
    """Op time of `steps` steps by kind (tf.profiler trace; op times overlap across the two cores)."""
    import collections
    import glob
    import shutil
    import tempfile

    import tensorflow as tf
    from tensorflow.tsl.profiler.protobuf import xplane_pb2
    folder = tempfile.mkdtemp(prefix="electra_profile_")
    try:
        tf.profiler.experimental.start(folder)
        start = time.perf_counter()
        for _ in range(steps):
            model.step()
        wall = (time.perf_counter() - start) / steps
        tf.profiler.experimental.stop()
        space = xplane_pb2.XSpace()
        with open(glob.glob(os.path.join(folder, "**", "*.xplane.pb"), recursive=True)[0], "rb") as f:
            space.ParseFromString(f.read())
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    kinds, optimizer = collections.Counter(), 0.0
    for plane in space.planes:
        for line in plane.lines:
            for event in line.events:
                name = plane.event_metadata[event.metadata_id].name
                if "::" in name or ":" not in name or "__inference" in name:
                    continue  # executor and function envelopes, not ops
                op_name, op_type = name.rsplit(":", 1)
                seconds = event.duration_ps / 1e12 / steps
                if any(s in op_name.lower() for s in ("adam", "clip_by_global_norm", "/optimizer")):
                    optimizer += seconds
                    continue
                kind = next((k for k, types in _OP_KINDS if any(t in op_type for t in types)), "element-wise")
                kinds[kind] += seconds
    kinds["optimizer update (all its ops)"] = optimizer
    return wall, kinds


def peak_rss_mb():
    """This process's peak resident set (VmHWM; `ru_maxrss` would report the parent's after a fork)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# Op types of the step graph after Grappler, by what they say about TensorFlow's CPU fusions.
_FUSED_OPS = ("_FusedMatMul", "_MklFusedMatMul", "_MklFusedBatchMatMulV2", "_FusedBatchMatMulV2", "_MklLayerNorm",
              "_MklFusedMish", "_MklSwish", "_FusedConv2D", "_UnaryOpsComposition")
_UNFUSED_OPS = ("MatMul", "BatchMatMulV2", "BiasAdd", "Softmax", "Erf", "Mean", "SquaredDifference", "Rsqrt",
                "SelectV2")


def probe_phases(objective, precision):
    """Child process: our step's first-call time split into build, trace, graph optimisation and one step."""
    import tensorflow as tf
    start = time.perf_counter()
    model = Ours(objective, precision, False)
    step = tf.function(tf.autograph.experimental.do_not_convert(model.model.train_step),
                       reduce_retracing=True)  # what Keras's train_function runs
    built = time.perf_counter()
    concrete = step.get_concrete_function([model.batch])
    traced = time.perf_counter()
    _fetch(concrete([model.batch]))
    first = time.perf_counter()
    _fetch(concrete([model.batch]))
    steady = time.perf_counter() - first
    return {"build": built - start, "trace": traced - built, "optimise": first - traced - steady, "step": steady,
            "total": first - start}


def probe_fusions(objective, precision, folder):
    """Child process (TF_DUMP_GRAPH_PREFIX=folder): op counts of our step's graph after Grappler (on here, though
    `electra-pretrain` runs without it: this counts what its fusions would be), with the graphs of the shared
    block calls it makes (`SharedTrace`: each network's block forward and backward, counted once)."""
    import collections
    import glob
    import re
    model = Ours(objective, precision, False)
    model.step()
    step = sorted(glob.glob(os.path.join(folder, "__inference_one_step_on_data_*after_graph_optimization*")))[-1:]
    blocks = glob.glob(os.path.join(folder, "*_owner_call_*after_graph_optimization*"))
    counts = collections.Counter()
    for dump in step + blocks:
        with open(dump) as f:
            counts.update(re.findall(r'^\s*op: "([^"]+)"', f.read(), re.MULTILINE))
    return {op: counts.get(op, 0) for op in _FUSED_OPS + _UNFUSED_OPS} | {"nodes": sum(counts.values())}


def run_probe(spec):
    """The `--probe` child: prints its figures as JSON on the last line."""
    kind, rest = spec.split(":", 1)
    if kind == "phases":
        import tensorflow as tf
        tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})  # as electra-pretrain
        figures = probe_phases(*rest.split(":"))
    elif kind == "fusions":
        figures = probe_fusions(*rest.split(":"), os.environ["TF_DUMP_GRAPH_PREFIX"])
    else:
        _, objective, precision, jit = spec.split(":")
        model = Ours(objective, precision, jit == "1")
        model.step()
        model.step()
        figures = {"peak_mb": peak_rss_mb()}
    print(json.dumps(figures))


def child(spec, env=None):
    """Runs `--probe=spec` in a fresh process; its JSON figures, or None if it failed."""
    command = [sys.executable, os.path.abspath(__file__), f"--probe={spec}", f"--config={FLAGS.config}",
               f"--batch_size={FLAGS.batch_size}", f"--seq_length={FLAGS.seq_length}", f"--sampler={FLAGS.sampler}"]
    result = subprocess.run(command, capture_output=True, text=True,
                            env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", **(env or {})})
    if result.returncode != 0:
        print(f"probe {spec} failed: {result.stderr.strip().splitlines()[-1:]}")
        return None
    return json.loads(result.stdout.strip().splitlines()[-1])


def step_graph(objective, precision):
    """Phases of the first step, and the fusions in the optimised graph (two fresh processes)."""
    import shutil
    import tempfile
    phases = child(f"phases:{objective}:{precision}")
    folder = tempfile.mkdtemp(prefix="electra_graph_")
    try:
        fusions = child(f"fusions:{objective}:{precision}",
                        {"TF_DUMP_GRAPH_PREFIX": folder, "TF_DUMP_GRAPH_NAME_FILTER": "*"})
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return {"precision": precision, "phases": phases, "fusions": fusions}


def measure_memory(spec):
    """Peak memory of one configuration alone: ours in a fresh process, the peer in a fresh worker."""
    side, objective, precision, _ = spec.split(":")
    if side == "peer":
        peer = Peer(objective, precision, FLAGS.peer)
        try:
            peer.step()
            return peer.peak_mb()
        finally:
            peer.close()
    figures = child(spec)
    return None if figures is None else figures["peak_mb"]


def training_flops(objective):
    from electra_tf.pretraining.flops import training_flops_per_step
    model_config, pretraining_config = configs(objective)
    return training_flops_per_step(model_config, pretraining_config)


def cpu_description():
    """This CPU's model name and the matmul-relevant instruction sets it has (from /proc/cpuinfo)."""
    try:
        with open("/proc/cpuinfo") as f:
            fields = {key.strip(): value.strip() for key, value in (line.split(":", 1) for line in f if ":" in line)}
    except OSError:
        fields = {}
    name = fields.get("model name") or platform.processor() or "unknown"
    present = fields.get("flags", "").split()
    wanted = ("avx512f", "avx512_bf16", "amx_bf16", "amx_tile")
    return name, " ".join(w for w in wanted if w in present)


def main(argv):
    del argv
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if FLAGS.xla_onednn:  # before XLA's first compilation; the memory probes inherit it
        from electra_tf.training.speed import use_onednn_in_xla
        use_onednn_in_xla()
    if FLAGS.xla_cache:  # as electra-pretrain: a second run of the same shapes loads its compiled step
        from electra_tf.training.speed import cache_xla_compilations
        cache_xla_compilations()
    if FLAGS.probe:
        run_probe(FLAGS.probe)
        return
    import tensorflow as tf

    from electra_tf.training.speed import xla_pays
    if FLAGS.threads:
        tf.config.threading.set_intra_op_parallelism_threads(FLAGS.threads)
        tf.config.threading.set_inter_op_parallelism_threads(FLAGS.threads)
    versions_worker = start_peer_worker(FLAGS.peer)
    with_peer = versions_worker is not None
    tokens = FLAGS.batch_size * FLAGS.seq_length
    name, instructions = cpu_description()
    print(f"machine: {name}, {os.cpu_count()} cores ({instructions}), load average at start "
          f"{os.getloadavg()[0]:.1f}; TensorFlow {tf.__version__}", end="")
    if with_peer:
        print(f", peer (own process): {versions_worker.call('versions')['peer']}", end="")
    print(f"\nstep: {FLAGS.config}, batch {FLAGS.batch_size} × length {FLAGS.seq_length} = {tokens} tokens; "
          f"sampling: ours {FLAGS.sampler}, the peer's gumbel;\n"
          f"{FLAGS.warmup} warm-up steps, then {FLAGS.rounds} alternating rounds (median)\n")

    limits = matmul_limits(FLAGS.matmul_size, versions_worker)
    if with_peer:
        versions_worker.close()
    print(f"matmul {FLAGS.matmul_size}³, GFLOP/s (median of 5):")
    for path, label in (("tf", "TensorFlow tf.function (oneDNN)"), ("xla", "TensorFlow jit_compile (XLA)"),
                        ("torch", "PyTorch")):
        if f"{path}_fp32" in limits:
            print(f"  {label:34s} fp32 {limits[f'{path}_fp32']:7.0f}   bf16 {limits[f'{path}_bf16']:7.0f}")
    print()

    rows, breakdowns, profiles, graphs = [], [], [], []
    for objective in FLAGS.objectives:
        flop = training_flops(objective)
        for precision in FLAGS.precisions:
            jits = {"both": [False, True], "true": [True], "false": [False]}.get(
                FLAGS.jit, [xla_pays(precision != "fp32", configs(objective)[1].train_steps)])
            models, first_steps = {}, {}
            for jit in jits:
                start = time.perf_counter()
                name = f"electra_tf ({('XLA+oneDNN' if FLAGS.xla_onednn else 'XLA') if jit else 'tf.function'})"
                # electra-pretrain's default: no Grappler (read when the step first runs)
                tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
                models[name] = Ours(objective, precision, jit)
                models[name].step()  # traces (and compiles) the step
                first_steps[name] = time.perf_counter() - start
                print(f"[{objective} {precision}] built {name} and ran its first step in "
                      f"{first_steps[name]:.0f} s", flush=True)
            if with_peer:
                models[PEER] = Peer(objective, precision, FLAGS.peer)
                first_steps[PEER] = models[PEER].first_step
            # Warm-up after every model is built: building another model made an earlier model's next step
            # several seconds slower (TensorFlow re-instantiates its graph), so no model is timed before all exist.
            for model in models.values():
                for _ in range(FLAGS.warmup):
                    model.step()
            times = alternate(models, FLAGS.rounds, "step")
            peer_times = np.array(times.get(PEER, [np.nan] * FLAGS.rounds))
            for name, seconds in times.items():
                seconds = np.array(seconds)
                step = float(np.median(seconds))
                row = {"objective": objective, "precision": precision, "model": name, "s_per_step": step,
                       "tokens_per_s": tokens / step, "mfu": flop / step / (limits[f"tf_{precision}"] * 1e9),
                       "ratio": float(np.median(peer_times / seconds)), "rounds": seconds.round(3).tolist(),
                       "first_step_s": first_steps[name]}
                rows.append(row)
                print(f"  {name:28s} {step:6.2f} s/step {tokens / step:7,.0f} tok/s  "
                      f"rounds {seconds.round(2).tolist()}", flush=True)
            if FLAGS.profile and objective == "electra":
                ours = next((m for n, m in models.items() if "tf.function" in n), None)
                if ours is not None:
                    wall, kinds = profile_step(ours)
                    profiles.append({"precision": precision, "wall": wall, "kinds": dict(kinds)})
            if FLAGS.breakdown_rounds and objective == "electra":
                parts = alternate(models, FLAGS.breakdown_rounds, "parts")
                for name, values in parts.items():
                    values = np.median(np.array(values), axis=0)
                    breakdowns.append({"precision": precision, "model": name, "parts": values.tolist(),
                                       "step": float(np.median(times[name]))})
            if with_peer:
                models[PEER].close()
            del models
            if FLAGS.graph and objective == "electra":
                graphs.append(step_graph(objective, precision))
            if FLAGS.memory:  # after the timing, one fresh process per configuration
                for row in rows:
                    if row["objective"] == objective and row["precision"] == precision:
                        side = "peer" if row["model"] == PEER else "ours"
                        row["peak_mb"] = measure_memory(f"{side}:{objective}:{precision}:{int('XLA' in row['model'])}")

    print(f"\nThroughput ({FLAGS.config}, batch {FLAGS.batch_size}, length {FLAGS.seq_length}; vs peer = the peer's "
          "s/step over this row's, median of the rounds; MFU against the same-precision oneDNN matmul above)")
    header = f"{'objective':9s} {'prec':4s} {'implementation':28s} {'s/step':>7s} {'tok/s':>7s} " \
             f"{'vs peer':>7s} {'MFU':>5s} {'peak MB':>8s} {'1st step':>8s}"
    print(header + "\n" + "-" * len(header))
    for row in rows:
        memory = f"{row['peak_mb']:8,.0f}" if row.get("peak_mb") else f"{'-':>8s}"
        ratio = f"{row['ratio']:6.2f}x" if np.isfinite(row["ratio"]) else f"{'-':>7s}"
        print(f"{row['objective']:9s} {row['precision']:4s} {row['model']:28s} {row['s_per_step']:7.2f} "
              f"{row['tokens_per_s']:7,.0f} {ratio} {row['mfu']:5.0%} {memory} {row['first_step_s']:7.1f}s")
    if breakdowns:
        print("\nBreakdown of the electra step (s, median; each part run and fetched on its own, so the sum "
              "exceeds the fused step a little)")
        header = f"{'prec':4s} {'implementation':28s} {'generator':>9s} {'sampling':>9s} {'discrim.':>9s} " \
                 f"{'optimizer':>9s} {'sum':>6s} {'step':>6s}"
        print(header + "\n" + "-" * len(header))
        for b in breakdowns:
            p = b["parts"]
            print(f"{b['precision']:4s} {b['model']:28s} {p[0]:9.3f} {p[1]:9.3f} {p[2]:9.3f} {p[3]:9.3f} "
                  f"{sum(p):6.2f} {b['step']:6.2f}")
    for profile in profiles:
        total = sum(profile["kinds"].values())
        print(f"\nProfile of our {profile['precision']} electra step without XLA: op time by kind (the two cores "
              f"overlap ops: {total:.2f} s of op time in a {profile['wall']:.2f} s step)")
        for kind, seconds in sorted(profile["kinds"].items(), key=lambda item: -item[1]):
            print(f"  {kind:38s} {seconds:6.2f} s  {seconds / total:4.0%}")
    for graph in graphs:
        phases, fusions = graph["phases"], graph["fusions"]
        if phases:
            print(f"\nFirst step of our {graph['precision']} electra step in a fresh process (s): " + ", ".join(
                f"{key} {value:.1f}" for key, value in phases.items()))
        if fusions:
            print(f"Ops of its graph and its shared block calls' after Grappler ({fusions['nodes']:,} nodes), fused "
                  "and not:")
            print("  " + ", ".join(f"{op} {count}" for op, count in fusions.items() if count and op != "nodes"))
    print(f"\nload average at the end {os.getloadavg()[0]:.1f} (timings are only comparable on an idle machine; "
          "the ratios, from alternating rounds, are steadier)")
    if FLAGS.json:
        from electra_tf.util.atomic import write_json
        write_json(FLAGS.json, {"matmul_gflops": limits, "rows": rows, "breakdown": breakdowns, "profiles": profiles,
                                "graphs": graphs, "parent_imported_torch": "torch" in sys.modules})


if __name__ == "__main__":
    app.run(main)
