"""`import electra_tf` is fast and leaves its host alone: no TensorFlow until a name is used, no stderr pointed
elsewhere, no environment variable set; using a name registers every Keras object, so our `.keras` files load."""

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import electra_tf

PACKAGE = Path(electra_tf.__file__).parent
PRETRAINER = Path(__file__).parent / "fixtures" / "keras_2d517d5" / "pretrainer.keras"
# A host program, without the test session's TF_CPP_MIN_LOG_LEVEL.
HOST_ENV = {name: value for name, value in os.environ.items() if name not in ("TF_CPP_MIN_LOG_LEVEL",
                                                                              "ELECTRA_TF_VERBOSE")}


def run_python(code):
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=HOST_ENV, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1]), result.stderr


def test_the_import_loads_no_tensorflow_and_every_name_resolves():
    report, _ = run_python("""
import json, sys
import electra_tf
loaded = sorted(m for m in ("tensorflow", "keras", "keras_hub") if m in sys.modules)
from electra_tf import ElectraConfig
config_only = "tensorflow" in sys.modules
from electra_tf import TFElectraForSequenceClassification, AutoTokenizer
from electra_tf.transformers import auto, names
print(json.dumps({"loaded": loaded, "config_only": config_only,
                  "listed": set(electra_tf.__all__) <= set(dir(electra_tf)),
                  "resolved": all(getattr(electra_tf, name) is not None for name in electra_tf.__all__),
                  "same": TFElectraForSequenceClassification is names.TFElectraForSequenceClassification
                  and AutoTokenizer is auto.AutoTokenizer}))
""")
    assert report == {"loaded": [], "config_only": False, "listed": True, "resolved": True,
                      "same": True}


def test_the_library_leaves_stderr_and_the_environment_alone():
    report, stderr = run_python("""
import json, os
before = dict(os.environ)
import electra_tf
electra_tf.ElectraModel  # imports TensorFlow and Keras
print(json.dumps({"environment_kept": dict(os.environ) == before}))
""")
    assert report == {"environment_kept": True}
    assert "oneDNN" in stderr or "cuda" in stderr  # TensorFlow's own notices reached the host's stderr


def test_using_a_name_or_registering_loads_any_keras_file_of_ours():
    for first in ("electra_tf.ElectraConfig(); electra_tf.register_keras_objects()", "electra_tf.ElectraTokenizer"):
        report, _ = run_python(f"""
import json, keras, electra_tf
{first}
print(json.dumps(type(keras.saving.load_model({str(PRETRAINER)!r}, safe_mode=True)).__name__))
""")
        assert report == "ElectraPretrainer"


def test_every_module_that_registers_keras_objects_is_registered():
    registering = {".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
                   for path in PACKAGE.rglob("*.py") if path.name != "__init__.py"
                   and "register_keras_serializable" in path.read_text(encoding="utf-8")
                   and any(isinstance(node, ast.Call) and "register_keras_serializable" in ast.unparse(node.func)
                           for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))))}
    assert registering == set(electra_tf.KERAS_OBJECT_MODULES)
