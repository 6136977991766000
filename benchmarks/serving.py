"""Latency and throughput of an exported raw-text signature beside the in-process Keras model.

    python benchmarks/serving.py [--config=electra_small] [--max_seq_length=128] [--vocab=vocab.txt]

An ELECTRA-Small sequence classifier (random weights: speed does not depend on
them) is exported with `electra_tf.export.export_model` and reloaded as TF
Serving would run it (`tf.saved_model.load`, only TF and tf-text). On the same
texts (default-corpus sentences, cut to `max_seq_length` tokens) and at batch
sizes 1 and 32, it times:

1. export, `serving_default`: raw text in (tokenization in the graph);
2. export, `serve_ids`: the same texts' token ids in (the model alone);
3. in process: `tokenizer.encode` then Keras `predict_on_batch` (raw text in);
4. in process: `predict_on_batch` on the ids (the model alone);
5. the in-graph featurization alone (`tf.function` of what `serving_default` runs before the model).

Reports p50/p95 latency per call and throughput (texts/s), and tokenization's
share of the exported raw-text time: (1 - 2) / 1, and 5 / 1. The paths take
turns call by call, so a shared machine's changing load hits them alike.
"""

import os
import shutil
import tempfile
import time

import numpy as np
from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_string("config", "electra_small", "A run config (name in configs/ or a JSON path) for the model size.")
flags.DEFINE_integer("max_seq_length", 128, "Sequence length of the export.")
flags.DEFINE_string("vocab", None, "vocab.txt (default: learned from the default corpus, --vocab_size tokens).")
flags.DEFINE_integer("vocab_size", 8000, "Vocabulary learned when --vocab is not given.")
flags.DEFINE_list("batch_sizes", ["1", "32"], "Batch sizes to time.")
flags.DEFINE_float("seconds", 8.0, "Timed seconds per path and batch size (after warm-up).")


def latencies(functions, seconds):
    """Per-call seconds of each function, after 3 warm-up calls each, for about `seconds` each.

    The functions take turns (one call each per round), so a change in the
    machine's load (it may be shared) hits them all alike.
    """
    for function in functions.values():
        for _ in range(3):
            function()
    times = {name: [] for name in functions}
    deadline = time.perf_counter() + seconds * len(functions)
    while time.perf_counter() < deadline or min(map(len, times.values())) < 5:
        for name, function in functions.items():
            start = time.perf_counter()
            function()
            times[name].append(time.perf_counter() - start)
    return {name: np.array(values) for name, values in times.items()}


def corpus_lines(path):
    """Sentence lines (4 words or more) of the default corpus (docstrings), written to `path`."""
    from electra_tf.data.default_corpus import write_default_corpus

    write_default_corpus(path)
    with open(path, encoding="utf-8") as f:
        return [line.strip() for line in f if len(line.split()) >= 4]


def main(argv):
    del argv
    import keras
    import tensorflow as tf

    from electra_tf import ElectraForSequenceClassification, featurize, load_run_config
    from electra_tf.export import export_model, load_export
    from electra_tf.tokenization import ElectraTokenizer, build_vocabulary

    work = tempfile.mkdtemp(prefix="electra_serving_bench_")
    try:
        corpus = os.path.join(work, "corpus.txt")
        texts = corpus_lines(corpus)
        texts = [texts[i] for i in np.random.default_rng(0).permutation(len(texts))[:256]]
        tokenizer = ElectraTokenizer(FLAGS.vocab or build_vocabulary([corpus], FLAGS.vocab_size))
        model_config, _ = load_run_config(FLAGS.config)
        model_config = model_config.replace(vocab_size=tokenizer.vocabulary_size())
        keras.utils.set_random_seed(0)
        model = ElectraForSequenceClassification(model_config, num_labels=2)
        length = FLAGS.max_seq_length
        path = export_model(model, tokenizer, work, model_name="bench", max_seq_length=length)
        served = load_export(path)
        raw_text, ids = served.signatures["serving_default"], served.signatures["serve_ids"]
        featurize_only = tf.function(lambda t: featurize.encode(tokenizer, length, t),
                                     input_signature=[tf.TensorSpec([None], tf.string)])

        lengths = tokenizer(tf.constant(texts)).row_lengths().numpy()
        print(f"model: {FLAGS.config} ({model.count_params():,} parameters), vocabulary {tokenizer.vocabulary_size()}, "
              f"max_seq_length {length}; texts: default-corpus lines, {np.mean(lengths):.0f} tokens on average "
              f"({np.mean(lengths > length - 2):.0%} cut); TF threads: default; CPUs: {os.cpu_count()}; "
              f"load average {os.getloadavg()[0]:.1f}")
        header = f"{'batch':>5}  {'path':<44} {'p50 ms':>8} {'p95 ms':>8} {'texts/s':>8}"
        print(header)
        print("-" * len(header))
        for batch_size in map(int, FLAGS.batch_sizes):
            batch = tf.constant(texts[:batch_size])
            encoded = tokenizer.encode(batch, sequence_length=length)
            encoded_numpy = {key: value.numpy() for key, value in encoded.items()}
            runs = {
                "export serving_default (raw text)": lambda: raw_text(text=batch),
                "export serve_ids (token ids)": lambda: ids(**encoded),
                "Keras in process: encode + predict_on_batch": lambda: model.predict_on_batch(
                    tokenizer.encode(batch, sequence_length=length)),
                "Keras in process: predict_on_batch (ids)": lambda: model.predict_on_batch(encoded_numpy),
                "in-graph tokenization alone": lambda: featurize_only(batch),
            }
            medians = {}
            for name, times in latencies(runs, FLAGS.seconds).items():
                medians[name] = np.median(times)
                p50, p95 = 1e3 * np.median(times), 1e3 * np.percentile(times, 95)
                print(f"{batch_size:>5}  {name:<44} {p50:8.2f} {p95:8.2f} {batch_size * len(times) / times.sum():8.1f}")
            total = medians["export serving_default (raw text)"]
            print(f"{batch_size:>5}  tokenization share of the exported raw-text time: "
                  f"{(total - medians['export serve_ids (token ids)']) / total:.0%} (raw text - ids), "
                  f"{medians['in-graph tokenization alone'] / total:.0%} (tokenization alone)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    app.run(main)
