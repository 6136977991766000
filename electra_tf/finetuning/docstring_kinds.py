"""`docstring_kinds`: is a docstring a module's, a class's or a function's? A task that needs no download.

Built from the embedded default corpus (the installed standard library's
docstrings, `electra_tf.data.default_corpus`): `train.jsonl` and `dev.jsonl`
are written into `--data_dir` the first time the task reads them. The demo
fine-tunes on it, and it is how a classification-style task is added: a
subclass of `TextClassificationTask` saying where its files come from, and one
line in `electra_tf.finetuning.registry.TASKS`.

Example:
>>> DocstringKindsTask.default_files
{'train': 'train.jsonl', 'dev': 'dev.jsonl'}
"""

import os

from electra_tf.data.default_corpus import write_docstring_kinds
from electra_tf.finetuning.classification import TextClassificationOptions, TextClassificationTask
from electra_tf.finetuning.task import NoOptions


class DocstringKindsTask(TextClassificationTask):
    """Three-way classification of standard-library docstrings (labels: class, function, module)."""

    Options = NoOptions
    default_files = {"train": "train.jsonl", "dev": "dev.jsonl"}

    def columns(self):
        return TextClassificationOptions()  # the files it writes: "text" and "label"

    def load(self, split):
        if self.data_dir and not os.path.exists(self.path(split)):
            write_docstring_kinds(self.data_dir)
        return super().load(split)
