"""XLA for a pre-training step under a multi-replica strategy, where Keras's whole-step XLA fails (it reads
replica variables across devices): each replica's forward and backward pass is compiled alone, per phase.

Example:
>>> jit = ReplicaJit(jit_compile=True)   # one device: Keras's own XLA
>>> jit.keras_jit_compile, jit.step(len, "joint") is len
(True, True)
"""

import tensorflow as tf


class ReplicaJit:
    """What `compile(jit_compile=...)` means in the current strategy: Keras's option, and the replica steps."""

    def __init__(self, jit_compile):
        self.per_replica = jit_compile is True and tf.distribute.get_strategy().num_replicas_in_sync > 1
        self.keras_jit_compile = False if self.per_replica else jit_compile
        self.compiled = {}

    def step(self, function, phase):
        """`function` (one replica's forward and backward pass), XLA-compiled per `phase` when per replica."""
        if not self.per_replica:
            return function
        return self.compiled.setdefault(phase, tf.function(function, jit_compile=True))
