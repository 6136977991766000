"""Serving: SavedModel exports for TF Serving (raw-text, token-id and `tf.Example` signatures), ONNX, LiteRT and
keras-hub presets, and querying them (docs/serving.md; the modules are listed in docs/development.md).

Example:
>>> sorted(SIGNATURES)
['serve_examples', 'serve_ids', 'serving_default']
"""

from electra_tf.export.archive import SIGNATURES, export_model, versions
from electra_tf.export.client import export_info, load_export, query_export
from electra_tf.export.signatures import SERVING_KINDS, make_serving_task, task_of

__all__ = ["SERVING_KINDS", "SIGNATURES", "export_info", "export_model", "load_export", "make_serving_task",
           "query_export", "task_of", "versions"]
