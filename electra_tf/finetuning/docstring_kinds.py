"""`docstring_kinds`: is a docstring a module's, a class's or a function's? A task that needs no download: its
files are written from the embedded corpus into `--data_dir` on first read. The smallest example of a task.

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
