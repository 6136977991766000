"""The settings a fine-tuning run takes where its user gave none, each with the reason the run prints
(docs/finetuning.md, "Settings a run chooses, and why"); a value the user set is never changed.

Example:
>>> from electra_tf import ElectraTokenizer, FinetuningConfig, make_task
>>> tokenizer = ElectraTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "江"])
>>> task = make_task(FinetuningConfig(task="conll2003"), tokenizer)
>>> config, reasons = settle(task, examples=60, batches_per_epoch=1, width=64)
>>> config.learning_rate, config.layerwise_lr_decay, config.epochs
(0.0012, 0.8, 200.0)
>>> print(defaults_line(config, reasons))  # doctest: +NORMALIZE_WHITESPACE
defaults (set a flag to change one): --learning_rate=0.0012 (the paper's rate for the model's width, 64: 3e-4 at
256, 1e-4 at 768, 5e-5 at 1024); --layerwise_lr_decay=0.8 (the paper's: 0.9 for Large); --epochs=200 (tagging
trains at least 200 steps: 60 examples make 1 batch of 32 an epoch)
"""

import math

from electra_tf.config import PAPER_LEARNING_RATES, default_layerwise_decay, default_learning_rate


def settle(task, examples, batches_per_epoch, width):
    """`(task.config with its unset learning rate, decay and epochs set, {field: why})` for a `task` of `examples`
    training examples in `batches_per_epoch` batches, fine-tuning a model `width` wide."""
    config, reasons = task.config, {}
    if config.learning_rate is None:
        rates = ", ".join(f"{rate:.0e} at {size}".replace("e-0", "e-")
                          for size, rate in sorted(PAPER_LEARNING_RATES.items()))
        config = config.replace(learning_rate=default_learning_rate(width))
        reasons["learning_rate"] = f"the paper's rate for the model's width, {width}: {rates}"
    if config.layerwise_lr_decay is None:
        config = config.replace(layerwise_lr_decay=default_layerwise_decay(width))
        reasons["layerwise_lr_decay"] = "the paper's: 0.9 for Large"
    if config.epochs is None:
        epochs = float(task.task_epochs(config.task))
        reasons["epochs"] = "the task's"
        if batches_per_epoch * epochs < task.min_train_steps:
            epochs = float(math.ceil(task.min_train_steps / batches_per_epoch))
            reasons["epochs"] = (f"tagging trains at least {task.min_train_steps} steps: {examples} examples make "
                                 f"{batches_per_epoch} batch{'es' if batches_per_epoch > 1 else ''} of "
                                 f"{config.batch_size} an epoch")
        config = config.replace(epochs=epochs)
    return config, reasons


def defaults_line(config, reasons):
    """One line: each setting `settle` chose, as the flag that sets it, with its reason."""
    return "defaults (set a flag to change one): " + "; ".join(
        f"--{name}={getattr(config, name):g} ({reason})" for name, reason in reasons.items())
