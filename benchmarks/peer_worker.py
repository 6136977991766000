"""The benchmarks' Hugging Face peer, in its own worker process: TensorFlow and torch never share a process.

PyPI's default torch is a CUDA build with `nvidia-*` libraries; imported into a
process that already runs TensorFlow it crashed with a segmentation fault. So
the peer step (`HFPeer`: transformers + torch) runs in a persistent worker
started by `PeerProcess` and driven over a pipe, one JSON line per request and
per answer, and the benchmark alternates its rounds as before (the worker
times its own steps: one by one, `step`, or a burst of them back to back, `burst`,
as serving benchmarks time every path). This module imports neither TensorFlow nor electra_tf
nor, outside the worker, torch; the parent sends the configs and the batch as
plain values.

    worker = PeerProcess(kind="hf")       # or kind="stub": a NumPy step, for tests without torch
    worker.call("init", model=..., generator=..., pretraining=..., batch=..., precision="fp32", ...)
    seconds = worker.call("step")["seconds"]
    times = worker.call("burst", seconds=0.5, texts=[...])["times"]   # serving: calls back to back
    worker.close()

`init` takes a `role`: "pretraining" (the joint ELECTRA step, `HFPeer`), "finetuning"
(`HFFinetuningPeer`: a Trainer-style classification step), "serving" (`HFServingPeer`:
tokenizer + model on a request's texts, `step` with `texts=[...]`) or "runtime_serving"
(`RuntimeServingPeer`: the same from an ONNX file in ONNX Runtime or OpenVINO).
"""

import json
import os
import signal
import subprocess
import sys
import time
import types

import numpy as np


def _hf_config(config):
    """transformers' `ElectraConfig` for one of our `ElectraConfig`s (as a dict)."""
    import transformers
    c = types.SimpleNamespace(**config)
    return transformers.ElectraConfig(
        vocab_size=c.vocab_size, embedding_size=c.embedding_size, hidden_size=c.hidden_size,
        num_hidden_layers=c.num_layers, num_attention_heads=c.num_heads,
        intermediate_size=c.intermediate_size, hidden_act=c.hidden_act,
        hidden_dropout_prob=c.hidden_dropout, attention_probs_dropout_prob=c.attention_dropout,
        max_position_embeddings=c.max_position_embeddings, type_vocab_size=c.type_vocab_size,
        initializer_range=c.initializer_range, layer_norm_eps=c.layer_norm_eps)


def _scatter(ids, positions, used, values):
    """`ids` with `ids[b, positions[b, p]] = values[b, p]` where `used`; unused slots write a spare column."""
    import torch
    length = ids.shape[1]
    out = torch.cat([ids, ids.new_zeros(ids.shape[0], 1)], 1)
    out.scatter_(1, torch.where(used, positions, length), values)
    return out[:, :length]


class HFPeer:
    """The same step with `transformers.ElectraForMaskedLM` + `ElectraForPreTraining` in PyTorch."""

    def __init__(self, model, generator, pretraining, batch, precision, mask_id, special_ids):
        import torch
        import transformers

        torch.manual_seed(0)
        pc = types.SimpleNamespace(**pretraining)
        self.pc, self.bf16, self.electra, self.mask_id = pc, precision == "bf16", pc.objective == "electra", mask_id
        self.special = torch.tensor(sorted(set(special_ids) | {mask_id}))
        self.generator = transformers.ElectraForMaskedLM(_hf_config(generator))
        modules = [self.generator]
        if self.electra:
            self.discriminator = transformers.ElectraForPreTraining(_hf_config(model))
            shared = self.discriminator.electra.embeddings
            self.generator.electra.embeddings = shared  # the whole embedding block, as the original
            self.generator.generator_lm_head.weight = shared.word_embeddings.weight
            modules.append(self.discriminator)
        names = {}
        for module in modules:
            module.train()
            for name, parameter in module.named_parameters():  # shared parameters once
                names.setdefault(parameter, name)
        self.parameters = list(names)
        decay = [p for p, n in names.items() if not ("LayerNorm" in n or n.endswith("bias"))]
        no_decay = [p for p, n in names.items() if "LayerNorm" in n or n.endswith("bias")]
        self.optimizer = torch.optim.AdamW(
            [{"params": decay, "weight_decay": pc.weight_decay_rate}, {"params": no_decay, "weight_decay": 0.0}],
            lr=pc.learning_rate, betas=(0.9, 0.999), eps=pc.adam_epsilon, fused=True)
        warmup, total = pc.warmup_steps, pc.train_steps
        self.schedule = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer,
            lambda s: s / max(1, warmup) if s < warmup else max(0.0, 1 - (s - warmup) / max(1, total - warmup)))
        self.ids = torch.tensor(batch["input_ids"], dtype=torch.long)
        self.attention = torch.tensor(batch["attention_mask"], dtype=torch.long)
        self.types = torch.tensor(batch["token_type_ids"], dtype=torch.long)
        self.attention_implementation = self.generator.config._attn_implementation

    def _autocast(self):
        import torch
        return torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16)

    def mask_batch(self):
        """The same rules as `electra_tf.pretraining.masking.mask_tokens` (without replacement, 85 % [MASK])."""
        import torch
        pc, slots = self.pc, self.pc.max_predictions_per_seq  # (sent resolved)
        ids, attention = self.ids, self.attention
        length = ids.shape[1]
        candidates = (attention > 0) & ~torch.isin(ids, self.special)
        noise = torch.rand(ids.shape[0], length + slots)
        top, positions = torch.topk(torch.where(candidates, noise[:, :length], -1.0), slots, dim=1)
        count = torch.clamp(torch.round(attention.sum(1).float() * pc.mask_prob).long(), 1, slots)
        used = (top >= 0) & (torch.arange(slots)[None, :] < count[:, None])
        positions = torch.where(used, positions, 0)
        labels = torch.gather(ids, 1, positions)
        new_ids = torch.where(noise[:, length:] < pc.mask_token_rate, self.mask_id, labels)
        return _scatter(ids, positions, used, new_ids), positions, used.float(), labels

    def _generator_loss(self):
        import torch
        masked, positions, weights, labels = self.mask_batch()
        with self._autocast():
            hidden = self.generator.electra(masked, attention_mask=self.attention,
                                            token_type_ids=self.types).last_hidden_state
            hidden = torch.gather(hidden, 1, positions[:, :, None].expand(-1, -1, hidden.shape[-1]))
            logits = self.generator.generator_lm_head(self.generator.generator_predictions(hidden)).float()
        per_slot = torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten(), reduction="none")
        mlm = (per_slot * weights.flatten()).sum() / (weights.sum() + 1e-6)
        return self.pc.gen_weight * mlm, (logits, positions, weights)

    def _sample(self, logits, positions, weights):
        import torch
        with torch.no_grad():
            gumbel = -torch.log(-torch.log(torch.rand(logits.shape) + 1e-9) + 1e-9)
            sampled = torch.argmax(logits / self.pc.temperature + gumbel, -1)
            return _scatter(self.ids, positions, weights > 0, sampled)

    def _discriminator_loss(self, corrupted):
        import torch
        real = self.attention.float()
        labels = (corrupted != self.ids).float() * real
        with self._autocast():
            logits = self.discriminator(corrupted, attention_mask=self.attention,
                                        token_type_ids=self.types).logits.float()
        per_token = torch.nn.functional.binary_cross_entropy_with_logits(logits, labels, reduction="none")
        return self.pc.disc_weight * (per_token * real).sum() / (real.sum() + 1e-6)

    def _update(self):
        import torch
        torch.nn.utils.clip_grad_norm_(self.parameters, self.pc.clip_norm)
        self.optimizer.step()
        self.schedule.step()
        self.optimizer.zero_grad(set_to_none=True)

    def step(self):
        loss, (logits, positions, weights) = self._generator_loss()
        if self.electra:
            loss = loss + self._discriminator_loss(self._sample(logits.detach(), positions, weights))
        loss.backward()
        self._update()
        return {"loss": float(loss.detach())}

    def parts(self):
        """The same step in four timed parts; one backward per network gives the same gradients."""
        clock = [time.perf_counter()]
        loss, (logits, positions, weights) = self._generator_loss()
        loss.backward()
        clock.append(time.perf_counter())
        if self.electra:
            corrupted = self._sample(logits.detach(), positions, weights)
            clock.append(time.perf_counter())
            self._discriminator_loss(corrupted).backward()
            clock.append(time.perf_counter())
        else:
            clock += [clock[-1], clock[-1]]
        self._update()
        clock.append(time.perf_counter())
        return np.diff(clock).tolist()


def _electra_tokenizer(vocab_file, lowercase):
    """transformers' fast WordPiece tokenizer on our vocabulary (the same ids as ours)."""
    import transformers
    # Positional: transformers 4 names it `vocab_file`, 5 `vocab`, and 5 ignores `vocab_file=` (every piece [UNK]).
    return transformers.ElectraTokenizerFast(vocab_file, do_lower_case=lowercase)


def _classifier(model, num_labels):
    import torch
    import transformers
    torch.manual_seed(0)
    config = _hf_config(model)
    config.num_labels = num_labels
    model = transformers.ElectraForSequenceClassification(config)
    with torch.no_grad():  # non-zero biases, as a trained model's and ours (`serving.trained_like_biases`)
        for name, parameter in model.named_parameters():
            if name.endswith("bias"):
                parameter.normal_(0.0, 0.02)
    return model


class HFFinetuningPeer:
    """Fine-tuning as transformers' `Trainer` runs it: `ElectraForSequenceClassification`, texts tokenized
    up front (truncated at `max_seq_length`), shuffled batches padded to their longest by
    `DataCollatorWithPadding`, AdamW and gradient clipping at 1.0; fp32."""

    def __init__(self, model, vocab_file, lowercase, texts, labels, batch_size, max_seq_length, learning_rate,
                 num_labels=2):
        import torch
        import transformers
        self.model = _classifier(model, num_labels)
        self.model.train()
        tokenizer = _electra_tokenizer(vocab_file, lowercase)
        encoded = tokenizer(texts, truncation=True, max_length=max_seq_length)
        features = [{"input_ids": ids, "attention_mask": mask, "token_type_ids": types, "labels": label}
                    for ids, mask, types, label in zip(encoded["input_ids"], encoded["attention_mask"],
                                                       encoded["token_type_ids"], labels)]
        # The Trainer's loader: shuffled each epoch, full batches, padded by the collator.
        self.loader = torch.utils.data.DataLoader(features, batch_size=batch_size, shuffle=True, drop_last=True,
                                                  collate_fn=transformers.DataCollatorWithPadding(tokenizer))
        self.batches = iter(())
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=learning_rate, weight_decay=0.01)

    def step(self):
        import torch
        batch = next(self.batches, None)
        if batch is None:  # a new epoch
            self.batches = iter(self.loader)
            batch = next(self.batches)
        loss = self.model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        return {"loss": float(loss.detach()), "tokens": int(batch["input_ids"].numel())}


class HFServingPeer:
    """Serving a sequence classifier as transformers users do: the fast tokenizer (padding to the request's
    longest text, truncation at `max_seq_length`), the model under `inference_mode`, softmax."""

    def __init__(self, model, vocab_file, lowercase, max_seq_length, num_labels=2):
        self.model = _classifier(model, num_labels).eval()
        self.tokenizer = _electra_tokenizer(vocab_file, lowercase)
        self.max_seq_length = max_seq_length

    def step(self, texts=("warm-up",)):
        import torch
        with torch.inference_mode():
            inputs = self.tokenizer(list(texts), padding=True, truncation=True, max_length=self.max_seq_length,
                                    return_tensors="pt")
            probabilities = torch.softmax(self.model(**inputs).logits, -1)
        return {"label_id": probabilities.argmax(-1).tolist(), "tokens": int(inputs["input_ids"].shape[1])}


def _transformers_onnx(model, path):
    """Exports a transformers classifier to ONNX as optimum does (ids, mask and types in, logits out; batch and
    length dynamic; opset 17), with torch's TorchScript exporter."""
    import torch
    example = torch.ones(1, 8, dtype=torch.long)
    axes = {0: "batch", 1: "sequence"}
    torch.onnx.export(model, (example, example, torch.zeros_like(example)), path, opset_version=17,
                      input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["logits"],
                      dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes,
                                    "logits": {0: "batch"}}, dynamo=False)
    return path


def _fused(path, model, fused_path):
    """The ONNX file at `path` with ONNX Runtime's transformer fusions (as optimum's O2: Attention,
    SkipLayerNormalization, BiasGelu, EmbedLayerNormalization; `onnxruntime.transformers.optimizer`)."""
    from onnxruntime.transformers.optimizer import optimize_model
    optimized = optimize_model(path, model_type="bert", num_heads=model["num_heads"],
                               hidden_size=model["hidden_size"], opt_level=0)
    optimized.save_model_to_file(fused_path)
    return fused_path


class RuntimeServingPeer:
    """Serving a sequence classifier from an ONNX file in ONNX Runtime or OpenVINO, fed by transformers' fast
    tokenizer, as CPU deployments serve small encoders: the transformers model exported to ONNX (`onnx=None`),
    or ours (`onnx=`: the `model.onnx` of `electra-export --format=onnx`, which outputs probabilities);
    `fused=True`: the file first through ONNX Runtime's transformer fusions, as optimum's O2 export.

    `precision="int8"`: ONNX Runtime's dynamic quantization (int8 matmul weights, activations quantized per
    call) in ONNX Runtime; NNCF's int8 weight compression in OpenVINO. `threads`: the runtime's intra-op threads
    (0: its default). `text_model=True`: `onnx` is our `text_model.onnx` (its tokenizer inside, as
    onnxruntime-extensions' ops), given the raw texts in ONNX Runtime; no tokenizer runs beside it."""

    def __init__(self, model, vocab_file, lowercase, max_seq_length, runtime, precision="fp32", onnx=None,
                 threads=0, num_labels=2, fused=False, text_model=False):
        import tempfile
        self.tokenizer = _electra_tokenizer(vocab_file, lowercase)
        self.max_seq_length, self.ours = max_seq_length, onnx is not None
        folder = tempfile.mkdtemp(prefix="runtime_peer_")
        path = onnx or _transformers_onnx(_classifier(model, num_labels).eval(), os.path.join(folder, "fp32.onnx"))
        if fused:
            path = _fused(path, model, os.path.join(folder, "fused.onnx"))
        if runtime == "onnxruntime":
            import onnxruntime
            from onnxruntime import quantization
            if precision == "int8":
                quantized = os.path.join(folder, "int8.onnx")
                # A fused graph's contrib ops have no ONNX shape inference: their outputs are float (DefaultTensorType)
                options = {"op_types_to_quantize": ["MatMul", "Attention"],
                           "extra_options": {"DefaultTensorType": 1}} if fused else {}
                quantization.quantize_dynamic(path, quantized, weight_type=quantization.QuantType.QInt8, **options)
                path = quantized
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = threads
            if text_model:
                import onnxruntime_extensions
                options.register_custom_ops_library(onnxruntime_extensions.get_library_path())
            session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
            self.dtypes = {i.name: np.int64 if "int64" in i.type else np.int32 if "int" in i.type else object
                           for i in session.get_inputs()}
            output = "probabilities" if self.ours else "logits"
            self.run = lambda feeds: session.run([output], feeds)[0]
        elif runtime == "openvino":
            import openvino
            core = openvino.Core()
            network = core.read_model(path)
            if precision == "int8":
                import nncf
                network = nncf.compress_weights(network)  # int8 weights, the default mode
            compiled = core.compile_model(network, "CPU", {"INFERENCE_NUM_THREADS": threads} if threads else {})
            self.dtypes = {i.get_any_name(): np.int64 if i.get_element_type() == openvino.Type.i64 else np.int32
                           for i in compiled.inputs}
            output = next(o for o in compiled.outputs if ("probabilities" if self.ours else "logits") in o.get_names())
            self.run = lambda feeds: compiled(feeds)[output]
        else:
            raise ValueError(f"runtime must be onnxruntime or openvino, got {runtime!r}")

    def step(self, texts=("warm-up",)):
        if "text" in self.dtypes:  # our text model: raw text in
            outputs = self.run({"text": np.array(list(texts), dtype=object)})
            return {"label_id": outputs.argmax(-1).tolist(), "tokens": None}
        inputs = self.tokenizer(list(texts), padding=True, truncation=True, max_length=self.max_seq_length,
                                return_tensors="np")
        outputs = self.run({name: inputs[name].astype(dtype) for name, dtype in self.dtypes.items()})
        if not self.ours:  # softmax of the logits
            outputs = np.exp(outputs - outputs.max(-1, keepdims=True))
            outputs /= outputs.sum(-1, keepdims=True)
        return {"label_id": outputs.argmax(-1).tolist(), "tokens": int(inputs["input_ids"].shape[1])}


class StubPeer:
    """A stand-in peer for tests: the same requests, answered with a small NumPy matmul (no torch)."""

    def __init__(self, batch=None, texts=None, **settings):
        del settings
        self.ids = np.asarray(batch["input_ids"] if batch else [[len(t) for t in texts or ["stub"]]], np.float32)

    def step(self, texts=None):
        return {"loss": float((self.ids @ self.ids.T).mean()), "tokens": len(texts or [])}

    def parts(self):
        return [float(self.step()["loss"] * 0) + 1e-4] * 4


PEERS = {"pretraining": HFPeer, "finetuning": HFFinetuningPeer, "serving": HFServingPeer,
         "runtime_serving": RuntimeServingPeer}


def versions(kind):
    if kind == "stub":
        return {"peer": "stub (NumPy)", "threads": 1}
    import torch
    import transformers
    return {"peer": f"torch {torch.__version__} ({torch.get_num_threads()} threads), transformers "
                    f"{transformers.__version__}", "threads": torch.get_num_threads()}


def matmul_gflops(kind, size):
    """GFLOP/s of a size³ matmul (median of 5) in fp32 and bf16."""
    if kind == "stub":
        return {}
    import torch
    out = {}
    for precision, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        a, b = torch.randn(size, size, dtype=dtype), torch.randn(size, size, dtype=dtype)
        a @ b
        times = []
        for _ in range(5):
            start = time.perf_counter()
            a @ b
            times.append(time.perf_counter() - start)
        out[precision] = 2 * size ** 3 / float(np.median(times)) / 1e9
    return out


def peak_rss_mb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmHWM:"))


def burst(call, seconds):
    """The per-call seconds of `call` run back to back for about `seconds` (at least 3 calls), as a runtime runs
    alone in a tight loop; one call first, untimed, wakes its thread pool (and warms the caches) after whatever ran
    before. `benchmarks/serving.py` times every path so, ours in its process and each peer in its worker."""
    call()
    times, deadline = [], time.perf_counter() + seconds
    while len(times) < 3 or time.perf_counter() < deadline:
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return times


def serve(kind, threads=0):
    """The worker's loop: one JSON request per line on stdin, one JSON answer per line on the protocol pipe."""
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # the libraries' prints go to stderr, not into the protocol
    if threads and kind == "hf":
        import torch
        torch.set_num_threads(threads)
    peer = None
    for line in sys.stdin:
        request = json.loads(line)
        command = request.pop("command")
        try:
            if command == "init":
                start = time.perf_counter()
                role = request.pop("role", "pretraining")
                peer = (PEERS[role] if kind == "hf" else StubPeer)(**request)
                peer.step()
                answer = {"first_step": time.perf_counter() - start}
            elif command == "step":
                start = time.perf_counter()
                result = peer.step(**request)
                answer = {"seconds": time.perf_counter() - start, **result}
            elif command == "burst":
                answer = {"times": burst(lambda: peer.step(**request), request.pop("seconds"))}
            elif command == "parts":
                answer = {"parts": [float(p) for p in peer.parts()]}
            elif command == "versions":
                answer = versions(kind)
            elif command == "matmul":
                answer = matmul_gflops(kind, request["size"])
            elif command == "peak":
                answer = {"peak_mb": peak_rss_mb()}
            elif command == "exit":
                break
            else:
                answer = {"error": f"unknown command {command!r}"}
        except Exception as e:  # noqa: BLE001 -- reported to the parent, which stops
            answer = {"error": f"{type(e).__name__}: {e}"}
        protocol.write(json.dumps(answer) + "\n")
        protocol.flush()


class PeerProcess:
    """The parent's side: starts `python peer_worker.py <kind> <threads>` (`python`: another interpreter, e.g.
    a virtual environment with torch and the runtimes) and sends it requests.

    Between requests the worker is stopped (SIGSTOP; SIGCONT for the next request): idle thread pools spin
    (OpenMP's, ONNX Runtime's, TBB's), and a spinning idle worker beside the one being timed made torch 35×
    slower here. A stopped process takes no CPU, so each path is timed alone, whatever others are loaded."""

    def __init__(self, kind="hf", threads=0, python=None):
        self.process = subprocess.Popen([python or sys.executable, os.path.abspath(__file__), kind, str(threads)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def call(self, command, **arguments):
        """Sends one request and waits for its answer; a RuntimeError if the worker failed or died."""
        self.process.send_signal(signal.SIGCONT)
        self.process.stdin.write(json.dumps({"command": command, **arguments}) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if line:
            self.process.send_signal(signal.SIGSTOP)
        if not line:
            raise RuntimeError(f"the peer worker exited (code {self.process.wait()}) during {command!r}")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"peer worker, {command}: {answer['error']}")
        return answer

    def close(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.stdin.write(json.dumps({"command": "exit"}) + "\n")
            self.process.stdin.close()
            self.process.wait(timeout=60)


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]))
