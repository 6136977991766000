"""The masked LM kept on the discriminator's encoder (Replace MLM, All-Tokens MLM, CLM): its head, its logits and
its trackers, as plain functions the three objectives call.

The head is the generator's kind (`layers.heads.masked_lm_head`) tied to the discriminator's word embeddings,
held by the pre-trainer as `main_mlm_head` (its checkpoints use that name).

Example:
>>> from electra_tf.config import ElectraConfig
>>> from electra_tf.models.discriminator import ElectraDiscriminator
>>> config = ElectraConfig(vocab_size=30, embedding_size=8, hidden_size=16, num_layers=1, num_heads=2,
...                        intermediate_size=32)
>>> kept_mlm_head(ElectraDiscriminator(config), config).name
'main_mlm_head'
"""

import keras
import tensorflow as tf

from electra_tf.layers.heads import masked_lm_head


def kept_mlm_head(discriminator, config):
    """A masked-LM head on `discriminator`'s encoder, tied to its word embeddings, built."""
    head = masked_lm_head(discriminator.backbone.embedding.word_embeddings, config, name="main_mlm_head")
    head.build((None, None, config.hidden_size))
    return head


def kept_mlm_logits(head, discriminated, positions=None):
    """The head's float32 logits on the discriminator's last hidden state at `positions` (`[batch, P]`; None:
    at every position)."""
    hidden = discriminated["last_hidden_state"]
    if positions is None:
        shape = tf.shape(hidden)[:2]
        positions = tf.broadcast_to(tf.range(shape[1]), shape)
    return tf.cast(head(hidden, mask_positions=positions), tf.float32)


def kept_mlm_trackers():
    """The trackers of the kept masked LM: its loss and its accuracy."""
    return [keras.metrics.Mean(name="main_mlm_loss"), keras.metrics.Accuracy(name="main_mlm_accuracy")]


def update_kept_mlm_trackers(trackers, main_mlm_loss, predicted, replicas):
    """Updates `kept_mlm_trackers()` with the loss share and the `(labels, predictions, weights)` scored."""
    loss, accuracy = trackers
    loss.update_state(main_mlm_loss * replicas)
    accuracy.update_state(*predicted)
