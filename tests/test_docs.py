"""The README stays a newcomer's page: short, linking to docs/ pages that exist, every command block either run by
the demo test or marked as not run with a reason, and saying what the tools' `--help` says."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
MAX_README_LINES = 300


def test_the_readme_is_short():
    lines = README.count("\n")
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines; move reference material to a docs/ page"


def _links(page):
    text = page.read_text(encoding="utf-8")
    return [(target.split("#")[0], page) for target in re.findall(r"\]\(([^)\s]+)\)", text)
            if not re.match(r"[a-z]+://", target) and not target.startswith("#")]


@pytest.mark.parametrize("page", ["README.md", *sorted(p.relative_to(ROOT).as_posix()
                                                        for p in (ROOT / "docs").glob("*.md"))])
def test_every_relative_link_and_image_exists(page):
    missing = [target for target, source in _links(ROOT / page) if not (source.parent / target).exists()]
    assert not missing, f"{page} links to missing files: {missing}"


def test_the_readme_links_a_page_for_each_topic_it_moved_out():
    linked = {target for target, _ in _links(ROOT / "README.md")}
    for page in ("docs/finetuning.md", "docs/pretraining.md", "docs/pretraining_variants.md", "docs/checkpoints.md",
                 "docs/serving.md", "docs/results.md"):
        assert page in linked, page


def test_every_command_block_is_run_or_says_why_not(documented_blocks):
    unmarked = [(block.page, block.code[:80]) for block in documented_blocks if block.marker is None]
    assert not unmarked, ("mark each block `<!-- tested: tests/tools/test_demo.py -->` (cheap, on the demo's "
                          f"output) or `<!-- not run: <why> -->`: {unmarked}")
    assert any(block.tested for block in documented_blocks if block.page.startswith("docs/"))
