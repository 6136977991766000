"""tf2onnx's graph of a model rewritten into the graph transformers' BERT exports have (the same arithmetic), so that
ONNX Runtime's transformer fusions match it and OpenVINO reads it (docs/serving.md, "What ONNX Runtime fuses").

Example:
>>> graph = onnx.helper.make_graph([onnx.helper.make_node("Relu", ["x"], ["y"])], "g", [], [])
>>> as_transformers_graph(onnx.helper.make_model(graph), num_heads=4)
{'layer_norms': 0, 'embeddings': 0, 'attention': 0, 'gelu': 0}
"""

import collections

import numpy as np
import onnx
from onnx import numpy_helper
from onnxruntime.transformers.onnx_model import OnnxModel

# The 13 ops tf2onnx writes for one Keras `LayerNormalization` (TensorFlow's moments and `batch_normalization`
# arithmetic), by their names' ends under the layer's scope: x -> `moments/mean` ... `add_2` -> the output.
LAYER_NORM_OPS = ("moments/mean", "Neg", "moments/SquaredDifference", "moments/SquaredDifference__", "moments/variance",
                  "add", "Rsqrt", "Rsqrt__", "mul", "mul_2", "mul_1", "add_1", "add_2")
# tf2onnx writes a mean over the last axis of a 3-D tensor as GlobalAveragePool (the mean over axes 2 and on)
MEANS = ("ReduceMean", "GlobalAveragePool")


def _weight(graph, name):
    """The initializer `name` of `graph` as an array, or None."""
    tensor = next((tensor for tensor in graph.initializer if tensor.name == name), None)
    return None if tensor is None else numpy_helper.to_array(tensor)


def _add_weight(graph, name, value):
    graph.initializer.append(numpy_helper.from_array(np.asarray(value), name))
    return name


def _node(graph, op_type, inputs, name, **attributes):
    """Appends a node named `name` (its output `name:0`); returns the output's name."""
    graph.node.append(onnx.helper.make_node(op_type, inputs, [f"{name}:0"], name=name, **attributes))
    return f"{name}:0"


def _producers(graph):
    return {output: node for node in graph.node for output in node.output}


def _consumers(graph):
    consumers = collections.defaultdict(list)
    for node in graph.node:
        for name in node.input:
            consumers[name].append(node)
    return consumers


def _bypass(graph, node):
    """Every use of `node`'s output reads its first input instead (unless the output is the graph's)."""
    if node.output[0] in {output.name for output in graph.output}:
        return
    for other in graph.node:
        other.input[:] = [node.input[0] if name == node.output[0] else name for name in other.input]


def _prune_and_sort(proto):
    """`proto` without the nodes and weights nothing reads, its nodes in topological order (ONNX Runtime's
    `OnnxModel`, what `optimize_model` returns)."""
    model = OnnxModel(proto)
    model.prune_graph(allow_remove_graph_inputs=False)
    model.topological_sort()


def one_op_layer_norms(proto):
    """Each layer norm tf2onnx wrote as `LAYER_NORM_OPS` made ONNX's one `LayerNormalization` op (12 ops fewer, and the
    op ONNX Runtime's fusions start from); how many it replaced."""
    graph, weights = proto.graph, {tensor.name: tensor for tensor in proto.graph.initializer}
    replaced, replacements = set(), {}
    for mean in [node for node in graph.node if node.op_type in MEANS and node.name.endswith("/moments/mean")]:
        scope = mean.name[:-len("moments/mean")]
        ops = {node.name[len(scope):].rstrip("0123456789") if "__" in node.name else node.name[len(scope):]: node
               for node in graph.node if node.name.startswith(scope)}
        if sorted(ops) != sorted(LAYER_NORM_OPS) or ops["add"].input[1] not in weights:
            continue
        gamma, beta = ops["mul"].input[1], ops["add_1"].input[1]
        for name in (gamma, beta):  # [1, hidden] -> [hidden], as LayerNormalization takes them
            weights[name].CopyFrom(numpy_helper.from_array(numpy_helper.to_array(weights[name]).reshape(-1), name))
        epsilon = float(numpy_helper.to_array(weights[ops["add"].input[1]]))
        replacements[ops["add_2"].name] = onnx.helper.make_node(
            "LayerNormalization", [mean.input[0], gamma, beta], list(ops["add_2"].output), name=scope + "LayerNorm",
            axis=-1, epsilon=epsilon)
        replaced |= {node.name for node in ops.values()}
    nodes = [replacements.get(node.name, node) for node in graph.node
             if node.name in replacements or node.name not in replaced]
    del graph.node[:]
    graph.node.extend(nodes)
    return len(replacements)


def _plain_ids(graph, name):
    """The ids behind tf2onnx's negative-index fix-up of a gather's indices (`Where(ids < 0, ids + n, ids)`):
    ONNX's `Gather` takes negative indices itself."""
    node = _producers(graph).get(name)
    return node.input[2] if node is not None and node.op_type == "Where" else name


def _transformers_embeddings(graph):
    """The embedding block as transformers' BERT graph: `LayerNorm(word[ids] + type[types] + position[positions])`
    with `positions = Slice(arange(P)[None], 0, ids.shape[1])` (was: the table's first rows broadcast), and a dense
    layer on 3-D inputs (tf.tensordot: reshape, 2-D MatMul, reshape) as one `MatMul`. Returns the blocks rewritten."""
    producers, count = _producers(graph), 0
    for reshape in [node for node in graph.node if node.op_type == "Reshape" and node.name.endswith("/Tensordot")]:
        matmul = producers.get(reshape.input[0])
        rows = producers.get(matmul.input[0]) if matmul is not None and matmul.op_type == "MatMul" else None
        kernel = _weight(graph, matmul.input[1]) if rows is not None else None
        shape = _weight(graph, rows.input[1]) if rows is not None and rows.op_type == "Reshape" else None
        if kernel is None or shape is None or list(shape) != [-1, kernel.shape[0]]:
            continue
        reshape.CopyFrom(onnx.helper.make_node("MatMul", [rows.input[0], matmul.input[1]], list(reshape.output),
                                               name=reshape.name))
    for norm in [node for node in graph.node if node.op_type == "LayerNormalization"]:
        total = producers.get(norm.input[0])
        parents = [producers.get(name) for name in total.input] if total is not None and total.op_type == "Add" else []
        ops = sorted((parent.op_type, index) for index, parent in enumerate(parents) if parent is not None)
        if [op for op, _ in ops] != ["Add", "Gather"]:
            continue
        words_and_positions, types = parents[ops[0][1]], parents[ops[1][1]]
        pair = [producers.get(name) for name in words_and_positions.input]
        if sorted(node.op_type for node in pair if node is not None) != ["Expand", "Gather"]:
            continue
        words = next(node for node in pair if node.op_type == "Gather")
        positions = producers.get(next(node for node in pair if node.op_type == "Expand").input[0])
        table = _weight(graph, positions.input[0]) if positions is not None and positions.op_type == "Slice" else None
        if table is None:
            continue
        ids, scope = _plain_ids(graph, words.input[1]), norm.name.rsplit("/", 2)[0] + "/"
        words.input[1], types.input[1] = ids, _plain_ids(graph, types.input[1])
        length = _node(graph, "Gather", [_node(graph, "Shape", [ids], scope + "ids_shape"),
                                         _add_weight(graph, scope + "one", np.int64(1))], scope + "length", axis=0)
        end = _node(graph, "Unsqueeze", [length, _add_weight(graph, scope + "axis_0", np.array([0], np.int64))],
                    scope + "end")
        position_ids = _node(graph, "Slice", [
            _add_weight(graph, scope + "position_ids", np.arange(table.shape[0], dtype=np.int64)[None]),
            _add_weight(graph, scope + "start", np.array([0], np.int64)), end,
            _add_weight(graph, scope + "axis_1", np.array([1], np.int64))], scope + "positions")
        embedded = _node(graph, "Add", [words.output[0], types.output[0]], scope + "words_and_types")
        embedded = _node(graph, "Add", [embedded, _node(graph, "Gather", [positions.input[0], position_ids],
                                                        scope + "position_embeddings")], scope + "embedded")
        norm.input[0] = embedded
        count += 1
    return count


def _mask_source(graph, name, producers):
    """(the 2-D mask, the masked score) behind a block's additive mask `name` (TensorFlow's
    `where(cast(mask, bool), 0, -1e9)`, expanded), or (None, None)."""
    masked = None
    for _ in range(8):
        node = producers.get(name)
        if node is None:
            return None, None
        if node.op_type == "Cast" and node.attribute[0].i == onnx.TensorProto.BOOL:
            return node.input[0], masked
        if node.op_type == "Where":
            masked = _weight(graph, node.input[2])
        name = node.input[0]
    return None, None


def _downstream(start, consumers, op_type, weighted=None):
    """The first node of `op_type` reached from the tensor `start` (breadth first; `weighted`: whose second input
    is one of these weights), or None."""
    queue, seen = collections.deque([start]), {start}
    while queue:
        for node in consumers.get(queue.popleft(), []):
            if node.op_type == op_type and (weighted is None or node.input[1] in weighted):
                return node
            for output in node.output:
                if output not in seen:
                    seen.add(output)
                    queue.append(output)
    return None


def _bias(graph, matmul, consumers):
    """The bias a `matmul`'s one consumer adds (its second input, a weight), or None (TensorFlow folds a zero
    bias away)."""
    added = consumers.get(matmul.output[0], [])
    return _weight(graph, added[0].input[1]) if len(added) == 1 and added[0].op_type == "Add" else None


def _shape_of(reshape, tensor, producers):
    """Whether `reshape`'s target shape is `tensor`'s (`Shape(tensor)`, cast)."""
    source = producers.get(reshape.input[1])
    while source is not None and source.op_type == "Cast":
        source = producers.get(source.input[0])
    return source is not None and source.op_type == "Shape" and source.input[0] == tensor


def _transformers_attention(graph, num_heads):
    """Each block's self-attention as transformers' BERT graph, on `[batch, sequence, hidden]` (was: rows): q, k and v
    each `MatMul`, `Add`, `Reshape`, `Transpose`, the scores divided by √size and masked by `(1 − mask)·-1e9`. Returns
    the blocks rewritten."""
    producers, consumers = _producers(graph), _consumers(graph)
    weights = {tensor.name for tensor in graph.initializer}
    masks, count = {}, 0
    for qkv in [node for node in graph.node if node.op_type == "MatMul" and node.input[1] in weights]:
        kernel, rows = _weight(graph, qkv.input[1]), producers.get(qkv.input[0])
        hidden = kernel.shape[0]
        if (kernel.shape != (hidden, 3 * hidden) or rows is None or rows.op_type != "Reshape"
                or list(_weight(graph, rows.input[1]) if rows.input[1] in weights else []) != [-1, hidden]):
            continue
        bias = _bias(graph, qkv, consumers)
        softmax = _downstream(qkv.output[0], consumers, "Softmax")
        output = _downstream(qkv.output[0], consumers, "MatMul", weighted=weights)
        scores = producers.get(softmax.input[0]) if softmax is not None else None
        if output is None or scores is None or scores.op_type != "Add":
            continue
        mask, masked = _mask_source(graph, scores.input[1], producers)
        block = rows.input[0]
        restored = [node for node in graph.node if node.op_type == "Reshape" and _shape_of(node, block, producers)]
        normalized = [consumer.op_type for node in consumers[qkv.input[0]] if node is not qkv
                      for consumer in consumers[node.output[0]]] + [producers[node.input[0]].op_type
                                                                     for node in restored]
        if mask is None or masked is None or set(normalized) != {"LayerNormalization"}:
            continue  # (a layer norm left as TensorFlow's ops reduces over axis 1 of the rows: they stay rows)
        scope, size = qkv.name.rsplit("/", 1)[0] + "/", hidden // num_heads
        if mask not in masks:  # transformers' additive mask, once: (1 - mask[:, None, None, :]) * -1e9
            expanded = _node(graph, "Unsqueeze", [
                _node(graph, "Unsqueeze", [mask, _add_weight(graph, "mask/axis_1", np.array([1], np.int64))],
                      "mask/heads"), _add_weight(graph, "mask/axis_2", np.array([2], np.int64))], "mask/queries")
            kept = _node(graph, "Cast", [expanded], "mask/float", to=onnx.TensorProto.FLOAT)
            masks[mask] = _node(graph, "Mul", [
                _node(graph, "Sub", [_add_weight(graph, "mask/one", np.float32(1.0)), kept], "mask/dropped"),
                _add_weight(graph, "mask/masked", masked.astype(np.float32).reshape(()))], "mask/bias")
        heads = _add_weight(graph, scope + "heads_shape", np.array([0, 0, num_heads, size], np.int64))
        moved = []
        for index, (part, perm) in enumerate((("query", [0, 2, 1, 3]), ("key", [0, 2, 3, 1]), ("value", [0, 2, 1, 3]))):
            columns = slice(index * hidden, (index + 1) * hidden)
            part_bias = np.zeros(hidden, kernel.dtype) if bias is None else bias[columns]
            projected = _node(graph, "Add", [
                _node(graph, "MatMul", [block, _add_weight(graph, f"{scope}{part}/kernel", kernel[:, columns])],
                      f"{scope}{part}/MatMul"),
                _add_weight(graph, f"{scope}{part}/bias", part_bias)], f"{scope}{part}/BiasAdd")
            split = _node(graph, "Reshape", [projected, heads], f"{scope}{part}/heads")
            moved.append(_node(graph, "Transpose", [split], f"{scope}{part}/transpose", perm=perm))
        scaled = _node(graph, "Div", [_node(graph, "MatMul", moved[:2], scope + "scores"),
                                      _add_weight(graph, scope + "sqrt_size", np.float32(np.sqrt(size)))],
                       scope + "scaled")
        probabilities = _node(graph, "Softmax", [_node(graph, "Add", [scaled, masks[mask]], scope + "masked")],
                              scope + "probabilities", axis=-1)
        context = _node(graph, "Transpose", [_node(graph, "MatMul", [probabilities, moved[2]], scope + "context")],
                        scope + "context/transpose", perm=[0, 2, 1, 3])
        output.input[0] = _node(graph, "Reshape", [
            context, _add_weight(graph, scope + "hidden_shape", np.array([0, 0, hidden], np.int64))],
            scope + "context/merged")
        if _bias(graph, output, consumers) is None:  # a zero bias TensorFlow folded away, back (the pattern has it)
            projected = output.output[0]
            output.output[0] = f"{output.name}/unbiased:0"
            graph.node.append(onnx.helper.make_node("Add", [output.output[0], _add_weight(
                graph, f"{output.name}/bias", np.zeros(hidden, np.float32))], [projected], name=f"{output.name}/bias"))
        for reshape in [rows, *restored]:  # the block on [batch, sequence, hidden]: no reshapes to rows and back
            _bypass(graph, reshape)
        count += 1
    return count


def _transformers_gelu(graph):
    """Each `0.5·x·(1 + erf(x·√½))` as transformers' `(x·(1 + erf(x/√2)))·0.5` (which ONNX Runtime also fuses
    as it loads a graph). Returns how many it rewrote."""
    producers, consumers, count = _producers(graph), _consumers(graph), 0
    for erf in [node for node in graph.node if node.op_type == "Erf"]:
        scaled = producers.get(erf.input[0])
        plus_one = consumers.get(erf.output[0], [])
        product = consumers.get(plus_one[0].output[0], []) if len(plus_one) == 1 else []
        if scaled is None or scaled.op_type != "Mul" or len(product) != 1 or product[0].op_type != "Mul":
            continue
        x = next(name for name in scaled.input if _weight(graph, name) is None)
        half = producers.get(next((name for name in product[0].input if name != plus_one[0].output[0]), ""))
        if half is None or half.op_type != "Mul" or x not in half.input:
            continue
        constant = next(name for name in half.input if name != x)
        if not count:
            _add_weight(graph, "gelu/sqrt_2", np.float32(np.sqrt(2.0)))
        scaled.op_type, scaled.input[:] = "Div", [x, "gelu/sqrt_2"]
        half.input[:] = [x, plus_one[0].output[0]]
        product[0].input[:] = [half.output[0], constant]
        count += 1
    return count


def as_transformers_graph(proto, num_heads):
    """Rewrites `proto` (tf2onnx's graph of a model with `num_heads` heads) in place; how many layer norms, embedding
    blocks, attention blocks and GELUs it rewrote."""
    counts = {"layer_norms": one_op_layer_norms(proto), "embeddings": _transformers_embeddings(proto.graph)}
    _prune_and_sort(proto)
    counts["attention"] = _transformers_attention(proto.graph, num_heads)
    counts["gelu"] = _transformers_gelu(proto.graph)
    _prune_and_sort(proto)
    return counts
