"""Every module and repository path a docstring names exists: `electra_tf.<module>[.<name>]` imports (and has
the name), and `electra_tf/…`, `tools/…`, `tests/…`, `benchmarks/…`, `docs/…`, `configs/…` files are there."""

import ast
import importlib
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = sorted(path for folder in ("electra_tf", "tools", "tests", "benchmarks")
                 for path in (ROOT / folder).rglob("*.py"))
DOTTED = re.compile(r"(?<![\w.])(electra_tf(?:\.[A-Za-z_]\w*)+)")
PATH = re.compile(r"(?<![\w/.\-])((?:electra_tf|tools|tests|benchmarks|docs|configs)/[\w/\-]+\.(?:py|md|json))")
FILE_NAMES = ("json",)  # `electra_tf.json` is the file a model folder holds, not a module


def docstrings(path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            text = ast.get_docstring(node)
            if text:
                yield text


def resolves(dotted):
    """A dotted name: the longest importable prefix, then attributes. (The tools, `electra_tf.tools.*`,
    define absl flags when imported: their files are looked for instead.)"""
    parts = dotted.split(".")
    if parts[:2] == ["electra_tf", "tools"]:
        return len(parts) == 2 or (ROOT / "tools" / f"{parts[2]}.py").exists()
    for split in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for name in parts[split:]:
            if not hasattr(target, name):
                return False
            target = getattr(target, name)
        return True
    return False


def references():
    for path in SOURCES:
        for text in docstrings(path):
            yield from ((path, name) for name in DOTTED.findall(text) if name.split(".")[-1] not in FILE_NAMES)
            yield from ((path, name) for name in PATH.findall(text))


def test_every_module_and_path_a_docstring_names_exists():
    def exists(name):
        return (ROOT / name).exists() if "/" in name else resolves(name)

    missing = sorted({f"{path.relative_to(ROOT)}: {name}" for path, name in references() if not exists(name)})
    assert not missing, "docstrings name what does not exist:\n" + "\n".join(missing)


@pytest.mark.parametrize("name, found", [("electra_tf.finetuning.trainer.finetune", True),
                                         ("electra_tf.finetuning.trainer.fine_tune", False),
                                         ("electra_tf.fine_tuning", False)])
def test_references_resolve_to_modules_and_their_names(name, found):
    assert resolves(name) is found
