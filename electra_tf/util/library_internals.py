"""Every use the package makes of another library's non-public API, each in one small named piece: Keras's
optimizer hooks (`DecayInUpdateStep`, `StepStartHook`), Keras's model build before `fit` (`BuiltAtConstruction`),
TensorFlow's fused Adam kernel on raw handles, Keras's
optree namespace, TensorFlow's `_noinline` attribute and raw `SaveV2` and `ResourceApplyAdam` ops, and
tensorflow-text's vocabulary learner.

Each piece says what it relies on, the versions it was checked against and why no public API does it;
`tests/util/test_library_internals.py` checks each one against the installed libraries (a failure names the
piece) and that no other module of the package touches a library's internals.

Checked against keras 3.15.1, keras-hub 0.32.0, tensorflow 2.21.0, tensorflow-text 2.21.1, optree 0.20.0.

Example:
>>> class SGD(StepStartHook, keras.optimizers.SGD):
...     def start_step(self, distribution, learning_rate):
...         self.started = getattr(self, "started", 0) + 1
>>> optimizer = SGD()
>>> optimizer.apply([keras.ops.ones(2)], [keras.Variable(keras.ops.zeros(2))])
>>> optimizer.started
1
"""

import keras
import optree
import tensorflow as tf
from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib


class DecayInUpdateStep:
    """Mixin for a Keras optimizer (before it in the bases) whose `update_step` applies the decoupled weight
    decay itself: Keras then applies none of its own.

    Relies on: Keras's optimizers apply the decay in the private `_apply_weight_decay(self, variables)`
    before the updates (keras 3.12-3.16; checked 3.15.1). Why: Keras has no public switch for where the decay
    is applied; ours runs inside each variable's step (at its own rate, with the step's rate computed once).
    """

    def _apply_weight_decay(self, variables):
        """None here: `update_step` applies it."""


class StepStartHook:
    """Mixin for a Keras optimizer (before it in the bases): `start_step(distribution, learning_rate)` runs
    once per update, in cross-replica context, before the per-variable `update_step`s.

    Relies on: Keras's TensorFlow backend calls the private `_distributed_tf_update_step(self, distribution,
    grads_and_vars, learning_rate)` once per update, and it calls `update_step` per variable (keras
    3.12-3.16; checked 3.15.1). Why: Keras has no public hook between the step's learning rate and the
    per-variable updates, so a step's scalars would otherwise be computed again for every variable.
    """

    def _distributed_tf_update_step(self, distribution, grads_and_vars, learning_rate):
        self.start_step(distribution, learning_rate)
        return super()._distributed_tf_update_step(distribution, grads_and_vars, learning_rate)


class BuiltAtConstruction:
    """Mixin for a Keras model (before it in the bases) whose layers are all built at construction: `fit`,
    `evaluate` and their batch variants build only its optimizer, and take no first batch to build it.

    Relies on: Keras's TensorFlow trainer calls the private `_maybe_symbolic_build(self, iterator=None,
    data_batch=None)` before `fit`/`evaluate`/`train_on_batch`/`test_on_batch` (keras 3.12-3.16; checked 3.15.1).
    Why: under a strategy it takes a first batch even when the model is built (and under
    MultiWorkerMirroredStrategy fails reducing a dict of per-replica values, keras 3.15); no public switch skips it.
    """

    def _maybe_symbolic_build(self, iterator=None, data_batch=None):
        if self.optimizer is not None and not self.optimizer.built:
            with self.distribute_strategy.scope():
                self.optimizer.build(self.trainable_variables)


def resource_apply_adam(variable, momentum, velocity, gradient, **scalars):
    """TensorFlow's fused Adam kernel (`ResourceApplyAdam`) on a variable and its two slots, in place.

    `scalars`: `lr`, `beta1_power`, `beta2_power`, `beta1`, `beta2`, `epsilon` (the op's names).
    Relies on: the resource handle of the `tf.Variable` under a `keras.Variable` (`.value.handle`; `handle`
    is not in `tf.Variable`'s public API; keras 3.15.1 TF backend, tensorflow 2.21.0); the op itself is
    public (`tf.raw_ops`). Why: neither Keras nor TensorFlow's public API has a fused Adam update.
    """
    handles = [(item.value if isinstance(item, keras.Variable) else item).handle
               for item in (variable, momentum, velocity)]
    tf.raw_ops.ResourceApplyAdam(var=handles[0], m=handles[1], v=handles[2], grad=gradient, **scalars)


def save_name_keyed_checkpoint(prefix, tensors):
    """Writes `tensors` (`{name: array}`) as a TF1 checkpoint keyed by those names at `prefix` (the format of
    the original ELECTRA and BERT checkpoints, which `tf.train.load_checkpoint` reads).

    Relies on: TensorFlow's `SaveV2` kernel through `tf.raw_ops` (tensorflow 2.21.0). Why: `tf.train.Checkpoint`
    keys tensors by its object graph, not by free-form names, and no public API writes name-keyed ones.
    """
    names = sorted(tensors)
    tf.raw_ops.SaveV2(prefix=prefix, tensor_names=names, shape_and_slices=[""] * len(names),
                      tensors=[tf.constant(tensors[name]) for name in names])


def register_keras_tree_node(cls, flatten, unflatten):
    """Keras's nested-structure functions (`keras.tree`, what `Model.__call__`, `fit` and `predict` walk
    inputs with) take `cls` apart with `flatten(obj) -> (children, metadata, entries)` and build it back
    with `unflatten(metadata, children)`.

    Relies on: Keras walks structures with optree in optree's namespace "keras" (`keras.src.tree.optree_impl`;
    keras 3.15.1, optree 0.20.0). Why: keras 3.15 exports no registration (`register_tree_node_class` is only
    under `keras.src`).
    """
    optree.register_pytree_node(cls, flatten, unflatten, namespace="keras")


def uninlined_function(function, input_signature):
    """`tf.function(function, input_signature)` that a graph calling it keeps as one call, never inlined.

    Relies on: TensorFlow's function attribute `_noinline` (`experimental_attributes` is public, the
    attribute's name is not; tensorflow 2.21.0). Why: no public option stops a function from being inlined
    into its caller's graph.
    """
    return tf.function(function, input_signature=input_signature, experimental_attributes={"_noinline": True})


def count_words(batches):
    """A `collections.Counter` of the words of an iterable of word arrays (a `tf.data` dataset of `[batch,
    (words)]` strings): tensorflow-text's `count_words` (StopIteration on none).

    Relies on: tensorflow-text's module behind its documented `bert_vocab_from_dataset`,
    `tensorflow_text.tools.wordpiece_vocab.wordpiece_tokenizer_learner_lib` (not in its API docs;
    tensorflow-text 2.21.1). Why: the documented entry pre-tokenizes with tf-text's `BertTokenizer`, whose
    rules are not BERT's (`electra_tf.text.normalization`), so the words are counted here and learned by
    `learn_wordpieces`.
    """
    return wordpiece_tokenizer_learner_lib.count_words(batches)


def learn_wordpieces(word_counts, **options):
    """tensorflow-text's WordPiece vocabulary learner on `(word, count)` pairs: its `learn(word_counts,
    vocab_size, reserved_tokens, lower_thresh, max_token_length, max_unique_chars, slack_ratio,
    include_joiner_token, joiner)`; the same module and reason as `count_words`."""
    return wordpiece_tokenizer_learner_lib.learn(word_counts, **options)
