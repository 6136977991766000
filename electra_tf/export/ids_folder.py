"""Exports that take token ids (LiteRT, ONNX): the model file and what an app needs beside it (tokenizer files,
`config.json`, `export_info.json`, a model card), written as a SavedModel version is: whole, under the lock.
"""

import os

from electra_tf.util.atomic import atomic_folder, write_json
from electra_tf.checkpoints.model_card import write_model_card
from electra_tf.checkpoints.tokenizer_files import write_tokenizer_files
from electra_tf.export.archive import task_facts, version_path
from electra_tf.models.base import INPUT_NAMES
from electra_tf.util.folder_lock import lock_folder

INFO_FILE = "export_info.json"


def write_ids_export(task, export_dir, model_name, version, overwrite, model_file, convert, info, beside=None):
    """Writes `convert()`'s bytes as `model_file` (the version checked first), the files `beside(bytes)` gives, the
    tokenizer files, config and `export_info.json` (with `info`); returns the version folder."""
    model_dir = os.path.join(export_dir, model_name)
    version_path(model_dir, version, overwrite)
    model_bytes = convert()
    files = {model_file: model_bytes, **(beside(model_bytes) if beside else {})}
    tokenizer = task.tokenizer
    with lock_folder(model_dir):
        path = version_path(model_dir, version, overwrite)
        with atomic_folder(path) as tmp:
            for name, data in files.items():
                with open(os.path.join(tmp, name), "wb") as f:
                    f.write(data)
            write_tokenizer_files(tmp, tokenizer.get_vocabulary(), lowercase=bool(tokenizer.lowercase),
                                  strip_accents=tokenizer.strip_accents, model_max_length=task.max_seq_length)
            write_json(os.path.join(tmp, "config.json"), task.model.config.to_dict())
            facts = task_facts(task)
            write_json(os.path.join(tmp, INFO_FILE), {
                **facts, "model_file": model_file, "bytes": len(model_bytes), "inputs": list(INPUT_NAMES),
                **info, "built_with": {**facts["built_with"], **info.get("built_with", {})}})
            write_model_card(tmp, serving_task=task.task, label_names=task.label_names, model_name=model_name,
                             model_format=info.get("format"))
    return path
