"""The two lines a save prints: the models' size before it, the seconds it took after.

>>> import keras
>>> dense = keras.layers.Dense(2)
>>> dense.build((None, 3))
>>> with saying_saved("runs/x/final", dense):
...     pass  # doctest: +ELLIPSIS
saving the model to runs/x/final (0.0 MB of weights)…
saved in ... s
"""

import contextlib
import math
import time


@contextlib.contextmanager
def saying_saved(path, *models):
    """Prints a line before the models are saved to `path` (with their size) and one when they are."""
    # Shared weights counted once; a dtype's bytes from its name (`float32` → 4), so that no numpy is needed.
    weights = {id(w): w for model in models for w in model.weights}.values()
    megabytes = sum(math.prod(w.shape) * max(1, int("0" + "".join(filter(str.isdigit, str(w.dtype)))) // 8)
                    for w in weights) / 1e6
    print(f"saving the model to {path} ({megabytes:,.1f} MB of weights)…", flush=True)
    started = time.perf_counter()
    yield
    print(f"saved in {time.perf_counter() - started:.1f} s", flush=True)
