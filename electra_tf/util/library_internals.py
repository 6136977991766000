"""Every use the package makes of another library's non-public API, each a small named piece that says what it
relies on, the versions it was checked on and why no public API does it. `tests/util/test_library_internals.py`
checks each against the installed libraries, and that no other module touches a library's internals.

Example:
>>> optimizer = keras.optimizers.SGD(gradient_accumulation_steps=2)
>>> optimizer.apply([keras.ops.ones(2)], [keras.Variable(keras.ops.zeros(2))])
>>> int(micro_step_counter(optimizer)), int(optimizer.iterations)
(1, 0)
"""

import keras
import optree
import tensorflow as tf
from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib


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


def variable_index(optimizer, variable):
    """The index in `optimizer`'s built variable list of `variable`, or of the replica copy `update_step`
    receives under a `tf.distribute` strategy.

    Relies on: Keras's private `Optimizer._get_variable_index(variable)` (keras 3.12-3.16; checked 3.15.1), the
    lookup Keras's own optimizers and its custom-optimizer example (`keras.optimizers.Optimizer`'s docstring)
    use. Why: Keras's public API gives `update_step` a variable, not its index.
    """
    return optimizer._get_variable_index(variable)


def micro_step_counter(optimizer):
    """`optimizer`'s counter of `apply` calls (with gradient accumulation over k, k per update; the public
    `iterations` counts updates), the variable its learning-rate schedule reads.

    Relies on: Keras's private `Optimizer._iterations` (keras 3.12-3.16; checked 3.15.1). Why: no public
    attribute holds it under gradient accumulation.
    """
    return optimizer._iterations


FUSED_ADAM_KERAS = ((3, 12), (3, 16))  # the Keras minor versions `fused_adam_update` was checked on


def fused_adam_checked(version=keras.version()):
    """Whether `fused_adam_update` was checked on Keras `version` (`FUSED_ADAM_KERAS`; default: the installed one).

    >>> fused_adam_checked("3.15.1"), fused_adam_checked("3.99.0")
    (True, False)
    """
    low, high = FUSED_ADAM_KERAS
    return low <= tuple(int(part) for part in version.split(".")[:2]) <= high


def fused_adam_update(optimizer, variable, gradient, **scalars):
    """TensorFlow's fused Adam kernel (`ResourceApplyAdam`) on `variable` and its two slots in `optimizer` (a
    Keras Adam), in place: Keras's Adam update in one op.

    `scalars`: `lr`, `beta1_power`, `beta2_power`, `beta1`, `beta2`, `epsilon` (the op's names).
    Relies on: Keras's Adam keeps a variable's slots in the private lists `_momentums` and `_velocities` at
    `variable_index`, and the resource handle of the `tf.Variable` under a `keras.Variable` (`.value.handle`;
    `handle` is not in `tf.Variable`'s public API) (keras 3.12-3.16, checked 3.15.1; tensorflow 2.21.0); the op
    itself is public (`tf.raw_ops`). Why: neither Keras nor TensorFlow's public API has a fused Adam update.
    """
    index = variable_index(optimizer, variable)
    handles = [(item.value if isinstance(item, keras.Variable) else item).handle
               for item in (variable, optimizer._momentums[index], optimizer._velocities[index])]
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
    """`tf.function(function, input_signature, autograph=False)` that a graph calling it keeps as one call, never
    inlined.

    Relies on: TensorFlow's function attribute `_noinline` (`experimental_attributes` is public, the
    attribute's name is not; tensorflow 2.21.0). Why: no public option stops a function from being inlined
    into its caller's graph.
    """
    return tf.function(function, input_signature=input_signature, autograph=False,
                       experimental_attributes={"_noinline": True})


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
