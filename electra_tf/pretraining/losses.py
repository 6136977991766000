"""The pre-training losses as plain functions of the step's `PretrainingOutputs` (Clark et al., 2020; COCO-LM).

Each returns this replica's share of the global mean (over `replicas.denominators`), so every variant steps on R
replicas, or k accumulated micro-batches, as on one batch; the objectives and training algorithms say which a
step minimises.
"""

import keras
import tensorflow as tf

EPSILON = 1e-6  # As the original's `sum(w * loss) / (sum(w) + 1e-6)`.


def mlm_loss(masked, logits, denominators):
    """A masked LM's cross-entropy summed over this replica's masked slots, over the global count."""
    per_slot = keras.losses.sparse_categorical_crossentropy(masked.labels, logits, from_logits=True)
    return tf.reduce_sum(per_slot * masked.weights) / (denominators["predictions"] + EPSILON)


def rtd_loss(outputs, denominators):
    """The discriminator's sigmoid cross-entropy summed over this replica's real tokens, over the global count."""
    return tf.reduce_sum(rtd_per_token(outputs) * outputs.real_tokens) / (denominators["tokens"] + EPSILON)


def rtd_per_token(outputs):
    """The discriminator's sigmoid cross-entropy at every position, `[batch, sequence]`."""
    return tf.nn.sigmoid_cross_entropy_with_logits(labels=outputs.rtd_labels, logits=outputs.rtd_logits)


def at_slots(values, masked):
    """`values` `[batch, sequence]` read at the masked positions, `[batch, P]`."""
    return tf.gather(values, masked.positions, batch_dims=1)


def masked_rtd_loss(outputs, denominators):
    """ELECTRA 15 %: the RTD loss over the masked positions, over the global number of predictions.

    >>> from electra_tf.pretraining.masking import MaskedBatch
    >>> from electra_tf.pretraining.outputs import PretrainingOutputs
    >>> masked = MaskedBatch(None, tf.constant([[1]]), tf.constant([[1.0]]), None)
    >>> outputs = PretrainingOutputs(masked, None, None, rtd_labels=tf.constant([[0.0, 1.0]]),
    ...                              rtd_logits=tf.constant([[5.0, 0.0]]))
    >>> round(float(masked_rtd_loss(outputs, {"predictions": 1.0})), 4)   # log 2: only the masked position
    0.6931
    """
    masked = outputs.masked
    return tf.reduce_sum(at_slots(rtd_per_token(outputs), masked) * masked.weights) / (
        denominators["predictions"] + EPSILON)


def copy_log_probabilities(outputs, main_mlm_logits):
    """`log p(original token)` at every position under the copy mechanism,
    `p(x_t) = D·[x_t = input_t] + (1 - D)·softmax_t(x_t)` with `D = σ(-rtd_logit)`, `[batch, sequence]`."""
    log_softmax = tf.nn.log_softmax(main_mlm_logits)
    original = tf.gather(log_softmax, outputs.input_ids, batch_dims=2)
    # The RTD logit is "replaced"; copying is its complement: log D = log σ(-z), log(1 - D) = log σ(z).
    log_copy, log_generate = tf.math.log_sigmoid(-outputs.rtd_logits), tf.math.log_sigmoid(outputs.rtd_logits)
    copied = tf.equal(outputs.rtd_labels, 0.0)  # the input token is the original one
    return tf.where(copied, tf.experimental.numpy.logaddexp(log_copy, log_generate + original),
                    log_generate + original)


def copy_mlm_loss(outputs, main_mlm_logits, denominators):
    """The copy mechanism's cross-entropy over every real token, over the global token count."""
    return -tf.reduce_sum(copy_log_probabilities(outputs, main_mlm_logits) * outputs.real_tokens) / (
        denominators["tokens"] + EPSILON)


def copy_predictions(outputs, main_mlm_logits):
    """The most probable token at each position under the copy mechanism, `[batch, sequence]`."""
    probabilities = tf.nn.softmax(main_mlm_logits)
    copy = tf.sigmoid(-outputs.rtd_logits)
    input_ids = outputs.corrupted_ids
    copied = copy + (1.0 - copy) * tf.gather(probabilities, input_ids, batch_dims=2)
    best = tf.argmax(probabilities, axis=-1, output_type=tf.int32)
    return tf.where(copied >= (1.0 - copy) * tf.reduce_max(probabilities, axis=-1), input_ids, best)


def reinforce_losses(outputs, baseline_logits, denominators):
    """Adversarial training (Appendix F): `(policy_loss, baseline_loss)` over the global number of predictions.
    The reward of a sampled token is the discriminator's loss on it (a constant here); the policy loss's gradient is
    REINFORCE's for the generator maximising it, against the baseline `-log σ(baseline_logits)`, which learns the
    reward by cross-entropy (target `exp(-reward)`)."""
    masked = outputs.masked
    reward = tf.stop_gradient(at_slots(rtd_per_token(outputs), masked))
    advantage = tf.stop_gradient(reward + tf.math.log_sigmoid(baseline_logits))  # reward - baseline
    log_probability = tf.gather(tf.nn.log_softmax(outputs.mlm_logits), outputs.sampled, batch_dims=2)
    count = denominators["predictions"] + EPSILON
    policy = -tf.reduce_sum(log_probability * advantage * masked.weights) / count
    baseline = tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.exp(-reward), logits=baseline_logits)
    return policy, tf.reduce_sum(baseline * masked.weights) / count
