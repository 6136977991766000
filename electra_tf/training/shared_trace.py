"""One traced training call of a block, run on the weights and dropout seeds of every block shaped like it
(`keras.StatelessScope` maps the owner's variables to theirs), kept a call: a network's graph and its gradient
are built once, not once per block, for a shorter first step. `StepSpeed.shared_trace` switches it.
"""

import keras
import tensorflow as tf

from electra_tf.layers.transformer_layer import ElectraTransformerLayer, is_training
from electra_tf.util.library_internals import uninlined_function


class SharedTrace:
    """`trace(block, inputs, padding_mask, attention_mask)`: `block`'s training call through `owner`'s one trace.

    Example:
    >>> import numpy as np
    >>> blocks = [ElectraTransformerLayer(intermediate_dim=8, num_heads=2, dropout=0.1) for _ in range(2)]
    >>> trace = SharedTrace(blocks[0])
    >>> step = tf.function(lambda x: trace(blocks[1], trace(blocks[0], x, None, None), None, None))
    >>> step(np.ones((1, 3, 4), "float32")).shape
    TensorShape([1, 3, 4])
    """

    def __init__(self, owner):
        self.owner = owner
        self.function = uninlined_function(tf.autograph.experimental.do_not_convert(self._owner_call), None)

    def _owner_call(self, inputs, padding_mask, attention_mask, state):
        owner = self.owner
        with keras.StatelessScope(state_mapping=list(zip(owner.variables, state))) as scope:
            outputs = type(owner).call(owner, inputs, padding_mask, attention_mask, training=True)
            return outputs, [scope.get_current_value(v) for v in owner.non_trainable_variables]

    def __call__(self, block, inputs, padding_mask, attention_mask):
        if not block.built:  # called directly, not through the block's `__call__`
            block.build(inputs.shape)
        if [v.shape for v in block.variables] != [v.shape for v in self.owner.variables]:
            raise ValueError(f"{block.name} cannot share the trace of {self.owner.name}: other weight shapes")
        state = [tf.convert_to_tensor(v) for v in block.variables]  # values (a variable would be a handle)
        outputs, seeds = self.function(inputs, padding_mask, attention_mask, state)
        for variable, value in zip(block.non_trainable_variables, seeds):
            variable.assign(value)
        return outputs


def _calling_through(trace, block):
    """`block`'s `call`, its training calls inside a `tf.function` run through `trace` (its `trace` attribute)."""
    own_call = type(block).call.__get__(block)

    def call(inputs, padding_mask=None, attention_mask=None, training=None, return_attention_scores=False):
        if is_training(training) and tf.inside_function() and not return_attention_scores:
            return trace(block, inputs, padding_mask, attention_mask)
        return own_call(inputs, padding_mask, attention_mask, training, return_attention_scores)
    call.trace = trace
    return call


def share_traces(model, shared=True):
    """With `shared`, the `ElectraTransformerLayer`s of each network in `model` run their training calls through
    one `SharedTrace` of its first block; without, through their own calls. Returns how many networks hold blocks.

    Example:
    >>> from electra_tf import ElectraConfig, ElectraModel
    >>> encoder = ElectraModel(ElectraConfig(vocab_size=100, embedding_size=16, hidden_size=32, num_layers=2,
    ...                                      num_heads=2, intermediate_size=64))
    >>> share_traces(encoder)
    1
    """
    groups = 0
    for layer in [model, *_sublayers(model)]:
        blocks = [child for child in getattr(layer, "layers", []) if isinstance(child, ElectraTransformerLayer)]
        if blocks:
            trace = SharedTrace(blocks[0]) if shared else None
            for block in blocks:
                if trace:
                    block.call = _calling_through(trace, block)
                else:
                    vars(block).pop("call", None)  # the class's own
            groups += 1
    return groups


def _sublayers(layer):
    for child in getattr(layer, "layers", []):
        yield child
        yield from _sublayers(child)
