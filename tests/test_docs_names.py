"""What the README and docs/ pages name exists: every `electra_tf.<module>[.<name>]` and repository `.py` path,
and every `--flag` of a command that runs a tool (`electra-<tool>`, `python -m electra_tf.tools.<tool>`,
`python benchmarks/<script>.py`) is a flag of that tool. Text only: no TensorFlow import (the tools' flags come
from their `--helpxml`, which answers before TensorFlow loads)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PAGES = ["README.md", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))]
BIN = Path(sys.executable).parent
# `electra-export=electra_tf.tools.export_model:main`: each console script and its tool module.
SCRIPTS = dict(re.findall(r'"(electra-[\w-]+)=electra_tf\.tools\.(\w+):main"',
                          (ROOT / "setup.py").read_text(encoding="utf-8")))
DOTTED = re.compile(r"(?<![\w./-])(electra_tf(?:\.[A-Za-z_]\w*)+)")
PATH = re.compile(r"(?<![\w./-])((?:electra_tf|tools|tests|benchmarks)/[\w/-]+\.py)\b")
FILE_NAMES = ("json",)  # `electra_tf.json`: the file a model folder holds, not a module
TOOL = re.compile(r"(?<![\w/.-])(?:(electra-[a-z-]+)|python3? -m electra_tf\.tools\.(\w+)"
                  r"|python3? (benchmarks/\w+\.py))")
FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9_]*)")


def _text(page):
    return (ROOT / page).read_text(encoding="utf-8")


def _source(path):
    """The file of a dotted module name (`electra_tf.tools` is installed from tools/), or None."""
    parts = path.split(".")
    folder = ROOT / "tools" if parts[:2] == ["electra_tf", "tools"] else ROOT / parts[0]
    rest = parts[2:] if parts[:2] == ["electra_tf", "tools"] else parts[1:]
    target = folder.joinpath(*rest)
    for candidate in (target.with_suffix(".py"), target / "__init__.py"):
        if candidate.exists():
            return candidate
    return None


def resolves(dotted):
    """The longest prefix that is a module's file, then a name its source defines or imports."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        module = _source(".".join(parts[:split]))
        if module is not None:
            names = parts[split:]
            return not names or re.search(rf"\b{re.escape(names[0])}\b", module.read_text(encoding="utf-8"))
    return False


def _path_exists(path):
    if path.startswith("electra_tf/tools/"):
        return (ROOT / "tools" / path.removeprefix("electra_tf/tools/")).exists()
    return (ROOT / path).exists()


@pytest.mark.parametrize("page", PAGES)
def test_every_module_and_path_a_page_names_exists(page):
    text = _text(page)
    missing = sorted({name for name in DOTTED.findall(text) if name.split(".")[-1] not in FILE_NAMES
                      and not resolves(name)} | {path for path in PATH.findall(text) if not _path_exists(path)})
    assert not missing, f"{page} names what does not exist: {missing}"


def _commands(text):
    """Each tool command of a page: (tool, its flags). Commands are read from code blocks (continuation lines
    joined, up to `|`, `&&`, `;` or a comment) and from inline code that starts with a tool; a quoted flag value
    (`--beam_options='--runner=...'`) holds another program's flags."""
    text = re.sub(r"=(['\"]).*?\1", "=...", text, flags=re.S)
    blocks = re.findall(r"```[a-z]*\n(.*?)```", text, re.S)
    spans = re.findall(r"(?<!`)`([^`\n]+)`(?!`)", re.sub(r"```.*?```", "", text, flags=re.S))
    lines = [line for block in blocks for line in block.replace("\\\n", " ").splitlines()] + spans
    for line in lines:
        line = re.split(r"\s(?:\||&&|;|#)\s?", line)[0]
        starts = list(TOOL.finditer(line))
        for match, following in zip(starts, starts[1:] + [None]):
            script, module, benchmark = match.groups()
            tool = benchmark or SCRIPTS.get(script) or module
            if tool is None:  # `electra-tf[onnx]` and the like: not a tool
                continue
            command = line[match.end():following.start() if following else None]
            yield tool, {flag for flag in FLAG.findall(command)}


def _flags_of(tool):
    """The flags `tool` accepts (`--noX` for a boolean X included): its own and absl's, from `--helpxml` of its
    console script (which answers before TensorFlow loads), else from absl's `FLAGS` once its module is imported
    by name; for a benchmark script, the `flags.DEFINE_*` calls of its file and of the benchmarks it imports."""
    if tool.startswith("benchmarks/"):
        source = (ROOT / tool).read_text(encoding="utf-8")
        siblings = [ROOT / "benchmarks" / f"{name}.py" for name in re.findall(r"^(?:from|import) (\w+)", source, re.M)]
        sources = [source] + [path.read_text(encoding="utf-8") for path in siblings if path.exists()]
        names = {name for text in sources for name in re.findall(r"DEFINE_\w+\(\s*\"(\w+)\"", text)}
        names |= {"help", "helpfull", "helpshort"}
        return names | {f"no{name}" for name in names}
    script = next(script for script, module in SCRIPTS.items() if module == tool)
    environ = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    run = subprocess.run([str(BIN / script), "--helpxml"], capture_output=True, text=True, timeout=120, env=environ)
    names = set(re.findall(r"<name>(\w+)</name>", run.stdout))
    if run.returncode or not names:
        run = subprocess.run([sys.executable, "-c", _IMPORT_AND_LIST_FLAGS, tool], capture_output=True, text=True,
                             timeout=300, env=environ, cwd=ROOT)
        names = set(run.stdout.split())
    assert names, f"found no flags of {script}: {run.stderr[-2000:]}"
    return names | {f"no{name}" for name in names}


# Imports a tool's flags (`electra_tf.tools.<tool>_flags` where that module exists, else the tool's module) and
# prints absl's flags.
_IMPORT_AND_LIST_FLAGS = """
import importlib, importlib.util, sys
from absl import app, flags, logging
tool = "electra_tf.tools." + sys.argv[1]
importlib.import_module(tool + "_flags" if importlib.util.find_spec(tool + "_flags") else tool)
print(*flags.FLAGS)
"""


def test_every_flag_a_page_gives_a_tool_is_one_of_its_flags():
    commands = [(page, tool, flags) for page in PAGES for tool, flags in _commands(_text(page))]
    known = {tool: _flags_of(tool) for tool in {tool for _, tool, _ in commands}}
    unknown = sorted({(page, tool, flag) for page, tool, flags in commands for flag in flags - known[tool]})
    assert not unknown, "docs give tools flags they do not have (page, tool, flag):\n" + "\n".join(map(str, unknown))
    assert {"export_model", "run_pretraining", "run_finetuning"} <= set(known)  # the reader found the commands
