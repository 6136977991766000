"""A `README.md` model card wherever a model lands (`huggingface_hub.ModelCard`: a YAML header the hub reads, scores
as a `model-index`, and a body saying how to load the model and how it was made); every fact is optional.

Example:
>>> import tempfile
>>> folder = tempfile.mkdtemp()
>>> path = write_model_card(folder, serving_task="classification", base_model="google/electra-small-discriminator",
...                         scores={"dev": {"accuracy": 0.91}}, dataset="nyu-mll/glue", model_name="electra-sst2")
>>> card = huggingface_hub.ModelCard.load(path)
>>> card.data.library_name, card.data.pipeline_tag, card.data.eval_results[0].metric_value
('electra_tf', 'text-classification', 0.91)
"""

import os

import huggingface_hub

from electra_tf.util.atomic import write_text
from electra_tf.version import __version__

CARD_FILE = "README.md"
TEXT_MODEL = "text_model.onnx"  # an ONNX export's model with the tokenizer in front (`export.onnx_text`)
LICENSE = "apache-2.0"
# What each serving task (`export.signatures.SERVING_KINDS`, a model folder's `serving_task`) is on the hub.
PIPELINE_TAGS = {"classification": "text-classification", "regression": "text-classification",
                 "tagging": "token-classification", "question_answering": "question-answering",
                 "multiple_choice": "multiple-choice", "generator": "fill-mask", "encoder": "feature-extraction"}
# The model-index's task names, by pipeline tag (the hub's task types).
TASK_NAMES = {"text-classification": "Text Classification", "token-classification": "Token Classification",
              "question-answering": "Question Answering", "multiple-choice": "Multiple Choice",
              "fill-mask": "Fill-Mask", "feature-extraction": "Feature Extraction"}


def write_model_card(folder: str, *, serving_task: str | None = None, base_model: str | None = None,
                     language: str | list[str] | None = None, dataset: str | None = None,
                     scores: dict | None = None, command: list[str] | str | None = None,
                     model_name: str | None = None, model_format: str | None = None,
                     label_names: list | None = None, tags: tuple[str, ...] = ()) -> str:
    """Writes `<folder>/README.md`, the model card; returns its path.

    `serving_task`: as `electra_tf.json` records it; `base_model`: the hub id (or path) it came from; `scores`:
    `{split: {metric: value}}`, as `results.json` records them; `command`: what made the folder; `model_format`:
    "keras", "saved_model", "onnx", "litert", ... (a tag and how to load it).
    """
    name = model_name or os.path.basename(os.path.normpath(os.path.abspath(folder)))
    pipeline_tag = PIPELINE_TAGS.get(serving_task)
    is_hub_id = base_model is not None and not os.path.exists(base_model) and "/" in base_model
    data = huggingface_hub.ModelCardData(
        library_name="electra_tf", license=LICENSE, language=language, pipeline_tag=pipeline_tag,
        base_model=base_model if is_hub_id else None,
        datasets=[dataset] if dataset and not os.path.exists(dataset) else None,
        tags=["electra", "electra_tf", "keras", "tensorflow", *([model_format] if model_format else []), *tags],
        model_name=name, eval_results=_eval_results(scores, pipeline_tag, dataset) or None)
    write_text(os.path.join(folder, CARD_FILE), f"---\n{data.to_yaml()}\n---\n\n"
               + _body(folder, name, serving_task, base_model, dataset, scores, command, model_format, label_names))
    return os.path.join(folder, CARD_FILE)


def _eval_results(scores, pipeline_tag, dataset):
    """The scores as `huggingface_hub.EvalResult`s (the card's model-index): every numeric metric of every split."""
    task_type = pipeline_tag or "text-classification"
    dataset_name = os.path.basename(dataset) if dataset else "task data"
    return [huggingface_hub.EvalResult(task_type=task_type, task_name=TASK_NAMES.get(task_type, task_type),
                                       dataset_type=dataset if dataset and not os.path.exists(dataset) else "custom",
                                       dataset_name=dataset_name, dataset_split=split, metric_type=metric,
                                       metric_value=value)
            for split, metrics in (scores or {}).items() for metric, value in metrics.items()
            if isinstance(value, (int, float)) and not isinstance(value, bool)]


def _body(folder, name, serving_task, base_model, dataset, scores, command, model_format, label_names):
    what = serving_task.replace("_", " ") if serving_task else "ELECTRA"
    lines = [f"# {name}", "",
             f"An ELECTRA {what} model"
             + (f" fine-tuned from `{base_model}`" if base_model else "")
             + (f" on `{dataset}`" if dataset else "")
             + f", written by electra_tf {__version__} (Keras 3 / TensorFlow).", ""]
    if label_names:
        lines += [f"Labels, in id order: {', '.join(f'`{label}`' for label in label_names)}.", ""]
    lines += ["## How to use", "", "```python", *_usage(model_format, serving_task, folder), "```", ""]
    if scores:
        lines += ["## Results", "", "| split | metric | value |", "|---|---|---|",
                  *(f"| {split} | {metric} | {value:.4f} |" if isinstance(value, float) else
                    f"| {split} | {metric} | {value} |"
                    for split, metrics in scores.items() for metric, value in metrics.items()
                    if isinstance(value, (int, float))), ""]
    if command:
        shown = command if isinstance(command, str) else " ".join(command)
        lines += ["## How it was made", "", "```bash", shown, "```", ""]
    lines += ["## Intended use and limits", "",
              f"{_intended_use(serving_task)} Its scores hold for data like the data it was trained and scored "
              "on; check it on your own before relying on it. The licence (Apache-2.0) is the code's; the data's "
              "own terms also apply.", ""]
    return "\n".join(lines)


def _usage(model_format, serving_task, folder):
    if model_format == "saved_model":
        return ["import tensorflow as tf, tensorflow_text  # noqa: F401 (its tokenizer's ops)",
                "model = tf.saved_model.load('<this folder>')",
                "print(model.signatures['serving_default'](tf.constant(['an example text'])))"]
    if model_format == "onnx":
        return ["import onnxruntime  # token ids in: vocab.txt and export_info.json are beside model.onnx",
                "session = onnxruntime.InferenceSession('<this folder>/model.onnx')",
                *([f"# raw text in: {TEXT_MODEL}, in a session whose options register onnxruntime-extensions' ops",
                   "# (options.register_custom_ops_library(onnxruntime_extensions.get_library_path()))"]
                  if os.path.exists(os.path.join(folder, TEXT_MODEL)) else [])]
    if model_format == "litert":
        return ["from ai_edge_litert.interpreter import Interpreter  # token ids in: vocab.txt beside the model",
                "interpreter = Interpreter('<this folder>/model.tflite')"]
    pipeline_tag = PIPELINE_TAGS.get(serving_task)
    if pipeline_tag in ("text-classification", "token-classification", "question-answering"):
        return ["from electra_tf import pipeline", f"run = pipeline({pipeline_tag!r}, '<this folder or repo id>')"]
    return ["from electra_tf import ElectraModel, ElectraTokenizer",
            "tokenizer = ElectraTokenizer.from_pretrained('<this folder or repo id>')",
            "model = ElectraModel.from_pretrained('<this folder or repo id>', allow_unexpected=True)"]


def _intended_use(serving_task):
    if serving_task in (None, "discriminator", "generator", "encoder"):
        return "A pre-trained encoder, to fine-tune on a task (`electra-finetune --init_checkpoint=...`)."
    return f"The {serving_task.replace('_', ' ')} task it was fine-tuned on, in the language of its vocabulary."
