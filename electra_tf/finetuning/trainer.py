"""`finetune`: the original ELECTRA recipe on any task (AdamW, warm-up, linear decay, layer-wise learning-rate
decay); what the config leaves unset takes the defaults of `electra_tf.finetuning.defaults`.

Example (with a model from `make demo`):
>>> from electra_tf import ElectraTokenizer, FinetuningConfig, make_task
>>> config = FinetuningConfig.for_task("docstring_kinds", model_size="small")
>>> task = make_task(config, ElectraTokenizer.from_pretrained("runs/demo/model"),
...                  data_dir="runs/demo/docstring_kinds")  # doctest: +SKIP
>>> model = finetune(task, "runs/demo/model", task.load("train")).model  # doctest: +SKIP
>>> dev = task.load("dev")  # doctest: +SKIP
>>> task.score(dev, task.predict(model, dev))  # doctest: +SKIP
{'accuracy': 0.6...}
"""

import dataclasses
import itertools
import math

import keras
import numpy as np

from electra_tf.finetuning.defaults import defaults_line, settle
from electra_tf.finetuning.monitoring import DevEvaluation, Progress, majority_baseline
from electra_tf.finetuning.metrics import chinese_share
from electra_tf.pretraining.vocabulary_identity import check_same_vocabulary, recorded_vocabulary
from electra_tf.training.layerwise_decay import layerwise_lr_multipliers
from electra_tf.training.optimization import create_optimizer
from electra_tf.text.vocabulary import vocabulary_hash
from electra_tf.text.vocabulary_learning import unknown_token_rate

# Fine-tuning warns when more than this share of the training texts' tokens are [UNK] (measured on the first
# _TEXTS_MEASURED texts): the vocabulary does not cover them, and no learning rate makes up for it.
UNKNOWN_SHARE = 0.05
_TEXTS_MEASURED = 2000
# The most dev evaluations a run makes by default, one every few epochs when it has more epochs than this.
DEV_SCORES = 10


def check_vocabulary_size(tokenizer, model, init_checkpoint, vocabulary_source=None):
    """A vocabulary of another size than the model's embedding table is refused (in one line), naming the
    vocabulary (`vocabulary_source`, when it is not the checkpoint's own) and the model."""
    if tokenizer.vocabulary_size() != model.config.vocab_size:
        vocabulary = f"the vocabulary {vocabulary_source}" if vocabulary_source else "the vocabulary"
        raise ValueError(f"{vocabulary} has {tokenizer.vocabulary_size()} tokens but the model {init_checkpoint} "
                         f"embeds {model.config.vocab_size}: is it the vocab.txt the model was trained with?")


def check_task_vocabulary(tokenizer, init_checkpoint):
    """A task whose `tokenizer` holds other tokens than the vocabulary `init_checkpoint` was trained with (of the
    same size: two words swapped) is refused in one line naming both; each id would read another token's row."""
    check_same_vocabulary("the task's tokenizer", vocabulary_hash(tokenizer.get_vocabulary()),
                          recorded_vocabulary(init_checkpoint), f"the model {init_checkpoint}",
                          "make the task with the model's own tokenizer (ElectraTokenizer.from_pretrained of it), or "
                          "fine-tune with other tokens by electra-finetune --vocab_file --allow_vocabulary_change")


def check_sequence_length(sequence_length, model_config, init_checkpoint):
    """A `max_seq_length` beyond the model's position embeddings is refused (in one line), before training."""
    if sequence_length > model_config.max_position_embeddings:
        raise ValueError(f"--max_seq_length={sequence_length} but {init_checkpoint} has "
                         f"{model_config.max_position_embeddings} positions; pass --max_seq_length="
                         f"{model_config.max_position_embeddings} or less")


def unknown_token_warning(tokenizer, texts):
    """One line naming the `[UNK]` rate of `texts` (their first `_TEXTS_MEASURED`) and its likely cause when
    it is above `UNKNOWN_SHARE`, else None: e.g. Chinese text on an English vocabulary, which would fine-tune
    on `[UNK]`s.

    >>> from electra_tf.text.tokenizer import WordPieceTokenizer
    >>> tokenizer = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "good", "film"])
    >>> unknown_token_warning(tokenizer, ["good film", "film"]) is None
    True
    >>> print(unknown_token_warning(tokenizer, ["好电影", "film"]))  # doctest: +ELLIPSIS
    warning: [UNK] is 75.0% of the tokens of the training texts (above 5%): the texts are mostly Chinese...
    """
    texts = list(itertools.islice(texts, _TEXTS_MEASURED))
    rate = unknown_token_rate(tokenizer, texts)
    if rate <= UNKNOWN_SHARE:
        return None
    cause = ("the texts are mostly Chinese, which this vocabulary does not cover: fine-tune a model whose vocabulary "
             "does, e.g. hfl/chinese-electra-180g-small-discriminator" if chinese_share(texts) > 0.3 else
             "this vocabulary does not cover their characters: fine-tune a model whose vocabulary does (or check "
             "its lowercasing)")
    return (f"warning: [UNK] is {rate:.1%} of the tokens of the training texts (above {UNKNOWN_SHARE:.0%}): {cause}; "
            "no learning rate makes up for text the model cannot read")


@dataclasses.dataclass(frozen=True)
class Finetuned:
    """What `finetune` returns: the model, the dev scores during training, the majority class's dev accuracy
    (`None` where there is none) and the settings chosen for the run (`{field: why}`)."""

    model: keras.Model
    dev_history: list
    dev_baseline: float | None
    defaults: dict


def finetune(task, init_checkpoint, train_examples, callbacks=(), dev_examples=None, eval_every=None,
             log_dir=None, keep_best=False, log_every=50, report=print):
    """Fine-tunes `task`'s model from `init_checkpoint` on `train_examples`; returns it as `Finetuned`. Scores
    `dev_examples` each epoch (at most `DEV_SCORES` times, or every `eval_every` steps) and at the end; `keep_best`
    returns the model of the best dev score; `report=None` is silent. `task.config` ends with the settings used.
    """
    keras.utils.set_random_seed(task.config.seed)
    dataset, batches_per_epoch = task.train_dataset(train_examples)
    if batches_per_epoch < 1:
        raise ValueError(f"{len(train_examples)} training examples make no batch of {task.config.batch_size}")
    report = report or (lambda line: None)
    warning = unknown_token_warning(task.tokenizer, task.texts(train_examples))
    if warning:
        report(warning)
    model = task.build_model(init_checkpoint)
    check_vocabulary_size(task.tokenizer, model, init_checkpoint)
    check_task_vocabulary(task.tokenizer, init_checkpoint)
    check_sequence_length(task.sequence_length, model.config, init_checkpoint)
    if model.hf_architecture is None:
        report(f"note: head={task.config.head!r} has no transformers class: the fine-tuned model loads here and "
               "exports for serving, but not in transformers (head='huggingface', --head=huggingface, does)")
    task.config, defaults = settle(task, len(train_examples), batches_per_epoch, model.config.hidden_size)
    if defaults:
        report(defaults_line(task.config, defaults))
    config = task.config
    steps = max(1, int(batches_per_epoch * config.epochs))
    callbacks = [Progress(steps, config.batch_size, log_every, log_dir, report), *callbacks]
    evaluation, baseline = None, None
    if dev_examples is not None:
        labels = task.class_labels(dev_examples), task.class_labels(train_examples)
        if labels[0] is not None:
            baseline = majority_baseline(labels[1], labels[0])
        every = eval_every or batches_per_epoch * math.ceil(config.epochs / DEV_SCORES)
        evaluation = DevEvaluation(task, dev_examples, every, steps, batches_per_epoch,
                                   log_dir, keep_best, report, baseline=baseline)
        callbacks.append(evaluation)
    rates = layerwise_lr_multipliers(model, config.layerwise_lr_decay, config.original_top_layer_decay)
    optimizer = create_optimizer(config.learning_rate, steps, int(config.warmup_proportion * steps),
                                 weight_decay=config.weight_decay_rate, epsilon=config.adam_epsilon,
                                 lr_multipliers=rates)
    task.compile(model, optimizer)
    report(f"fine-tuning {config.task}: {len(train_examples)} examples, {config.epochs:g} epoch(s) of "
           f"{batches_per_epoch} steps of {config.batch_size}, {steps} steps in all, learning rate "
           f"{config.learning_rate:g}")
    history = model.fit(dataset.repeat(), steps_per_epoch=steps, epochs=1, verbose=0, callbacks=callbacks)
    loss = history.history["loss"][-1]
    if not np.isfinite(loss):
        raise FloatingPointError(f"fine-tuning {config.task}: the training loss is {loss}")
    return Finetuned(model, evaluation.history if evaluation else [], baseline, defaults)
