"""Reading a TensorFlow Datasets split, with one clear error (what is missing, what to do) when it cannot be had
(offline, or without a module its builder imports). TFDS is imported on first use: it is optional, and slow.

Example (offline, with nothing prepared):
>>> load_split("glue/rte", "train", data_dir="/nonexistent")  # doctest: +SKIP
Traceback (most recent call last):
...
ValueError: glue/rte (split train): TensorFlow Datasets has not prepared it in /nonexistent and could not ...
"""


def load_split(name, split, data_dir=None, **options):
    """`tfds.load(name, split=split, data_dir=data_dir, **options)`, or a ValueError that says why not."""
    import tensorflow_datasets as tfds  # deliberate: optional at run time, and its import takes seconds

    where = f"in {data_dir}" if data_dir else "in TFDS's default folder (~/tensorflow_datasets)"
    try:
        return tfds.load(name, split=split, data_dir=data_dir, **options)
    except ModuleNotFoundError as e:
        raise ValueError(f"{name}: TensorFlow Datasets needs the module {e.name!r} to prepare it "
                         f"(pip install {e.name})") from None
    except tfds.core.registered.DatasetNotFoundError:
        raise ValueError(f"{name}: TensorFlow Datasets has no such dataset") from None
    except (OSError, ValueError, RuntimeError, AssertionError) as e:
        first_line = (str(e).strip().splitlines() or [type(e).__name__])[0][:300]
        raise ValueError(f"{name} (split {split}): TensorFlow Datasets has not prepared it {where} and could not "
                         f"prepare it now ({type(e).__name__}: {first_line}). Prepare it once where there is "
                         f"network (`tfds build {name} --data_dir=<folder>`), then pass that folder as "
                         "--tfds_data_dir") from None
