"""The variants table (`config/variants.py`) is the one place a variant's name is decoded, and the registry the one
module that turns a name into its part.

A new objective, generator source or training algorithm is a module and a row of the table (its part and FLOPs
formula by import path, what it cannot be combined with): no other module of the package branches on a variant's
name.
"""

import ast
import pathlib
import subprocess
import sys

import pytest

from electra_tf import config
from electra_tf.config import ElectraConfig, PretrainingConfig
from electra_tf.config import variants as variant_rules
from electra_tf.pretraining import registry

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "electra_tf"
VARIANT_FIELDS = {"objective", "weight_sharing", "generator_type", "training_algorithm"}
NAME_MAPPERS = {"pretraining/registry.py"}


def _is_known_values_check(node):
    """`x in _ACCEPTED_NAMES`: whether a value is one the config accepts, not a branch on it."""
    return (isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In)
            and isinstance(node.comparators[0], ast.Name) and node.comparators[0].id.startswith("_"))


def _variant_comparisons(tree):
    """Line numbers of comparisons (`==`, `!=`, `in`) of a variant field with anything, and of dict lookups by one."""
    lines = []
    for node in ast.walk(tree):
        if _is_known_values_check(node):
            continue
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
        elif isinstance(node, ast.Subscript):
            operands = [node.slice]
        else:
            continue
        if any(isinstance(operand, ast.Attribute) and operand.attr in VARIANT_FIELDS for operand in operands):
            lines.append(node.lineno)
    return lines


def test_no_module_but_the_registry_and_the_config_branches_on_a_variant_name():
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = str(path.relative_to(PACKAGE))
        lines = _variant_comparisons(ast.parse(path.read_text(encoding="utf-8")))
        if lines and name not in NAME_MAPPERS:
            found[name] = lines
    assert found == {}, "map the variant's name in pretraining/registry.py and ask the part instead"


def test_the_registry_maps_exactly_the_names_the_config_accepts():
    assert set(registry.OBJECTIVES) == set(config._OBJECTIVES) == {
        "electra", "mlm", "electra_15", "replace_mlm", "all_tokens_mlm", "clm"}
    assert set(registry.GENERATOR_SOURCES) == set(config._GENERATOR_TYPES) == {"masked_lm", "unigram", "pretrained"}
    assert set(registry.TRAINING_ALGORITHMS) == set(config._TRAINING_ALGORITHMS) == {
        "joint", "two_stage", "adversarial"}
    assert set(registry.WEIGHT_SHARING) == set(config._WEIGHT_SHARING) == {"none", "embeddings", "all", "gdes"}
    # One row per name; each row of a variant field names its part, and its FLOPs formula where it has a price.
    rows = [(row.field, row.name) for row in variant_rules.VARIANTS]
    assert len(rows) == len(set(rows))
    assert {row.field for row in variant_rules.VARIANTS} == set(variant_rules.FIELDS)
    for row in variant_rules.VARIANTS:
        if row.field in VARIANT_FIELDS:
            assert registry.load(row.part) is not None, row.name
        if row.field in {"objective", "generator_type"}:
            assert callable(registry.load(row.flops)), row.name


def test_the_variants_table_loads_without_tensorflow():
    code = ("import sys; import electra_tf.config.variants, electra_tf.config; "
            "assert 'tensorflow' not in sys.modules and 'keras' not in sys.modules")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


@pytest.mark.parametrize("fields, named", [
    ({"objective": "clm", "training_algorithm": "adversarial"}, "training_algorithm"),
    ({"objective": "clm", "training_algorithm": "two_stage", "generator_hidden_size": 1.0,
      "two_stage_generator_steps": 1}, "training_algorithm"),
])
def test_an_impossible_combination_is_one_error_naming_the_field(fields, named):
    with pytest.raises(ValueError, match=f"PretrainingConfig.{named}:"):
        PretrainingConfig(**fields)


def test_every_name_builds_its_part():
    for objective in registry.OBJECTIVES:
        parts = registry.variant_parts(PretrainingConfig(objective=objective), ElectraConfig(), (0,))
        assert isinstance(parts.objective, registry.OBJECTIVES[objective])
