"""The console scripts silence TensorFlow's start-up notices themselves (the library import leaves stderr alone:
tests/test_lazy_import.py), unless asked for with `--verbosity`."""

import os
import sys

import pytest

BIN = os.path.dirname(sys.executable)
# As a user runs the tools: without the test session's TF_CPP_MIN_LOG_LEVEL.
USER_ENV = {name: value for name, value in os.environ.items() if name not in ("TF_CPP_MIN_LOG_LEVEL",
                                                                              "ELECTRA_TF_VERBOSE")}


@pytest.mark.parametrize("verbosity, notices", [([], False), (["--verbosity=0"], True)])
def test_a_tool_prints_no_tensorflow_notices_unless_asked(children, tmp_path, verbosity, notices):
    missing = tmp_path / "missing.txt"  # refused after TensorFlow is imported, before any work
    result = children.run([os.path.join(BIN, "electra-build-vocab"), f"--input_files={missing}",
                           f"--output={tmp_path / 'vocab.txt'}", *verbosity], env=USER_ENV)
    assert result.returncode == 2, result.stderr[-3000:]
    assert ("oneDNN" in result.stderr or "I0000" in result.stderr) == notices, result.stderr[-3000:]
    if not notices:
        (line,) = result.stderr.strip().splitlines()
        assert line.startswith("error: ") and str(missing) in line, line
