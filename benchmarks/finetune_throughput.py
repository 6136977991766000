"""Fine-tuning throughput on real-length texts: electra_tf length-aware, electra_tf padded to 128, transformers.

    pip install -e .[bench]     # the peer: transformers and CPU torch (never needed by the tests)
    python benchmarks/finetune_throughput.py [--models=electra_small:32,electra_base:16] [--steps=12]

One machine, one script, the same fine-tuning step (sequence classification, two labels, dropout on, AdamW,
gradient clipping) on the same texts (the default corpus's sentences, or --train_file):
- ours, length-aware (the default): `electra_tf.finetune` itself, batches grouped by length and padded to
  their bucket (a multiple of 16);
- ours, `--pad_to_max_length`: every batch padded to --max_seq_length (what fine-tuning did before);
- the peer, as `transformers.Trainer` runs it: texts tokenized up front by `ElectraTokenizerFast` on the same
  vocabulary, shuffled batches padded to their longest (`DataCollatorWithPadding`), `torch.optim.AdamW`,
  fp32, in its own worker process (`benchmarks/peer_worker.py`; TensorFlow and PyPI's torch never share one).
Ours runs through `finetune()` with a callback that times each step (from the batch's start to its end, the
input pipeline included) and, after each timed step, has the peer run one step: A/B/A/B, so both see the
same load. The weights are random: speed does not depend on them. Ratios are medians of step times.
"""

import csv
import os
import shutil
import tempfile
import time

import numpy as np
from absl import app, flags
from peer_worker import PeerProcess

FLAGS = flags.FLAGS
flags.DEFINE_list("models", ["electra_small:32", "electra_base:16"],
                  "Model shapes to time, each `config:batch_size` (a config name in configs/ or a JSON path).")
flags.DEFINE_integer("max_seq_length", 128, "Texts are truncated to this many tokens (and padded to it when fixed).")
flags.DEFINE_integer("steps", 12, "Timed steps per path (each followed by one peer step).")
flags.DEFINE_integer("warmup", 3, "Untimed first steps of ours (tracing: the length-aware step is traced for a "
                     "few shapes before Keras relaxes them).")
flags.DEFINE_string("train_file", None, "A CSV with a `text` column (default: the default corpus's sentences).")
flags.DEFINE_integer("vocab_size", 8000, "WordPiece vocabulary learned from the texts.")
flags.DEFINE_float("learning_rate", 1e-4, "Peak learning rate (both sides).")
flags.DEFINE_enum("peer", "hf", ["hf", "stub", "none"], "hf: transformers + torch in a worker process; stub: a "
                  "NumPy stand-in over the same pipe (tests); none: ours only.")
flags.DEFINE_string("json", None, "Also write all figures to this JSON file.")

PEER = "transformers (dynamic padding)"
OURS = {False: "electra_tf (length-aware)", True: "electra_tf (padded to max)"}


def sentences(work):
    """The texts: --train_file's `text` column, or the default corpus's lines of 4 words or more."""
    from electra_tf.data.default_corpus import write_default_corpus

    if FLAGS.train_file:
        with open(FLAGS.train_file, encoding="utf-8", newline="") as f:
            return [row["text"] for row in csv.DictReader(f)]
    path = os.path.join(work, "corpus.txt")
    write_default_corpus(path)
    with open(path, encoding="utf-8") as f:
        return [line.strip() for line in f if len(line.split()) >= 4]


def step_timer(warmup, peer, ours, peer_answers):
    """A Keras `LambdaCallback` appending the seconds of each of our steps to `ours` and, after each timed
    one, running a peer step (its answer appended to `peer_answers`)."""
    import keras

    start = []

    def end(batch, logs):
        ours.append(time.perf_counter() - start.pop())
        if batch >= warmup and peer is not None:
            peer_answers.append(peer.call("step"))

    return keras.callbacks.LambdaCallback(on_train_batch_begin=lambda batch, logs: start.append(time.perf_counter()),
                                          on_train_batch_end=end)


def task_data(texts, work):
    """`(vocab.txt, train.csv, labels)` for `texts`: a vocabulary learned from them and random labels."""
    from electra_tf.text.vocabulary import save_vocabulary
    from electra_tf.text.vocabulary_learning import build_vocabulary

    corpus, vocab, train = (os.path.join(work, name) for name in ("texts.txt", "vocab.txt", "train.csv"))
    with open(corpus, "w", encoding="utf-8") as f:
        f.write("\n".join(texts) + "\n")
    save_vocabulary(build_vocabulary([corpus], FLAGS.vocab_size), vocab)
    labels = np.random.default_rng(0).integers(0, 2, len(texts)).tolist()
    with open(train, "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows([("text", "label"), *zip(texts, labels)])
    return vocab, train, labels


def time_model(name, batch_size, texts, data, work):
    """Ours (length-aware and padded) and the peer on `name`'s shape; returns the rows."""
    import keras

    from electra_tf import ElectraDiscriminator, FinetuningConfig, finetune, make_task
    from electra_tf.text.tokenizer import WordPieceTokenizer
    from electra_tf.checkpoints.ours import write_run_folder
    from electra_tf.config import PretrainingConfig, load_run_config
    from electra_tf.text.vocabulary import load_vocabulary

    vocab, train, labels = data
    tokenizer = WordPieceTokenizer(vocab)
    model_config = load_run_config(name)[0].replace(vocab_size=tokenizer.vocabulary_size())
    pretrained = os.path.join(work, name)
    keras.utils.set_random_seed(0)
    write_run_folder(pretrained, {"discriminator": ElectraDiscriminator(model_config)}, model_config,
                     PretrainingConfig(), load_vocabulary(vocab))

    peer = None
    if FLAGS.peer != "none":
        peer = PeerProcess(FLAGS.peer)
        peer.call("init", role="finetuning", model=model_config.to_dict(), vocab_file=vocab, lowercase=True,
                  texts=texts, labels=labels, batch_size=batch_size, max_seq_length=FLAGS.max_seq_length,
                  learning_rate=FLAGS.learning_rate)
    rows, peer_times = [], []
    try:
        for pad in (False, True):
            epochs = (FLAGS.warmup + FLAGS.steps + 0.5) / (len(texts) // batch_size)
            config = FinetuningConfig.for_task("text_classification", "small", learning_rate=FLAGS.learning_rate,
                                               max_seq_length=FLAGS.max_seq_length, batch_size=batch_size,
                                               pad_to_max_length=pad, epochs=epochs)
            task = make_task(config, tokenizer, files={"train": train})
            examples = task.load("train")
            ours, answers = [], []
            start = time.perf_counter()
            finetune(task, pretrained, examples, callbacks=[step_timer(FLAGS.warmup, peer, ours, answers)],
                     report=None)
            print(f"  {name}: {OURS[pad]} done in {time.perf_counter() - start:.0f} s", flush=True)
            steps = np.array(ours[FLAGS.warmup:])
            rows.append({"model": OURS[pad], "config": name, "batch_size": batch_size,
                         "s_per_step": float(np.median(steps)), "p95_s": float(np.percentile(steps, 95)),
                         "first_step_s": ours[0], "steps": len(steps)})
            peer_times += [answer["seconds"] for answer in answers]
            if peer is not None:
                rows[-1]["peer_s_per_step"] = float(np.median([answer["seconds"] for answer in answers]))
                rows[-1]["peer_mean_padded_length"] = float(np.mean([a["tokens"] for a in answers])) / batch_size
    finally:
        if peer is not None:
            peer.close()
    if peer is not None:
        rows.append({"model": PEER, "config": name, "batch_size": batch_size,
                     "s_per_step": float(np.median(peer_times)), "p95_s": float(np.percentile(peer_times, 95)),
                     "steps": len(peer_times)})
    for row in rows:
        row["examples_per_s"] = batch_size / row["s_per_step"]
        if "peer_s_per_step" in row:  # the peer's median step during this run, over ours
            row["speed_vs_peer"] = row["peer_s_per_step"] / row["s_per_step"]
    return rows


def main(argv):
    del argv
    from electra_tf.util.atomic import write_json
    from electra_tf.tools.common import quiet_libraries

    quiet_libraries()
    work = tempfile.mkdtemp(prefix="electra_finetune_bench_")
    try:
        texts = sentences(work)
        print(f"texts: {len(texts)} ({'--train_file' if FLAGS.train_file else 'default-corpus sentences'}), "
              f"{np.mean([len(t.split()) for t in texts]):.0f} words on average; max_seq_length "
              f"{FLAGS.max_seq_length}; fp32; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}",
              flush=True)
        data, rows = task_data(texts, work), []
        for spec in FLAGS.models:
            name, batch_size = spec.rsplit(":", 1)
            rows += time_model(name, int(batch_size), texts, data, work)
        header = (f"{'config':<14} {'batch':>5}  {'path':<30} {'s/step':>8} {'p95 s':>8} {'examples/s':>10} "
                  f"{'speed vs peer':>13} {'first step s':>12}")
        print("\n" + header + "\n" + "-" * len(header))
        for row in rows:
            ratio = f"{row['speed_vs_peer']:.2f}x" if row.get("speed_vs_peer") else ""
            first = f"{row['first_step_s']:.1f}" if "first_step_s" in row else ""
            print(f"{row['config']:<14} {row['batch_size']:>5}  {row['model']:<30} {row['s_per_step']:8.3f} "
                  f"{row['p95_s']:8.3f} {row['examples_per_s']:10.1f} {ratio:>13} {first:>12}")
        padded = [row.get("peer_mean_padded_length") for row in rows if row.get("peer_mean_padded_length")]
        if padded:
            print(f"the peer's batches were padded to {np.mean(padded):.0f} tokens on average")
        if FLAGS.json:
            write_json(FLAGS.json, {"rows": rows, "cpus": os.cpu_count(), "load_average": os.getloadavg()[0]})
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    app.run(main)
