"""`finetune`: the original ELECTRA recipe on any task — AdamW, warm-up, linear decay, layer-wise LR decay.

Steps: `len(train) // batch_size * epochs` (at least 1), warm-up over
`warmup_proportion` of them, layer-wise learning-rate decay as the task's
config says (see `electra_tf.training.layerwise_decay`).

Example (with a model from `make demo`):
>>> from electra_tf import ElectraTokenizer, FinetuningConfig, make_task
>>> config = FinetuningConfig.for_task("docstring_kinds", model_size="small")
>>> task = make_task(config, ElectraTokenizer.from_pretrained("runs/demo/model"),
...                  data_dir="runs/demo/docstring_kinds")  # doctest: +SKIP
>>> model = finetune(task, "runs/demo/model", task.load("train"))  # doctest: +SKIP
>>> dev = task.load("dev")  # doctest: +SKIP
>>> task.score(dev, task.predict(model, dev))  # doctest: +SKIP
{'accuracy': 0.6...}
"""

import keras
import numpy as np
from absl import logging

from electra_tf.training.layerwise_decay import layerwise_lr_multipliers
from electra_tf.training.optimization import create_optimizer


def finetune(task, init_checkpoint, train_examples, callbacks=()):
    """Fine-tunes `task`'s model from `init_checkpoint` on `train_examples`; returns the model."""
    config = task.config
    keras.utils.set_random_seed(config.seed)
    dataset, batches_per_epoch = task.train_dataset(train_examples)
    if batches_per_epoch < 1:
        raise ValueError(f"{len(train_examples)} training examples make no batch of {config.batch_size}")
    steps = max(1, int(batches_per_epoch * config.epochs))
    model = task.build_model(init_checkpoint)
    if task.tokenizer.vocabulary_size() > model.config.vocab_size:
        raise ValueError(f"the tokenizer has {task.tokenizer.vocabulary_size()} tokens but {init_checkpoint} embeds "
                         f"only {model.config.vocab_size}: is its vocab.txt the one the model was trained with?")
    rates = layerwise_lr_multipliers(model, config.layerwise_lr_decay, config.original_top_layer_decay)
    optimizer = create_optimizer(config.learning_rate, steps, int(config.warmup_proportion * steps),
                                 weight_decay=config.weight_decay_rate, epsilon=config.adam_epsilon,
                                 lr_multipliers=rates)
    task.compile(model, optimizer)
    logging.info("fine-tuning %s: %d steps of %d examples", config.task, steps, config.batch_size)
    history = model.fit(dataset.repeat(), steps_per_epoch=steps, epochs=1, verbose=0, callbacks=list(callbacks))
    loss = history.history["loss"][-1]
    if not np.isfinite(loss):
        raise FloatingPointError(f"fine-tuning {config.task}: the training loss is {loss}")
    return model
