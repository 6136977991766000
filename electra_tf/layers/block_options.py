"""How `ElectraTransformerLayer` runs, by name: the block's speed switches (its math is the same under each).

`training.speed.StepSpeed` chooses them for the pre-training step (`ElectraPretrainer.compile` turns
`shared_trace` on); what each buys, and the command that measures it: docs/results.md, "What each speed mechanism
buys".

Example:
>>> BlockOptions(shared_trace=True)
BlockOptions(shared_trace=True, own_gradients=True, fused_qkv=True)
"""

import dataclasses


@dataclasses.dataclass(frozen=True)
class BlockOptions:
    """The block's speed switches.

    shared_trace: a network's blocks run their training calls through one traced call of its first block
        (`shared_trace.SharedTrace`), kept a call rather than inlined: a shorter first step.
    own_gradients: in training, the attention's transposes and concatenations carry gradients that make their own
        permutations and sizes (TensorFlow's read them from the forward graph, which made an XLA step through a
        shared trace compile anew every step).
    fused_qkv: q, k and v are projected by one `MatMul` on their concatenated kernels, not three.
    """

    shared_trace: bool = False
    own_gradients: bool = True
    fused_qkv: bool = True
