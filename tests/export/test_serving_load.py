"""The exported raw-text signature under load: 8 threads for 30 s, correct outputs throughout, flat memory."""

import threading
import time

import numpy as np
import tensorflow as tf

from electra_tf import ElectraForSequenceClassification, ElectraTokenizer
from electra_tf.export import export_model, load_export

TEXTS = ["Return the number of items.", "A set is a finite, iterable container.", "", "Ünïcödé and emoji 🎉 text",
         "word " * 300]
THREADS, SECONDS = 8, 30.0


def resident_megabytes():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024


def test_eight_threads_for_half_a_minute_get_correct_outputs_and_memory_stays_flat(tiny_pretrained_dir, tmp_path):
    model = ElectraForSequenceClassification.from_pretrained(tiny_pretrained_dir, num_labels=3)
    path = export_model(model, ElectraTokenizer.from_pretrained(tiny_pretrained_dir), str(tmp_path), "load",
                        max_seq_length=64, label_names=["a", "b", "c"])
    serve = load_export(path).signatures["serving_default"]
    batches = [tf.constant(TEXTS[i:] + TEXTS[:i]) for i in range(len(TEXTS))]
    expected = [serve(text=batch)["probabilities"].numpy() for batch in batches]
    for _ in range(20):  # warm up allocators before the baseline
        serve(text=batches[0])
    calls, failures, memory = [0] * THREADS, [], []
    start = time.monotonic()

    def client(worker):
        while time.monotonic() - start < SECONDS and not failures:
            which = (worker + calls[worker]) % len(batches)
            got = serve(text=batches[which])["probabilities"].numpy()
            if not np.allclose(got, expected[which], atol=1e-6):
                failures.append((worker, which, np.abs(got - expected[which]).max()))
            calls[worker] += 1

    threads = [threading.Thread(target=client, args=(w,)) for w in range(THREADS)]
    for thread in threads:
        thread.start()
    while any(thread.is_alive() for thread in threads):
        memory.append(resident_megabytes())
        time.sleep(1.0)
    for thread in threads:
        thread.join()
    assert not failures, failures[:3]
    assert min(calls) > 10, calls  # every thread was served
    # Flat: the last 10 s use no more than the first 10 s (after warm-up) plus a small allowance.
    early, late = max(memory[2:12]), max(memory[-10:])
    assert late - early < 30, (early, late, memory)
    print(f"{sum(calls)} calls ({sum(calls) * len(TEXTS) / SECONDS:.0f} texts/s) from {THREADS} threads; "
          f"resident memory {early:.0f} → {late:.0f} MB")
