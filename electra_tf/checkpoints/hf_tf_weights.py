"""transformers 4.x's TensorFlow weights (`tf_model.h5`, Keras 2 HDF5) read with h5py as a Hugging Face state dict,
names and layouts as transformers' own TF → PyTorch conversion makes them.

Example:
>>> hf_key("tf_electra_for_pre_training/electra/encoder/layer_._1/attention/output/LayerNorm/gamma:0")
'electra.encoder.layer.1.attention.output.LayerNorm.weight'
>>> hf_key("tf_electra_model/electra/embeddings/position_embeddings/embeddings:0")
'electra.embeddings.position_embeddings.weight'
>>> read_tf_weights("README.md")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: README.md: not a readable HDF5 file (...); download or save it again
"""

import h5py
import numpy as np

TF_WEIGHTS_NAME = "tf_model.h5"
TF_INDEX_NAME = "tf_model.h5.index.json"  # sharded TF weights (over 10 GB by default): not read
# The last part of a Keras variable name → PyTorch's (transformers' `convert_tf_weight_name_to_pt_weight_name`).
_RENAMED = {"kernel": "weight", "gamma": "weight", "embeddings": "weight", "beta": "bias"}


def hf_key(tf_name):
    """The Hugging Face (PyTorch) state-dict key of a Keras 2 variable name of a transformers TF model."""
    parts = tf_name.removesuffix(":0").replace("_._", "/").split("/")[1:]  # without the model's own name
    parts[-1] = _RENAMED.get(parts[-1], parts[-1])
    return ".".join(parts)


def _text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _weights(path, handle):
    """`(name, array)` for every weight the file lists, in order."""
    if "layer_names" not in handle.attrs:
        raise ValueError(f"{path}: HDF5, but not Keras weights (no layer_names); expected the tf_model.h5 a "
                         "transformers 4.x TF model's save_pretrained writes")
    for layer in map(_text, handle.attrs["layer_names"]):
        group = handle.get(layer)
        if not isinstance(group, h5py.Group) or "weight_names" not in group.attrs:
            raise ValueError(f"{path}: layer {layer!r} is listed but has no weights group (a truncated or edited "
                             "file?); download or save it again")
        for name in map(_text, group.attrs["weight_names"]):
            dataset = group.get(name)
            if not isinstance(dataset, h5py.Dataset):
                raise ValueError(f"{path}: weight {name} is listed but absent (a truncated or edited file?); "
                                 "download or save it again")
            yield name, dataset[()]


def read_tf_weights(path):
    """`{Hugging Face key: array}` of a transformers 4.x `tf_model.h5` (floating arrays as float32)."""
    state = {}
    try:
        with h5py.File(path, "r") as handle:
            for name, array in _weights(path, handle):
                key = hf_key(name)
                if name.removesuffix(":0").endswith("kernel") and array.ndim == 2:
                    array = array.T
                if np.issubdtype(array.dtype, np.floating):
                    array = array.astype(np.float32)
                if key in state and (state[key].shape != array.shape or not np.array_equal(state[key], array)):
                    raise ValueError(f"{path}: {name} is listed twice with different values; download or save it "
                                     "again")
                state.setdefault(key, np.ascontiguousarray(array))
    except OSError as error:  # not HDF5, truncated, or a damaged block
        raise ValueError(f"{path}: not a readable HDF5 file ({str(error).splitlines()[0]}); download or save it "
                         "again") from None
    return state
