"""`.safetensors` files as NumPy arrays (never a pickle): a sharded checkpoint read as one dictionary, floating
arrays as float32, a truncated file named with its expected and actual size.

Example:
>>> import os, tempfile, numpy as np
>>> path = os.path.join(tempfile.mkdtemp(), "model.safetensors")
>>> write_safetensors(path, {"w": np.ones((2, 3), "float32")})
>>> read_safetensors(path)["w"].shape
(2, 3)
>>> with open(path, "r+b") as f:
...     _ = f.truncate(os.path.getsize(path) - 4)
>>> read_safetensors(path)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: ...model.safetensors: truncated or corrupt safetensors file (the header promises 120 bytes, the
file has 116); download or convert it again
"""

import json
import os
import struct

import ml_dtypes
import numpy as np
from safetensors import SafetensorError
from safetensors.numpy import load_file, save

from electra_tf.util.atomic import atomic_open, read_json

WEIGHTS_NAME = "model.safetensors"
INDEX_NAME = "model.safetensors.index.json"
FLOAT_DTYPES = {"F16": "float16", "BF16": "bfloat16", "F32": "float32", "F64": "float64"}


def _header(path):
    """`(header length, header dict)` of a safetensors file; raises on an unreadable header."""
    with open(path, "rb") as f:
        (header_length,) = struct.unpack("<Q", f.read(8))
        if header_length > os.path.getsize(path):
            raise ValueError("header longer than the file")
        return header_length, json.loads(f.read(header_length))


def _expected_size(path):
    """The file size the header describes, or None when even the header is unreadable."""
    try:
        header_length, header = _header(path)
        ends = [entry["data_offsets"][1] for name, entry in header.items() if name != "__metadata__"]
        return 8 + header_length + max(ends, default=0)
    except (struct.error, ValueError, KeyError, TypeError, IndexError):
        return None


def stored_float_dtype(path):
    """The floating dtype most tensors of a `.safetensors` file (or a folder's first) are stored in, or None."""
    _, header = _header(next(iter(_files(path)), path))
    dtypes = [FLOAT_DTYPES[entry["dtype"]] for name, entry in header.items()
              if name != "__metadata__" and entry.get("dtype") in FLOAT_DTYPES]
    return max(set(dtypes), key=dtypes.count) if dtypes else None


def _read_one(path):
    with open(path, "rb"):  # safetensors reports an unreadable file as missing: an OSError naming it is clearer
        pass
    try:
        arrays = load_file(path)
    except (SafetensorError, OSError, ValueError) as e:
        if isinstance(e, FileNotFoundError):
            raise
        expected, actual = _expected_size(path), os.path.getsize(path)
        detail = (f"the header promises {expected} bytes, the file has {actual}" if expected is not None
                  else f"unreadable header: {e}")
        raise ValueError(f"{path}: truncated or corrupt safetensors file ({detail}); "
                         "download or convert it again") from None
    return {name: (array.astype(np.float32) if np.issubdtype(array.dtype, np.floating)
                   or array.dtype.name == "bfloat16" else array)
            for name, array in arrays.items()}


def _files(path):
    """The files of `path`: itself, a folder's `model.safetensors`, or the shards its index names."""
    index = os.path.join(path, INDEX_NAME)
    if not os.path.isdir(path) or not os.path.exists(index):
        return [os.path.join(path, WEIGHTS_NAME) if os.path.isdir(path) else path]
    weight_map = read_json(index, expect=dict).get("weight_map")
    if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
        raise ValueError(f"{index}: no weight_map (a weight name → shard file object)")
    shards = sorted(set(weight_map.values()))
    outside = [shard for shard in shards if os.path.basename(shard) != shard]
    if outside:
        raise ValueError(f"{index}: shard files must sit beside the index, got {outside[:3]}")
    return [os.path.join(path, shard) for shard in shards]


def read_safetensors(path):
    """All tensors of a `.safetensors` file, or of a folder's (possibly sharded) `model.safetensors`."""
    return {name: array for file in _files(path) for name, array in _read_one(file).items()}


def write_safetensors(path, arrays, float_dtype=None):
    """Writes `{name: array}` atomically, floating arrays cast to `float_dtype` when given, with the metadata
    `transformers` expects."""
    dtype = None if float_dtype is None else np.dtype(ml_dtypes.bfloat16 if float_dtype == "bfloat16" else float_dtype)
    arrays = {name: np.ascontiguousarray(array if dtype is None or not np.issubdtype(array.dtype, np.floating)
                                         else array.astype(dtype))
              for name, array in arrays.items()}
    with atomic_open(path, "wb") as f:
        f.write(save(arrays, metadata={"format": "pt"}))
