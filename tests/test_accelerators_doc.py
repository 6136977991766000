"""docs/accelerators.md: every `--flag` its commands give is one of that tool's flags (what its `--help` lists)."""

import re
from pathlib import Path

import pytest
from absl import flags

PAGE = (Path(__file__).parents[1] / "docs" / "accelerators.md").read_text(encoding="utf-8")
TOOLS = {"electra-pretrain": "run_pretraining", "electra-finetune": "run_finetuning", "electra-export": "export_model",
         "electra-build-pretraining-data": "build_pretraining_data", "electra-build-vocab": "build_vocab"}


def commands():
    """`(console script, [flag names])` of each command in the page's bash blocks (continued lines joined)."""
    found = []
    for block in re.findall(r"```bash\n(.*?)```", PAGE, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            script = next((word for word in line.split() if word in TOOLS), None)
            if script is not None:
                found.append((script, re.findall(r"(?<![\w-])--(\w+)", line)))
    return found


def test_the_page_gives_commands_with_the_strategies_and_precisions():
    flags = {flag for _, names in commands() for flag in names}
    assert {"strategy", "mixed_precision", "jit_compile", "tpu"} <= flags
    for strategy in ("default", "mirrored", "multi_worker", "tpu"):
        assert f"`{strategy}`" in PAGE


@pytest.mark.parametrize("script", sorted({script for script, _ in commands()}))
def test_every_flag_on_the_page_is_one_of_the_tools_flags(script, run_tool):
    with pytest.raises(flags.IllegalFlagValueError):  # its required flags are missing: the flags are defined
        run_tool(TOOLS[script])
    defined = set(flags.FLAGS)
    missing = sorted({flag for name, given in commands() if name == script for flag in given} - defined)
    assert not missing, f"{script}: docs/accelerators.md gives flags its --help does not list: {missing}"
