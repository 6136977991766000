"""Writes a model as a TF Serving version, `<export_dir>/<model_name>/<version>/`, with `keras.export.ExportArchive`:
whole or not at all, versions allocated under the model name's lock, with `assets.extra/export_info.json` and a
model card.

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
    """The folder of `version` (default: one more than the highest present), refused if it exists unless `overwrite`."""
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
    """Exports `model` (a discriminator or a task model) with the `serving_default`, `serve_ids` and `serve_examples`
    signatures; returns the version folder. The arguments are `electra-export`'s flags (docs/serving.md, "Export").

    `tokenizer`: the one it was trained with (`None`: its preprocessor's); `version`: by default one more than the
    highest present; `compile`: XLA, which TF Serving then needs enabled; `precision`: "fp32", "bf16" or "int8";
    `options`: the task's (`text_pair=True`; `max_query_length`, `version_2`, `null_threshold` for QA).
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
    resources = tf.Module()  # not the Keras model itself, whose tracking writes every weight twice (keras#23553)
    resources.model = model
    archive.track(resources)

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
            write_json(os.path.join(tmp, INFO_FILE), {
                **task_facts(task), "signatures": list(SIGNATURES), "compiled": task.compiled is not None,
                "constant_weights": task.constants is not None, "precision": precision,
                "vocabulary_size": task.tokenizer.vocabulary_size(), "options": options})
            write_model_card(tmp, serving_task=task.task, label_names=task.label_names, model_format="saved_model",
                             model_name=model_name)
    return path


def task_facts(task):
    """What every export's `export_info.json` records of its serving task and the versions it was built with."""
    return {"task": task.task, "text_inputs": list(task.text_inputs), "max_seq_length": task.max_seq_length,
            "label_names": task.label_names, "lowercase": bool(task.tokenizer.lowercase),
            "strip_accents": bool(task.tokenizer.strip_accents), VERSION_FIELD: __version__,
            "built_with": {"tensorflow": tf.__version__, "tensorflow_text": tf_text.__version__,
                           "keras": keras.__version__}}
