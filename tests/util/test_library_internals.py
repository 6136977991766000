"""Library internals live in `electra_tf/util/library_internals.py` only, and what each relies on still holds.

- Every other module is parsed with `ast`; a touch of a library's internals is an import of a private package
  (`keras.src`, `keras_hub.src`, `tensorflow.python`, tensorflow-text's `python`/`core` and its vocabulary
  learner's library, optree, which Keras uses privately), a `_name` attribute of another library's object (a
  name the package never defines itself, or one a Keras/keras-hub base class keeps privately), a method
  overriding a private method of Keras's or keras-hub's base classes, or a private TensorFlow function
  attribute (`experimental_attributes={"_x": ...}`).
  `PENDING` lists the touches left in files other sessions own (by file or folder), each to move into
  `library_internals`.
- One check per piece of `library_internals`: a new Keras, keras-hub, TensorFlow or optree that changes what
  the piece relies on fails here with the piece's name.
"""

import ast
import inspect
import os
import pathlib
import tempfile

import keras
import keras_hub
import numpy as np
import pytest
import tensorflow as tf

from electra_tf.util import library_internals

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "electra_tf"
INTERNALS = "electra_tf/util/library_internals.py"
PRIVATE_PACKAGES = ("keras.src", "keras_hub.src", "tensorflow.python", "tensorflow_text.python",
                    "tensorflow_text.core", "tensorflow_text.tools.wordpiece_vocab.wordpiece_tokenizer_learner_lib",
                    "optree")
LIBRARY_BASES = (keras.Model, keras.layers.Layer, keras.optimizers.Optimizer, keras.optimizers.AdamW,
                 keras_hub.tokenizers.WordPieceTokenizer, keras_hub.models.TextClassifier,
                 keras_hub.models.TextClassifierPreprocessor)
PUBLIC_PRIVATE = {"_replace", "_fields", "_asdict"}  # namedtuple's public API, underscored against clashes
PENDING = {}


def _trees():
    return {str(path.relative_to(PACKAGE.parent)): ast.parse(path.read_text(encoding="utf-8"))
            for path in sorted(PACKAGE.rglob("*.py"))}


def _defined_names(trees):
    return {node.name for tree in trees.values() for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


def _own_names(trees):
    names = _defined_names(trees)
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and \
                    isinstance(node.value, ast.Name) and node.value.id == "self":
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return names


def _library_private_names():
    """`(methods, instance attributes)`: the private names the library base classes (and theirs) define."""
    classes = {cls for base in LIBRARY_BASES for cls in base.__mro__
               if cls.__module__.split(".")[0] in ("keras", "keras_hub")}
    methods = {name for cls in classes for name in vars(cls) if name.startswith("_") and not name.startswith("__")}
    attributes = set()
    for cls in classes:
        for node in ast.walk(ast.parse(inspect.getsource(inspect.getmodule(cls)))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" \
                    and node.attr.startswith("_") and not node.attr.startswith("__"):
                attributes.add(node.attr)
    return methods, attributes - methods


def touches(trees, own=None):
    """`{(file, touch)}` of the modules in `trees` (`{file: ast}`)."""
    own = _own_names(trees) if own is None else own
    defined = _defined_names(trees)
    methods, attributes = _library_private_names()
    found = set()
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                modules = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            else:
                modules = []
            found |= {(path, f"import {module}") for module in modules
                      if any(module == name or module.startswith(name + ".") for name in PRIVATE_PACKAGES)}
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__") \
                    and node.attr not in PUBLIC_PRIVATE:
                by_self = isinstance(node.value, ast.Name) and node.value.id == "self"
                if node.attr not in own or by_self and node.attr in attributes and node.attr not in defined:
                    found.add((path, node.attr))
            if isinstance(node, ast.Attribute) and node.attr == "raw_ops":
                found.add((path, "tf.raw_ops"))
            if isinstance(node, ast.ClassDef):
                found |= {(path, f"def {item.name}") for item in node.body
                          if isinstance(item, ast.FunctionDef) and item.name in methods}
            if isinstance(node, ast.keyword) and node.arg == "experimental_attributes" and \
                    isinstance(node.value, ast.Dict):
                found |= {(path, f"experimental_attributes {key.value}") for key in node.value.keys
                          if isinstance(key, ast.Constant) and str(key.value).startswith("_")}
    return found


def test_no_module_but_library_internals_touches_a_library_s_internals():
    trees = _trees()
    found = {touch for touch in touches(trees) if touch[0] != INTERNALS}

    def pending(path, touch):
        return [entry for entry in PENDING if path.startswith(entry[0]) and touch == entry[1]]

    assert sorted(touch for touch in found if not pending(*touch)) == [], \
        "a library's internals: use public API, or add it to library_internals"
    assert sorted(set(PENDING) - {entry for touch in found for entry in pending(*touch)}) == [], \
        "no longer touched: take it off PENDING"


def test_the_detector_finds_each_kind_of_touch():
    source = '''
import optree
from keras.src.tree import tree_api
import tensorflow.python.ops
from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib
class Optimizer(keras.optimizers.AdamW):
    def _apply_weight_decay(self, variables):
        self._fast_word_piece = None
        return variables._unknown_name
f = tf.function(g, experimental_attributes={"_noinline": True})
tf.raw_ops.SaveV2(prefix="p", tensor_names=[], shape_and_slices=[], tensors=[])
'''
    found = {touch for _, touch in touches({"x.py": ast.parse(source)}, own={"_fast_word_piece"})}
    assert found == {"import optree", "import keras.src.tree", "import keras.src.tree.tree_api",
                     "import tensorflow.python.ops",
                     "import tensorflow_text.tools.wordpiece_vocab.wordpiece_tokenizer_learner_lib",
                     "def _apply_weight_decay", "_fast_word_piece", "_unknown_name",
                     "experimental_attributes _noinline", "tf.raw_ops"}


# One check per piece of library_internals, named after it.

def check_BuiltAtConstruction():
    assert list(inspect.signature(keras.Model._maybe_symbolic_build).parameters) == ["self", "iterator",
                                                                                     "data_batch"]

    calls = []

    class Built(library_internals.BuiltAtConstruction, keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(1)
            self.dense.build((None, 2))

        def call(self, x):
            return self.dense(x)

        def _maybe_symbolic_build(self, iterator=None, data_batch=None):
            calls.append("build")
            super()._maybe_symbolic_build(iterator, data_batch)

        def train_step(self, data):
            return {"steps": tf.constant(1.0)}

    model = Built()
    model.compile(optimizer="sgd")
    model.fit(np.ones((2, 2)), np.ones((2, 1)), batch_size=2, verbose=0)
    assert calls == ["build"] and model.optimizer.built


def check_variable_index():
    """Keras's own index, for a variable and, under a strategy, for the replica copy `update_step` receives."""
    indices = []

    class Recording(keras.optimizers.SGD):
        def update_step(self, gradient, variable, learning_rate):
            indices.append(library_internals.variable_index(self, variable))

    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    with strategy.scope():
        variables = [keras.Variable([1.0]), keras.Variable([2.0])]
        optimizer = Recording()
        optimizer.build(variables)
    tf.function(lambda: strategy.run(lambda: optimizer.apply([tf.ones(1)] * 2, variables)))()
    assert indices == [0, 1]


def check_micro_step_counter():
    variable, optimizer = keras.Variable([1.0]), keras.optimizers.SGD(gradient_accumulation_steps=2)
    optimizer.build([variable])
    for _ in range(3):
        optimizer.apply([tf.ones(1)], [variable])
    counter = library_internals.micro_step_counter(optimizer)
    assert isinstance(counter, keras.Variable) and int(counter) == 3 and int(optimizer.iterations) == 1


def check_fused_adam_checked():
    assert library_internals.fused_adam_checked()  # the installed Keras is one it was checked on
    assert not library_internals.fused_adam_checked("3.17.0")


def check_fused_adam_update():
    """The kernel updates the variable and Keras's own slots of it as Keras's Adam step does."""
    variables = [keras.Variable([1.0, 1.0]), keras.Variable([3.0, 3.0])]
    optimizer = keras.optimizers.Adam()
    optimizer.build(variables)
    library_internals.fused_adam_update(optimizer, variables[1], tf.constant([1.0, -2.0]), lr=0.1, beta1_power=0.0,
                                        beta2_power=0.0, beta1=0.9, beta2=0.999, epsilon=0.0)
    # m = 0.1·g, v = 0.001·g², w -= lr·m/√v (the β powers 0: no bias correction)
    np.testing.assert_allclose(variables[1].numpy(), [2.6837722, 3.3162278], rtol=1e-5)
    np.testing.assert_allclose(variables[0].numpy(), [1.0, 1.0])
    momentum = [v for v in optimizer.variables if v.path.endswith("_momentum")]
    np.testing.assert_allclose(np.stack(momentum), [[0.0, 0.0], [0.1, -0.2]], rtol=1e-6)


def check_save_name_keyed_checkpoint():
    prefix = os.path.join(tempfile.mkdtemp(), "model.ckpt")
    library_internals.save_name_keyed_checkpoint(prefix, {"electra/w": np.ones([2, 3], "float32"),
                                                          "global_step": np.int64(7)})
    reader = tf.train.load_checkpoint(prefix)
    assert reader.get_variable_to_shape_map() == {"electra/w": [2, 3], "global_step": []}
    assert reader.get_tensor("global_step") == 7


class _Pair(dict):
    pass


library_internals.register_keras_tree_node(_Pair, lambda pair: ([pair[key] for key in sorted(pair)], sorted(pair),
                                                                 sorted(pair)),
                                           lambda keys, values: _Pair(zip(keys, values)))


def check_register_keras_tree_node():
    pair = _Pair(b=2, a=1)
    assert keras.tree.flatten(pair) == [1, 2]
    doubled = keras.tree.map_structure(lambda value: 2 * value, pair)
    assert type(doubled) is _Pair and doubled == {"a": 2, "b": 4}


def check_uninlined_function():
    inner = library_internals.uninlined_function(lambda x: x + 1, [tf.TensorSpec([], tf.float32)])
    graph = tf.function(lambda x: inner(x) * 2).get_concrete_function(tf.TensorSpec([], tf.float32)).graph
    definition = graph.as_graph_def()
    (call,) = [node for node in definition.node if node.op in ("PartitionedCall", "StatefulPartitionedCall")]
    (function,) = [f for f in definition.library.function if f.signature.name == call.attr["f"].func.name]
    assert function.attr["_noinline"].b


def check_count_words():
    batches = tf.data.Dataset.from_tensor_slices([["a", "b"], ["a", "c"]]).batch(1)
    assert library_internals.count_words(batches) == {"a": 2, "b": 1, "c": 1}


def check_learn_wordpieces():
    vocabulary = library_internals.learn_wordpieces(
        [("fox", 5), ("foxes", 3)], vocab_size=20, reserved_tokens=["[UNK]"], lower_thresh=1, max_token_length=50,
        max_unique_chars=10, slack_ratio=0.05, include_joiner_token=True, joiner="##")
    assert vocabulary[0] == "[UNK]" and {"f", "o", "x", "##x"} <= set(vocabulary), vocabulary


CHECKS = {name[len("check_"):]: check for name, check in dict(globals()).items() if name.startswith("check_")}


def test_every_piece_of_library_internals_has_a_check():
    pieces = {name for name, value in vars(library_internals).items()
              if not name.startswith("_") and getattr(value, "__module__", None) == library_internals.__name__}
    assert pieces == set(CHECKS)


@pytest.mark.parametrize("piece", sorted(CHECKS))
def test_what_each_piece_relies_on_still_holds(piece):
    try:
        CHECKS[piece]()
    except Exception as error:
        pytest.fail(f"library_internals.{piece} no longer holds on keras {keras.__version__}, keras-hub "
                    f"{keras_hub.__version__}, tensorflow {tf.__version__}: {type(error).__name__}: {error} "
                    f"(see its docstring for what it relies on)")
