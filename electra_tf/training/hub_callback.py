"""`PushToHubCallback`, as transformers' TensorFlow one: saves the model being trained (`save_pretrained`) and
pushes it to the Hugging Face hub every epoch or `save_steps` batches, and at the end. The repository is made when
the callback is built, so a missing token or an offline hub is refused before training; a push that fails during
training is a warning (docs/bad_inputs.md).

Example:
>>> import os, tempfile
>>> offline = os.environ.get("HF_HUB_OFFLINE")
>>> os.environ["HF_HUB_OFFLINE"] = "1"
>>> PushToHubCallback(tempfile.mkdtemp(), "me/electra-sst2")  # doctest: +ELLIPSIS
Traceback (most recent call last):
ConnectionError: me/electra-sst2: cannot push to the Hugging Face hub while offline (HF_HUB_OFFLINE=1); ...
>>> PushToHubCallback(tempfile.mkdtemp(), "me/electra-sst2", save_strategy="steps")  # doctest: +ELLIPSIS
Traceback (most recent call last):
ValueError: save_steps=None: save_strategy='steps' needs a positive save_steps
>>> _ = os.environ.pop("HF_HUB_OFFLINE") if offline is None else os.environ.update(HF_HUB_OFFLINE=offline)
"""

import logging

import keras

from electra_tf.checkpoints.publish import create_repository, push_to_hub

SAVE_STRATEGIES = ("epoch", "steps")


class PushToHubCallback(keras.callbacks.Callback):
    """Saves the model to `output_dir` (with `tokenizer`, so the folder loads alone) and pushes it to `repo_id`
    every epoch (`save_strategy="epoch"`) or every `save_steps` batches (`"steps"`)."""

    def __init__(self, output_dir: str, repo_id: str, save_strategy: str = "epoch", save_steps: int | None = None,
                 tokenizer=None, token: str | None = None, private: bool | None = None,
                 revision: str | None = None):
        super().__init__()
        if save_strategy not in SAVE_STRATEGIES:
            raise ValueError(f"save_strategy={save_strategy!r}: one of {', '.join(SAVE_STRATEGIES)}")
        if save_strategy == "steps" and (save_steps is None or save_steps < 1):
            raise ValueError(f"save_steps={save_steps!r}: save_strategy='steps' needs a positive save_steps")
        create_repository(repo_id, token, private, revision)
        self.output_dir, self.repo_id, self.save_strategy, self.save_steps = output_dir, repo_id, save_strategy, \
            save_steps
        self.tokenizer, self.token, self.private, self.revision = tokenizer, token, private, revision
        self.pushed = []  # the URL of each commit made
        self._step = 0
        self._pushed_at = None
        self._failed = False

    def set_model(self, model):
        if not hasattr(model, "save_pretrained"):
            raise ValueError(f"PushToHubCallback: a {type(model).__name__} has no save_pretrained; train one of "
                             "electra_tf's models")
        super().set_model(model)

    def on_train_batch_end(self, batch, logs=None):
        self._step += 1
        if self.save_strategy == "steps" and self._step % self.save_steps == 0:
            self._push(f"step {self._step}")

    def on_epoch_end(self, epoch, logs=None):
        if self.save_strategy == "epoch":
            self._push(f"epoch {epoch + 1}")

    def on_train_end(self, logs=None):
        if self._pushed_at != self._step or self._failed:  # not pushed yet at this step
            self._push("end of training", final=True)

    def _push(self, when, final=False):
        self._pushed_at = self._step
        self.model.save_pretrained(self.output_dir, tokenizer=self.tokenizer)
        try:
            self.pushed.append(push_to_hub(self.output_dir, self.repo_id, token=self.token, private=self.private,
                                           revision=self.revision, commit_message=f"Training in progress: {when}"))
            self._failed = False
        except (ConnectionError, PermissionError) as error:  # (`push_to_hub`'s one-line answers)
            if final:
                raise
            self._failed = True
            logging.warning("push of %s failed: %s; training goes on (the model is in %s; the next save pushes it)",
                            when, error, self.output_dir)
