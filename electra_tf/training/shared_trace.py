"""One traced training call of a block, run on the weights and dropout seeds of every block shaped like it.

A `tf.function` traces the owner block's Python once per input shape; each block that shares it runs that one
graph on its own state (its variables' values in, its dropout seeds' next values out: `keras.StatelessScope` maps
the owner's variables to them while the owner's code runs). TensorFlow builds the call's gradient once per trace,
and the call stays a call (not inlined), so a network's graph and its gradient's are instantiated and optimised
once, not once per block. Keras and keras-hub trace every layer call anew; hence this small module.
"""

import keras
import tensorflow as tf

from electra_tf.util.library_internals import uninlined_function


class SharedTrace:
    """`trace(block, inputs, padding_mask, attention_mask)`: `block`'s training call through `owner`'s one trace.

    Example:
    >>> import numpy as np
    >>> from electra_tf.layers.transformer_layer import ElectraTransformerLayer
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
            outputs = owner.block_call(inputs, padding_mask, attention_mask, training=True)
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
