"""Writes a model as a TF Serving version, `<export_dir>/<model_name>/<version>/`, with `keras.export.ExportArchive`.

TF Serving watches `<export_dir>/<model_name>/` and serves the highest
numbered version folder. A version is written into a hidden temporary folder
beside it and renamed into place, so the server never loads half a model; an
overwritten version is swapped with its replacement in one step. Versions are
allocated under the lock of `<export_dir>/<model_name>` (`electra_tf.util.folder_lock`):
two exports at once never write the same version.
`assets.extra/export_info.json` records what was exported, and `README.md` is its
model card for the Hugging Face hub (TF Serving ignores both).

Example (exporting takes a few seconds, so not run here):
>>> from electra_tf import ElectraForSequenceClassification, ElectraTokenizer
>>> model = ElectraForSequenceClassification.from_pretrained("runs/small/final", num_labels=2)  # doctest: +SKIP
>>> export_model(model, ElectraTokenizer.from_pretrained("runs/small/final"), "exports",
...              model_name="sst2", label_names=["negative", "positive"])  # doctest: +SKIP
'exports/sst2/1'
"""

import os

import keras
import tensorflow as tf
import tensorflow_text as tf_text

from electra_tf.checkpoints.model_card import write_model_card
from electra_tf.util.atomic import atomic_folder, write_json
from electra_tf.export.precision import at_precision, check_cpu
from electra_tf.export.signatures import make_serving_task
from electra_tf.util.folder_lock import lock_folder
from electra_tf.version import VERSION_FIELD, __version__

SIGNATURES = ("serving_default", "serve_ids", "serve_examples")
INFO_FILE = os.path.join("assets.extra", "export_info.json")


def versions(model_dir):
    """The version numbers under `<export_dir>/<model_name>`, ascending (none when it does not exist)."""
    if not os.path.isdir(model_dir):
        return []
    return sorted(int(name) for name in os.listdir(model_dir) if name.isdigit())


def version_path(model_dir, version, overwrite):
    """The folder of `version` (by default one more than the highest present); refuses an existing one
    unless `overwrite`."""
    if version is None:
        version = (versions(model_dir) or [0])[-1] + 1
    if int(version) < 1:
        raise ValueError(f"a TF Serving version is a positive integer, got {version}")
    path = os.path.join(model_dir, str(int(version)))
    if os.path.exists(path) and not overwrite:
        raise FileExistsError(f"{path} exists; pick another version or overwrite it")
    return path


def export_model(model, tokenizer, export_dir, model_name="electra", version=None, max_seq_length=None,
                 label_names=None, overwrite=False, pad_to_max_length=False, compile=False, precision="fp32",
                 constant_weights=True, **options):
    """Exports `model` with the `serving_default`, `serve_ids` and `serve_examples` signatures.

    Args:
        model: an `ElectraDiscriminator` or a task model (`electra_tf.models`).
        tokenizer: its `ElectraTokenizer` (the vocabulary and casing it was trained with); `None`: the
            model's preprocessor's.
        export_dir: the base folder TF Serving mounts (`--model_base_path` is `<export_dir>/<model_name>`).
        version: a positive integer; by default one more than the highest version present (or 1).
        max_seq_length: raw text is truncated at this many tokens (default: the model's
            preprocessor's, else 128 or the model's positions if fewer).
        label_names: class or tag names, output as strings beside the ids.
        overwrite: replace an existing `version` (otherwise a FileExistsError).
        pad_to_max_length: pad every raw-text request to `max_seq_length` (fixed shapes, e.g. for XLA);
            by default a request is padded to its longest text, with the same outputs.
        compile: compile the model call of every signature with XLA, over a few padded shapes
            (`electra_tf.export.compiled`): faster on short requests, but TF Serving then needs
            `--xla_cpu_compilation_enabled`; by default the export serves on a stock server.
        precision: "fp32", "bf16" (weights and compute in bfloat16; refused on a CPU without AVX512-BF16
            or AMX) or "int8" (Keras's int8 quantization), see `electra_tf.export.precision`; the outputs
            are float32 at any precision.
        constant_weights: hold the weights as constants of the serving graph (`electra_tf.export.constants`:
            faster on short requests; the variables stay above 1 GiB of weights), else as variables.
        options: task options, see `electra_tf.export.signatures` (`text_pair=True` for sentence-pair
            classification; `max_query_length`, `max_answer_length`, `version_2`, `null_threshold`
            for question answering).

    Returns:
        The version folder.
    """
    check_cpu(precision)
    task = make_serving_task(model, tokenizer, max_seq_length, label_names, pad_to_max_length, **options)
    model_dir = os.path.join(export_dir, model_name)
    version_path(model_dir, version, overwrite)  # refused before any work; allocated again under the lock
    model = task.model = at_precision(model, precision)
    if constant_weights:
        task.use_constant_weights()  # of the model at its precision
    if compile:
        task.compile_model()
    archive = keras.export.ExportArchive()
    archive.track(_resources_of(model))

    def serve_text(*texts):
        return task.serve_text(**dict(zip(task.text_inputs, texts)))

    # The raw-text signature calls the token-id one: the model is traced once, for `serve_ids`.
    task.run_ids = archive.add_endpoint("serve_ids", task.serve_ids, input_signature=task.ids_signature())
    serving_default = archive.add_endpoint("serving_default", serve_text, input_signature=task.text_signature())

    def serve_examples(examples):
        # Calls the traced raw-text function rather than tracing the model once more.
        features = tf.io.parse_example(examples, task.example_features())
        return serving_default(*(features[name] for name in task.text_inputs))

    archive.add_endpoint("serve_examples", serve_examples,
                         input_signature=[tf.TensorSpec([None], tf.string, name="examples")])

    with lock_folder(model_dir):  # one writer of this model's versions at a time
        path = version_path(model_dir, version, overwrite)
        with atomic_folder(path) as tmp:  # a new version appears whole; one replaced is swapped in one step
            archive.write_out(tmp, verbose=False)
            os.makedirs(os.path.join(tmp, "assets.extra"), exist_ok=True)
            write_json(os.path.join(tmp, INFO_FILE), _info(task, options, precision))
            write_model_card(tmp, serving_task=task.task, label_names=task.label_names, model_format="saved_model",
                             model_name=model_name)
    return path


def _resources_of(model):
    """What `ExportArchive.track` is given: the model inside a `tf.Module`, whose lookup tables the archive then
    finds and keeps. Not the model itself: tracking a Keras model writes every weight twice, once for its
    Keras variables and once for the TF variables the signatures capture (keras-team/keras#23553), doubling
    the export on disk and in a server's memory; this way each weight is written once, as the signatures use
    it (and an export whose weights are constants of its graphs has no variables at all)."""
    resources = tf.Module()
    resources.model = model
    return resources


def task_facts(task):
    """What every export's `export_info.json` records of its serving task: kind, text inputs, length, label names,
    casing, and the versions it was built with."""
    return {"task": task.task, "text_inputs": list(task.text_inputs), "max_seq_length": task.max_seq_length,
            "label_names": task.label_names, "lowercase": bool(task.tokenizer.lowercase),
            "strip_accents": bool(task.tokenizer.strip_accents), VERSION_FIELD: __version__,
            "built_with": {"tensorflow": tf.__version__, "tensorflow_text": tf_text.__version__,
                           "keras": keras.__version__}}


def _info(task, options, precision):
    return {**task_facts(task), "signatures": list(SIGNATURES), "compiled": task.compiled is not None,
            "constant_weights": task.constants is not None, "precision": precision,
            "vocabulary_size": task.tokenizer.vocabulary_size(), "options": options}
