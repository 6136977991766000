"""Packaging for electra_tf: ELECTRA pre-training and fine-tuning on Keras 3 / TensorFlow."""

from setuptools import find_packages, setup

setup(
    name="electra-tf",
    version="0.1.0",
    description="ELECTRA (replaced token detection) pre-training and fine-tuning for Keras 3 / TensorFlow",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    # tools/ and configs/ sit at the top of the repository for readers, and are
    # installed inside the package so console scripts and named configs work
    # from any directory.
    packages=find_packages(include=["electra_tf", "electra_tf.*"]) + ["electra_tf.tools", "electra_tf.configs"],
    package_dir={"electra_tf.tools": "tools", "electra_tf.configs": "configs"},
    package_data={"electra_tf.configs": ["*.json"]},
    python_requires=">=3.11",
    install_requires=[
        "tensorflow==2.21.*",
        # tensorflow-text 2.21.0 broke keras-hub's tokenizers; 2.21.1 fixed it.
        "tensorflow-text>=2.21.1,<2.22",
        # Tested with keras 3.15.1 and keras-hub 0.32.0. What the package relies on of their internals is in
        # electra_tf/util/library_internals.py; tests/util/test_library_internals.py fails, naming it, on a release
        # that changes it.
        "keras>=3.15,<4",
        "keras-hub>=0.32,<1",
        "tensorflow-datasets>=4.9",
        # What TFDS imports when it downloads and prepares a dataset, but does not declare.
        "importlib_resources>=6",
        # Parquet corpora (electra_tf/data/corpus_readers.py); tensorflow-datasets installs it too.
        "pyarrow>=14",
        "absl-py>=2.1",
        "tensorboard>=2.19",
        "numpy>=1.26",
        # Task metrics (accuracy, F1, MCC, Pearson/Spearman) come from these.
        "scikit-learn>=1.4",
        "scipy>=1.11",
        # Hugging Face checkpoints: read and written as safetensors (never pickles).
        "safetensors>=0.4",
        # Hugging Face hub ids (`from_pretrained("google/electra-small-discriminator")`): the cache and downloads.
        "huggingface_hub>=0.23",
    ],
    extras_require={
        # `--runner=beam` of electra-build-pretraining-data / electra-build-vocab (docs/data_at_scale.md).
        # 2.77 resolves beside TensorFlow 2.21 (pip picks protobuf 6.33).
        "beam": ["apache-beam>=2.77,<3"],
        # `electra-export --format=onnx` (tf2onnx 1.17 is the first beside protobuf 5+, which TF 2.21 needs).
        "onnx": ["tf2onnx>=1.17", "onnx>=1.16", "onnxruntime>=1.20"],
        # tensorflow-serving-api: the tests build TF Serving requests from docs/serving.md; apache-beam: the
        # Beam pipeline's tests (about 45 s more to install).
        # pytest-xdist: `make test` runs the suite in 2 processes (one per core; most tests wait on tracing).
        # tf2onnx, onnxruntime, openvino: the ONNX export's tests (OpenVINO runs an export too).
        "test": ["pytest>=8", "pytest-xdist>=3.5", "hypothesis>=6", "tensorflow-serving-api>=2.21,<2.22",
                 "apache-beam>=2.77,<3", "tf2onnx>=1.17", "onnx>=1.16", "onnxruntime>=1.20", "openvino>=2024.4",
                 "jieba>=0.42"],
        # Chinese whole-word masking: electra-build-pretraining-data --whole_word_masking segments CJK text with jieba.
        "chinese": ["jieba>=0.42"],
        # Only for tools/make_*_fixtures.py, which write the committed fixtures.
        # (CPU torch: `pip install torch==2.13.0`.)
        "fixtures": ["transformers>=4.40", "torch"],
        # benchmarks/: the Hugging Face peer (CPU torch: `pip install torch==2.13.0`) and the plots.
        "bench": ["transformers>=4.40", "torch", "matplotlib>=3.7"],
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
