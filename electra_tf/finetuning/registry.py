"""The fine-tuning tasks by name, and `make_task`: the one place a task is registered.

Example:
>>> from electra_tf import ElectraTokenizer, FinetuningConfig
>>> tokenizer = ElectraTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "who"])
>>> task = make_task(FinetuningConfig(task="squadv1"), tokenizer, data_dir="squad")
>>> type(task).__name__, task.config.max_seq_length, task.files["dev"]
('SquadV1Task', 512, 'squad/dev-v1.1.json')
>>> make_task(FinetuningConfig(task="sst3"), tokenizer)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: unknown task 'sst3'; the tasks are: chunk, cola, conll2003, docstring_kinds, mnli, mrpc, ...
>>> make_task(FinetuningConfig(task="squadv1"), tokenizer, tag_colum=1)
Traceback (most recent call last):
...
ValueError: task 'squadv1' takes no option tag_colum; its options: qa_metric
"""

from electra_tf.data.tasks.classification import GLUE_TASKS, glue_task
from electra_tf.finetuning.classification import GlueTask, TextClassificationTask
from electra_tf.finetuning.docstring_kinds import DocstringKindsTask
from electra_tf.finetuning.multiple_choice import MultipleChoiceTask
from electra_tf.finetuning.question_answering import QuestionAnsweringTask, SquadV1Task
from electra_tf.finetuning.tagging import ChunkingTask, TaggingTask
from electra_tf.finetuning.task import option_names

TASKS = {
    **{name: GlueTask for name in GLUE_TASKS if name != "ax"},  # AX is predicted by an MNLI run
    "text_classification": TextClassificationTask,
    "docstring_kinds": DocstringKindsTask,
    "conll2003": TaggingTask,
    "chunk": ChunkingTask,
    "squad": QuestionAnsweringTask,
    "squadv1": SquadV1Task,
    "swag": MultipleChoiceTask,
}


def task_class(name):
    """The task class registered under `name` (GLUE's names as spelled in the GLUE download work too)."""
    if name in TASKS:
        return TASKS[name]
    try:
        return TASKS[glue_task(name).name]
    except (ValueError, KeyError):
        raise ValueError(f"unknown task {name!r}; the tasks are: {', '.join(sorted(TASKS))}") from None


def task_options(name):
    """The data options the task `name` takes: the fields of its `Options` dataclass."""
    return option_names(task_class(name).Options)


def make_task(config, tokenizer, files=None, data_dir=None, **options):
    """The task named by `config.task` (see `TASKS`), reading `files` (split → path) or `data_dir`, with
    `options` (the fields of the task's `Options`); an option the task does not take is a `ValueError`."""
    cls = task_class(config.task)
    unknown = sorted(set(options) - set(option_names(cls.Options)))
    if unknown:
        raise ValueError(f"task {config.task!r} takes no option {', '.join(unknown)}; its options: "
                         f"{', '.join(option_names(cls.Options)) or 'none'}")
    return cls(config, tokenizer, files, data_dir, cls.Options(**options))
