"""The package's import graph: no cycle, layers that only import downwards, no hidden function-local imports.

Every module under `electra_tf/` is parsed with `ast` (nothing is imported), so a
new edge that closes a cycle or points upwards fails here with its file and line.
"""

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "electra_tf"

# The layers of the package, lowest first: a module may import from its own layer and those below it. A module's
# layer is that of the longest entry naming it or a package above it (`text.vocabulary`, else `text`).
# (`electra_tf/__init__.py`, the public face, imports everything and is imported by nothing inside.)
LAYERS = (
    ("version", "util", "config", "text.vocabulary", "text.normalization", "text.cjk"),
    ("text", "checkpoints", "layers", "training"),
    ("models",),
    ("pretraining", "data", "finetuning.metrics"),
    ("finetuning",),
    ("export", "checkpoints.convert"),
    ("transformers",),  # transformers' face: above everything, imported by nothing but the package's front door
)

# Function-local imports of other modules, each with its reason. Nothing else may hide an import in a function.
ALLOWED_LOCAL_IMPORTS = {
    **{("electra_tf/util/quiet_start.py", name): "imported inside the block that hides TensorFlow's start-up notices"
       for name in ("keras", "tensorflow", "tensorflow_text")},
    ("electra_tf/util/atomic.py", "tensorflow"):
        "only for a remote path (gs://...): the tools read their configs while parsing flags, before TensorFlow",
    ("electra_tf/data/tfds_source.py", "tensorflow_datasets"):
        "optional at run time: TFDS is imported only when a TFDS source is read (its import takes seconds)",
    ("electra_tf/data/word_segmentation.py", "jieba"):
        "an optional extra ('chinese'): imported only when shards of CJK text are built for whole-word masking",
    ("electra_tf/data/tasks/tables.py", "datasets"):
        "an optional extra ('datasets'): imported only when task data is a 🤗 dataset folder or hub id",
}


def module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules():
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported_names(node):
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and not node.level:
        return [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return []


def resolve(name, known):
    """The module of ours that `name` (a module or a name inside one) refers to, or None."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def function_local_imports(tree):
    inner = set()
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inner |= {id(node) for node in ast.walk(function) if isinstance(node, (ast.Import, ast.ImportFrom))}
    return [node for node in ast.walk(tree) if id(node) in inner]


def import_graph():
    known = modules()
    edges = {}
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        targets = {}
        for node in ast.walk(tree):
            names = imported_names(node)
            if isinstance(node, ast.ImportFrom) and any(sub in known for sub in names[1:]):
                names = [sub for sub in names[1:] if sub in known]  # submodules: not their package's __init__
            for imported in names:
                target = resolve(imported, known) if imported.startswith("electra_tf") else None
                if target and target not in (name, "electra_tf"):
                    targets.setdefault(target, node.lineno)
        edges[name] = targets
    return edges


def layer_of(module):
    """The index in LAYERS of a module (`electra_tf.models.encoder` → the `models` layer)."""
    parts = module.split(".")[1:]
    for length in range(len(parts), 0, -1):
        prefix = ".".join(parts[:length])
        for index, layer in enumerate(LAYERS):
            if prefix in layer:
                return index
    return None


def test_every_module_has_a_layer():
    unplaced = [name for name in modules() if name != "electra_tf" and layer_of(name) is None
                and not name.startswith("electra_tf.tools")]
    assert not unplaced, f"add these to LAYERS: {unplaced}"


def test_no_import_cycle():
    edges = import_graph()
    state, stack, cycles = {}, [], []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for target in edges.get(node, {}):
            if state.get(target) == "open":
                cycles.append(stack[stack.index(target):] + [target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[node] = "done"

    for node in edges:
        if node not in state:
            visit(node)
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(cycle) for cycle in cycles)


def test_imports_only_point_downwards():
    upward = []
    for module, targets in import_graph().items():
        if module == "electra_tf":
            continue
        for target, line in targets.items():
            if layer_of(target) > layer_of(module):
                upward.append(f"{module} (line {line}) imports {target}, a higher layer")
    assert not upward, "\n".join(upward)


def test_no_function_local_imports_but_the_allowed_ones():
    found = []
    for name, path in modules().items():
        relative = path.relative_to(PACKAGE.parent).as_posix()
        for node in function_local_imports(ast.parse(path.read_text(encoding="utf-8"))):
            for imported in imported_names(node)[:1]:
                if (relative, imported) not in ALLOWED_LOCAL_IMPORTS:
                    found.append(f"{relative}:{node.lineno} imports {imported}")
    assert not found, "function-local imports (move them to the top, or allow one with a reason):\n" + \
        "\n".join(found)


@pytest.mark.parametrize("entry", sorted(ALLOWED_LOCAL_IMPORTS))
def test_allowed_local_imports_still_exist(entry):
    relative, imported = entry
    tree = ast.parse((PACKAGE.parent / relative).read_text(encoding="utf-8"))
    assert any(imported in imported_names(node) for node in function_local_imports(tree)), \
        f"{relative} no longer imports {imported} in a function: remove it from ALLOWED_LOCAL_IMPORTS"
