"""Original Google ELECTRA checkpoints (TF1, as in the released `electra_{small,base,large}` zips), read and written
under the original variable names; a released checkpoint's config is inferred from its shapes.

Example (the released ELECTRA-Small, from its variable shapes):
>>> shapes = {"electra/embeddings/word_embeddings": [30522, 128],
...           "electra/embeddings/position_embeddings": [512, 128],
...           "electra/embeddings/token_type_embeddings": [2, 128]}
>>> for scope in ("electra", "generator"):
...     for i in range(12):
...         shapes[f"{scope}/encoder/layer_{i}/attention/self/query/kernel"] = [256, 256]
...         shapes[f"{scope}/encoder/layer_{i}/intermediate/dense/kernel"] = [256, 1024]
>>> model, pretraining = infer_configs(shapes)
>>> model.hidden_size, model.num_heads, model.embedding_size, pretraining.generator_hidden_size
(256, 4, 128, 1.0)
"""

import contextlib
import dataclasses
import os
import re
import shutil

import numpy as np
import tensorflow as tf

from electra_tf.util.atomic import atomic_folder, read_json, remove_leftovers, write_text
from electra_tf.checkpoints import mapping
from electra_tf.checkpoints.ours import RUN_CONFIG, run_config_file
from electra_tf.config import ElectraConfig, PretrainingConfig, generator_config, load_run_config, save_run_config
from electra_tf.util.library_internals import save_name_keyed_checkpoint

DISCRIMINATOR_SCOPE, GENERATOR_SCOPE = "electra", "generator"
_HEAD_SCOPES = {"ElectraForPreTraining": "discriminator_predictions", "ElectraForMaskedLM": "generator_predictions"}
_IGNORED = re.compile(r"(^global_step$|/adam_[mv]$|^temperature$)")


@dataclasses.dataclass
class GoogleCheckpoint:
    """A Google checkpoint read into Hugging Face-keyed state dicts (see `mapping`)."""

    config: ElectraConfig  # the discriminator's
    pretraining: PretrainingConfig | None
    discriminator: dict | None  # ElectraForPreTraining (or ElectraModel) keys
    generator: dict | None  # ElectraForMaskedLM keys
    generator_config: ElectraConfig | None
    unrecognized: dict  # {name: shape} of variables neither network has (not optimizer slots)

    @property
    def architecture(self):
        return "ElectraForPreTraining" if "discriminator_predictions.dense.weight" in (self.discriminator or {}) \
            else "ElectraModel"


def checkpoint_prefix(path):
    """The checkpoint prefix of `path` (a prefix, or a folder with a `checkpoint` file or one `*.index`), or None."""
    if os.path.exists(path + ".index"):
        return path
    if os.path.isdir(path):
        latest = tf.train.latest_checkpoint(path)
        if latest:
            return latest
        indexes = [name for name in os.listdir(path) if name.endswith(".index")]
        if len(indexes) == 1:
            return os.path.join(path, indexes[0][:-len(".index")])
    return None


def _load_checkpoint(prefix):
    """`tf.train.load_checkpoint`, with a ValueError naming the prefix when the files are damaged."""
    try:
        return tf.train.load_checkpoint(prefix)
    except (tf.errors.OpError, ValueError) as e:
        raise ValueError(f"{prefix}: not a readable TensorFlow checkpoint ({getattr(e, 'message', e)}); "
                         "it is truncated or damaged: download or convert it again") from None


def _get_tensor(reader, name, prefix):
    try:
        return reader.get_tensor(name)
    except (tf.errors.OpError, IndexError, ValueError) as e:  # IndexError: "Read less bytes than requested"
        raise ValueError(f"{prefix}: variable {name} is unreadable ({getattr(e, 'message', e)}); the checkpoint "
                         "is truncated or damaged: download or convert it again") from None


def is_google_checkpoint(prefix):
    names = set(_load_checkpoint(prefix).get_variable_to_shape_map())
    return any(f"{scope}/embeddings/word_embeddings" in names for scope in (DISCRIMINATOR_SCOPE, GENERATOR_SCOPE))


def _rows(scope, embeddings_scope, num_layers, projected, architecture):
    """`{hf_key: (google_name, layout)}` for one network."""
    rows = {}
    encoder = mapping.ENCODER_ROWS if projected else tuple(
        row for row in mapping.ENCODER_ROWS if not row[0].startswith("embeddings_project"))
    for _, hf, google, layout in encoder:
        prefix = embeddings_scope if google.startswith("embeddings/") else scope
        for i in (range(num_layers) if "{i}" in hf else [None]):
            rows[mapping.ENCODER_PREFIX + hf.format(i=i)] = (f"{prefix}/{google.format(i=i)}", layout)
    for _, hf, google, layout in mapping.HEAD_ROWS.get(architecture, ()):
        rows[hf] = (google, layout)
    return rows


def _num_layers(shapes, scope):
    pattern = re.compile(rf"^{scope}/encoder/layer_(\d+)/")
    return len({int(m.group(1)) for name in shapes for m in [pattern.match(name)] if m})


def _network_config(shapes, scope, embeddings_scope):
    vocab_size, embedding_size = shapes[f"{embeddings_scope}/embeddings/word_embeddings"]
    hidden_size = shapes[f"{scope}/encoder/layer_0/attention/self/query/kernel"][1]
    return ElectraConfig(
        vocab_size=vocab_size, embedding_size=embedding_size, hidden_size=hidden_size,
        num_layers=_num_layers(shapes, scope), num_heads=max(1, hidden_size // 64),
        intermediate_size=shapes[f"{scope}/encoder/layer_0/intermediate/dense/kernel"][1],
        max_position_embeddings=shapes[f"{embeddings_scope}/embeddings/position_embeddings"][0],
        type_vocab_size=shapes[f"{embeddings_scope}/embeddings/token_type_embeddings"][0])


def infer_configs(shapes):
    """`(discriminator config, PretrainingConfig or None)` from `{name: shape}` of a Google checkpoint."""
    untied = f"{GENERATOR_SCOPE}/embeddings/word_embeddings" in shapes
    if _num_layers(shapes, DISCRIMINATOR_SCOPE) == 0:
        raise ValueError("no discriminator (electra/encoder/layer_*) in this checkpoint")
    model = _network_config(shapes, DISCRIMINATOR_SCOPE, DISCRIMINATOR_SCOPE)
    if _num_layers(shapes, GENERATOR_SCOPE) == 0:
        return model, None
    generator = _network_config(shapes, GENERATOR_SCOPE, GENERATOR_SCOPE if untied else DISCRIMINATOR_SCOPE)
    pretraining = PretrainingConfig(generator_hidden_size=generator.hidden_size / model.hidden_size,
                                    generator_layers=generator.num_layers / model.num_layers,
                                    untied_generator_embeddings=untied)
    if generator_config(model, pretraining) != generator:
        pretraining = None  # a generator the original recipe would not build: still loadable on its own
    return model, pretraining


def read_checkpoint(prefix, config=None, pretraining=None):
    """A `GoogleCheckpoint`; `config`/`pretraining` default to the run config beside it, else to the shapes."""
    reader = _load_checkpoint(prefix)
    shapes = reader.get_variable_to_shape_map()
    beside = run_config_file(os.path.dirname(prefix))
    if config is None and os.path.exists(beside):
        values = read_json(beside)
        if isinstance(values, dict) and "model" in values:  # our run config, not a Hugging Face one
            config, pretraining = load_run_config(beside)
    if config is None:
        config, pretraining = infer_configs(shapes)
    used = set()

    def network(scope, embeddings_scope, net_config, architecture):
        projected = net_config.embedding_size != net_config.hidden_size
        rows = _rows(scope, embeddings_scope, net_config.num_layers, projected, architecture)
        head_scope = _HEAD_SCOPES[architecture]
        if not any(name.startswith(head_scope + "/") for name in shapes):
            rows = {hf: row for hf, row in rows.items() if hf.startswith(mapping.ENCODER_PREFIX)}
        state = {}
        for hf, (google, layout) in rows.items():
            if google in shapes:
                state[hf] = mapping.hf_to_google(_get_tensor(reader, google, prefix), layout).astype(np.float32)
                used.add(google)
        return state

    discriminator = network(DISCRIMINATOR_SCOPE, DISCRIMINATOR_SCOPE, config, "ElectraForPreTraining")
    generator = gen_config = None
    if _num_layers(shapes, GENERATOR_SCOPE):
        untied = f"{GENERATOR_SCOPE}/embeddings/word_embeddings" in shapes
        if pretraining is not None:
            gen_config = generator_config(config, pretraining)
        else:
            gen_config = _network_config(shapes, GENERATOR_SCOPE, GENERATOR_SCOPE if untied else DISCRIMINATOR_SCOPE)
        generator = network(GENERATOR_SCOPE, GENERATOR_SCOPE if untied else DISCRIMINATOR_SCOPE, gen_config,
                            "ElectraForMaskedLM")
    unrecognized = {name: tuple(shapes[name]) for name in sorted(shapes)
                    if name not in used and not _IGNORED.search(name)}
    return GoogleCheckpoint(config, pretraining, discriminator, generator, gen_config, unrecognized)


def google_names(state, scope, tied=True):
    """`{google_name: array}` of a Hugging Face-keyed state dict of one network (`scope`: electra or
    generator); with `tied`, the generator's embedding block goes to `electra/embeddings/`."""
    num_layers = len({key.split(".")[3] for key in state if key.startswith("electra.encoder.layer.")})
    projected = "electra.embeddings_project.weight" in state
    architecture = ("ElectraForMaskedLM" if "generator_lm_head.bias" in state
                    else "ElectraForPreTraining" if "discriminator_predictions.dense.weight" in state
                    else "ElectraModel")
    embeddings_scope = DISCRIMINATOR_SCOPE if tied else scope
    rows = _rows(scope, embeddings_scope, num_layers, projected, architecture)
    missing = sorted(set(state) - set(rows))
    if missing:
        raise ValueError(f"no Google name for {missing[:6]} (only pre-training networks exist in that format)")
    return {rows[key][0]: mapping.hf_to_google(array, rows[key][1]) for key, array in state.items()}


def _is_file_of(name, base):
    """Whether `name` is one of the files of the TF1 prefix `base` (its index, data shards or graph)."""
    return name in (base + ".index", base + ".meta") or name.startswith(base + ".data-")


@contextlib.contextmanager
def prefix_written_whole(prefix):
    """A prefix in a temporary folder to write a checkpoint (and the files beside it) at; when the block ends without
    an error they replace `prefix`'s old files (the old `.index` removed first, the new one renamed in last, so a kill
    leaves the prefix old, new or absent, never a mix), and the folder's other files stay. On an error nothing changes.
    """
    folder, base = os.path.split(os.path.abspath(prefix))
    if not os.path.isdir(folder):
        with atomic_folder(folder) as tmp:
            yield os.path.join(tmp, base)
        return
    remove_leftovers(os.path.join(folder, base))
    tmp = os.path.join(folder, f".{base}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    try:
        yield os.path.join(tmp, base)
        index = base + ".index"
        old = [name for name in os.listdir(folder) if _is_file_of(name, base)]
        for name in sorted(old, key=lambda name: name != index):  # the old index first
            os.remove(os.path.join(folder, name))
        for name in sorted(os.listdir(tmp), key=lambda name: name == index):  # the new index last
            os.replace(os.path.join(tmp, name), os.path.join(folder, name))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def write_checkpoint(prefix, discriminator=None, generator=None, tied=True, run_config=None, extra=None):
    """Writes Hugging Face-keyed state dicts under the original names at `prefix`, whole, with a `checkpoint` file,
    `run_config.json` given `(ElectraConfig, PretrainingConfig)`, and `extra` tensors (e.g. `global_step`) as they are.
    """
    tensors = {}
    if discriminator is not None:
        tensors.update(google_names(discriminator, DISCRIMINATOR_SCOPE))
    if generator is not None:
        named = google_names(generator, GENERATOR_SCOPE, tied=tied)
        for name, array in named.items():
            if name in tensors and not np.array_equal(tensors[name], array):
                raise ValueError(f"{name}: the generator's differs from the discriminator's, so they cannot be "
                                 "written tied (pass tied=False)")
            tensors[name] = array
    tensors.update(extra or {})
    with prefix_written_whole(prefix) as tmp_prefix:
        folder, base = os.path.split(tmp_prefix)
        save_name_keyed_checkpoint(tmp_prefix, tensors)
        write_text(os.path.join(folder, "checkpoint"),
                   f'model_checkpoint_path: "{base}"\nall_model_checkpoint_paths: "{base}"\n')
        if run_config is not None:
            save_run_config(os.path.join(folder, RUN_CONFIG), *run_config)


def save_google(prefix, discriminator, generator=None, pretraining=None, tied=None):
    """Writes our discriminator (and generator) under the original TF1 names at `prefix`, with `run_config.json`; the
    embedding block once when they share it (`tied=None`: unless `pretraining` unties them)."""
    if tied is None:
        tied = pretraining is None or pretraining.sharing != "none"
    write_checkpoint(prefix, mapping.model_state(discriminator),
                     None if generator is None else mapping.model_state(generator), tied=tied,
                     run_config=(mapping.backbone_of(discriminator).config, pretraining or PretrainingConfig()))
