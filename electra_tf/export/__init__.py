"""Serving: SavedModel exports for TF Serving with raw-text, token-id and `tf.Example` signatures.

- `signatures`: what each task's three signatures take and give (the graphs
  run the package's one featurizer, `electra_tf.text.featurize`, and span rules,
  `electra_tf.text.answer_spans`);
- `constants`: the weights as constants of the serving graphs (an export's default);
- `compiled`: the model call under XLA over a few padded shapes (`compile=True`);
- `precision`: bfloat16 and int8 copies of a model (`precision=`);
- `archive`: the `<export_dir>/<model_name>/<version>/` layout via `keras.export.ExportArchive`;
- `litert`: a classifier as a LiteRT `model.tflite`;
- `onnx`: any served model as `model.onnx` (ONNX Runtime, OpenVINO, Triton);
- `ids_folder`: the folder of an export that takes token ids (LiteRT, ONNX) and what an app needs beside it;
- `client`: loading and querying an export in Python.

See `docs/serving.md` for TF Serving (Docker, REST, gRPC, new versions).

Example:
>>> sorted(SIGNATURES)
['serve_examples', 'serve_ids', 'serving_default']
"""

from electra_tf.export.archive import SIGNATURES, export_model, versions
from electra_tf.export.client import export_info, load_export, query_export
from electra_tf.export.signatures import SERVING_KINDS, make_serving_task, task_of

__all__ = ["SERVING_KINDS", "SIGNATURES", "export_info", "export_model", "load_export", "make_serving_task",
           "query_export", "task_of", "versions"]
