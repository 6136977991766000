"""Data pipeline throughput beside what an ELECTRA-Small training step consumes.

    python benchmarks/data_pipeline.py [--corpus=FILE] [--seq_length=128] [--batch_size=32]

Measures, in one run on this machine:
1. building TFRecord shards (MB of text per second) with the local builder in 1 and 2 processes, and with the
   Beam pipeline (`--runner=beam`) on the DirectRunner with 1 worker and 2 worker processes (its shards are
   checked byte-identical to the local builder's), with an estimate of the wall time for 40 GB on N workers;
2. reading them back (`pretraining_dataset`, examples/s);
3. packing on the fly (`streaming_dataset`, examples/s);
4. an ELECTRA-Small RTD training step (fp32, AdamW) in examples/s: the rate the reader must beat.
The corpus defaults to the embedded default corpus; the vocabulary is learned from it.
"""

import hashlib
import logging
import os
import shutil
import tempfile
import time

from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_string("corpus", None, "A text corpus (default: the embedded default corpus).")
flags.DEFINE_integer("seq_length", 128, "Example length.")
flags.DEFINE_integer("batch_size", 32, "Batch size of the reader and of the training step.")
flags.DEFINE_integer("vocab_size", 8000, "Vocabulary learned from the corpus.")
flags.DEFINE_integer("train_steps", 6, "Timed ELECTRA-Small steps (after 2 warm-up steps).")
flags.DEFINE_integer("build_repeat", 60, "The build is timed on the corpus repeated this many times "
                     "(process start-up would dominate a small corpus).")
flags.DEFINE_bool("beam", True, "Time the Beam pipeline too (needs the 'beam' extra).")
flags.DEFINE_bool("only_build", False, "Time the shard builds only (not the readers nor the training step).")

# The Beam runs: (label, pipeline options).
BEAM_RUNS = (("1 worker (in-process)", []),
             ("2 workers (processes)", ["--direct_num_workers=2", "--direct_running_mode=multi_processing"]))


def shard_digests(folder):
    return {name: hashlib.sha256(open(os.path.join(folder, name), "rb").read()).hexdigest()
            for name in sorted(os.listdir(folder)) if "tfrecord" in name}


def scaling_estimate(rate_one_worker, efficiency, corpus_gb=40, workers=(8, 32, 128), startup_seconds=300):
    """Lines estimating a `corpus_gb` build on N workers from the measured 1-worker rate."""
    lines = [f"estimate for {corpus_gb} GB on N workers, assuming: each worker has a core of its own and packs at "
             f"the 1-worker rate measured here ({rate_one_worker:.2f} MB/s, on this shared machine: pessimistic); "
             "the corpus is text files (read in pieces of 4 MB) or at least N files of another kind (read whole), "
             "and num_shards >= N (a shard is packed by one worker); "
             f"{startup_seconds // 60} min of cluster start-up. 'linear': the rate times N; 'as measured': "
             f"times N at the 2-worker efficiency measured here ({efficiency:.0%}, two workers sharing 2 busy "
             "cores)."]
    for n in workers:
        linear, measured = ((corpus_gb * 1000 / (rate_one_worker * e * n) + startup_seconds) / 3600
                            for e in (1.0, efficiency))
        lines.append(f"  {n:4d} workers: {linear:6.1f} h linear, {measured:6.1f} h as measured")
    return lines


def timed(function):
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


def examples_per_second(dataset, batches, batch_size):
    iterator = iter(dataset)
    next(iterator)  # warm-up: file opening, tracing
    _, seconds = timed(lambda: [next(iterator) for _ in range(batches)])
    return batches * batch_size / seconds


def training_examples_per_second(data, vocab_size, seq_length, batch_size, steps):
    import keras

    from electra_tf import ElectraPretrainer, load_run_config, pretraining_optimizer
    model_config, pretraining_config = load_run_config("electra_small")
    model_config = model_config.replace(vocab_size=vocab_size)
    pretraining_config = pretraining_config.replace(max_seq_length=seq_length)
    keras.utils.set_random_seed(0)
    pretrainer = ElectraPretrainer(model_config, pretraining_config, mask_token_id=4, special_token_ids=[0, 2, 3, 4])
    pretrainer.compile(optimizer=pretraining_optimizer(pretraining_config))
    batch = next(iter(data))
    pretrainer.fit(x=batch, batch_size=batch_size, epochs=2, verbose=0)  # warm-up, tracing
    _, seconds = timed(lambda: pretrainer.fit(x=batch, batch_size=batch_size, epochs=steps, verbose=0))
    return steps * batch_size / seconds


def main(argv):
    del argv
    logging.getLogger("apache_beam").setLevel(logging.ERROR)  # the DirectRunner's workers log every step
    from electra_tf.data.default_corpus import write_default_corpus
    from electra_tf.data.tfrecord_dataset import pretraining_dataset
    from electra_tf.data.pretraining_data import build_pretraining_shards
    from electra_tf.data.streaming import streaming_dataset, text_documents
    from electra_tf.text.vocabulary import save_vocabulary
    from electra_tf.text.vocabulary_learning import build_vocabulary

    work = tempfile.mkdtemp(prefix="electra_data_bench_")
    try:
        corpus = FLAGS.corpus or os.path.join(work, "corpus.txt")
        if not FLAGS.corpus:
            write_default_corpus(corpus)
        megabytes = os.path.getsize(corpus) / 1e6
        vocab = os.path.join(work, "vocab.txt")
        vocabulary = build_vocabulary([corpus], FLAGS.vocab_size)
        save_vocabulary(vocabulary, vocab)
        print(f"corpus: {megabytes:.1f} MB, vocabulary: {len(vocabulary)} tokens, sequence length {FLAGS.seq_length}")

        big_corpus = os.path.join(work, "corpus_repeated.txt")
        with open(corpus, "rb") as source, open(big_corpus, "wb") as target:
            text = source.read()
            for _ in range(FLAGS.build_repeat):
                target.write(text + b"\n\n")
        build = {}
        built_mb = megabytes * FLAGS.build_repeat
        rows = []
        for processes in (1, 2):
            out = os.path.join(work, f"shards_{processes}")
            shards, seconds = timed(lambda: build_pretraining_shards(
                [big_corpus], vocab, out, max_seq_length=FLAGS.seq_length, num_shards=8,
                num_processes=processes))
            build[processes] = built_mb / seconds
            examples = sum(s["examples"] for s in shards.values())
            rows.append((f"local, {processes} process(es)", build[processes], seconds, examples, "reference"))
        if FLAGS.beam:
            from electra_tf.data.beam_pipeline import build_pretraining_shards_on_beam
            reference = shard_digests(os.path.join(work, "shards_1"))
            for label, options in BEAM_RUNS:
                out = os.path.join(work, f"beam_{len(rows)}")
                shards, seconds = timed(lambda: build_pretraining_shards_on_beam(
                    [big_corpus], vocab, out, max_seq_length=FLAGS.seq_length, num_shards=8, beam_options=options))
                build[label] = built_mb / seconds
                examples = sum(s["examples"] for s in shards.values())
                same = "byte-identical" if shard_digests(out) == reference else "DIFFERENT"
                rows.append((f"beam, {label}", build[label], seconds, examples, same))
                shutil.rmtree(out, ignore_errors=True)
        print(f"\nshard build on {built_mb:.0f} MB of text (the corpus x{FLAGS.build_repeat}), 8 shards:")
        print("| builder | MB/s | seconds | examples | shards vs local, 1 process | ratio to local, 1 process |")
        print("|---|---|---|---|---|---|")
        for label, rate, seconds, examples, same in rows:
            print(f"| {label} | {rate:.2f} | {seconds:.1f} | {examples:,} | {same} | {rate / build[1]:.2f}x |")
        if FLAGS.beam:
            one, two = build[BEAM_RUNS[0][0]], build[BEAM_RUNS[1][0]]
            print(f"beam, 2 workers / local, 2 processes: {two / build[2]:.2f}x")
            print("\n".join(scaling_estimate(one, min(1.0, two / (2 * one)))))
        if FLAGS.only_build:
            return

        pattern = os.path.join(work, "shards_1", "*tfrecord*")
        reader = examples_per_second(
            pretraining_dataset(pattern, FLAGS.batch_size, FLAGS.seq_length, seed=0), 200, FLAGS.batch_size)
        stream = examples_per_second(
            streaming_dataset(text_documents([corpus]), vocab, FLAGS.batch_size, FLAGS.seq_length), 30,
            FLAGS.batch_size)
        consumer = training_examples_per_second(
            pretraining_dataset(pattern, FLAGS.batch_size, FLAGS.seq_length, seed=0), len(vocabulary),
            FLAGS.seq_length, FLAGS.batch_size, FLAGS.train_steps)
        print(f"TFRecord reader:         {reader:10,.0f} examples/s")
        print(f"streaming (on the fly):  {stream:10,.0f} examples/s")
        print(f"ELECTRA-Small fp32 step: {consumer:10,.1f} examples/s (batch {FLAGS.batch_size})")
        print(f"reader / training step:    {reader / consumer:8,.0f}x")
        print(f"streaming / training step: {stream / consumer:8,.0f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    app.run(main)
