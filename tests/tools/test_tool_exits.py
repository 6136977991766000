"""How a console script ends when it is stopped before its `main` runs: a flag error (a count out of range, a
misspelt or missing flag) is an input error like the tools' own, exit 2 and one `error:` line; a Ctrl-C while the
tool starts up (TensorFlow importing, seconds) is one line and exit 130, not a traceback through the imports."""

import sys

import pytest

# A console script run as its entry point runs it (the tool module's `main`), in a fresh process.
SCRIPT = """
import sys
from electra_tf.tools import {function}
sys.argv = sys.argv[1:]
{function}.main()
"""
# The same, with a Ctrl-C (SIGINT) arriving while TensorFlow is imported (once the flags are parsed).
CTRL_C_WHILE_IMPORTING = """
import signal, sys
from electra_tf.tools import {function}

class CtrlC:
    def find_spec(self, name, path=None, target=None):
        if name == "tensorflow":
            signal.raise_signal(signal.SIGINT)

sys.meta_path.insert(0, CtrlC())
sys.argv = sys.argv[1:]
{function}.main()
"""


def run(children, code, function, *argv):
    return children.run([sys.executable, "-c", code.format(function=function), f"electra-{function}", *argv])


@pytest.mark.parametrize("argv, message", [
    (["--vocab_file=v", "--model_dir=m", "--save_every=0"], "error: flag --save_every=0: --save_every must be >= 1"),
    (["--vocab_file=v", "--model_dir=m", "--train_stepz=3"], "error: Unknown command line flag 'train_stepz'"),
    (["--model_dir=m"], "error: flag --vocab_file=None: Flag --vocab_file must have a value other than None."),
])
def test_a_flag_error_exits_2_in_one_line(children, argv, message):
    result = run(children, SCRIPT, "run_pretraining", *argv)
    assert result.returncode == 2, result.stderr[-2000:]
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(message) and line.endswith("(--help lists the flags)"), line


def test_ctrl_c_while_a_tool_starts_up_is_one_line_and_exit_130(children, tmp_path):
    result = run(children, CTRL_C_WHILE_IMPORTING, "build_vocab", f"--input_files={tmp_path}/corpus.txt",
                 f"--output={tmp_path}/vocab.txt")
    assert result.returncode == 130, result.stderr[-3000:]
    assert result.stderr.strip() == "interrupted while starting up: nothing was done", result.stderr[-3000:]
    assert list(tmp_path.iterdir()) == []
