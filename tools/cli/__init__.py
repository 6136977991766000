"""The console scripts (`electra-finetune`, ...): each answers `--help` and a misspelt flag before TensorFlow loads.

Installed as the top-level package `electra_tf_cli`, outside `electra_tf`, because importing anything inside
`electra_tf` runs the package's `__init__`, which imports TensorFlow (quietly) and registers every model with
Keras, 2–6 s. A console script therefore

1. makes the `electra_tf` package known without running its `__init__` yet;
2. imports the tool's flags, `electra_tf/tools/<tool>_flags.py` (absl, `electra_tf.config`, nothing that needs
   TensorFlow), and lets absl parse the command line: `--help` and a bad flag end here, in well under a second;
3. runs the package's `__init__` and imports `electra_tf/tools/<tool>.py`, whose `main` does the work.

`python -m electra_tf.tools.<tool>` runs the same `main`, with the package imported first.

Example (`setup.py` names one function below per console script):
>>> run_finetuning.__doc__
'The console script of `electra_tf.tools.run_finetuning`.'
"""

import importlib
import importlib.util
import sys


def _package_without_its_init():
    """`electra_tf` in `sys.modules` with its `__init__` not yet run (its submodules import as usual), and a
    function that runs it; nothing to run when the package was imported before."""
    if "electra_tf" in sys.modules:
        return lambda: None
    spec = importlib.util.find_spec("electra_tf")
    package = importlib.util.module_from_spec(spec)
    sys.modules["electra_tf"] = package
    return lambda: spec.loader.exec_module(package)


def launch(tool):
    """Parses the flags of `electra_tf.tools.<tool>` (answering `--help` and bad flags), then runs its `main`."""
    run_package_init = _package_without_its_init()
    common = importlib.import_module("electra_tf.tools.common")
    flags_module = importlib.import_module(f"electra_tf.tools.{tool}_flags").__name__

    def main(argv):
        run_package_init()
        return importlib.import_module(f"electra_tf.tools.{tool}").main(argv)

    common.run_tool(main, flags_module)


def _console_script(tool):
    def run():
        launch(tool)

    run.__doc__ = f"The console script of `electra_tf.tools.{tool}`."
    return run


build_vocab = _console_script("build_vocab")
build_pretraining_data = _console_script("build_pretraining_data")
run_pretraining = _console_script("run_pretraining")
run_finetuning = _console_script("run_finetuning")
convert_checkpoint = _console_script("convert_checkpoint")
export_model = _console_script("export_model")
demo = _console_script("demo")
