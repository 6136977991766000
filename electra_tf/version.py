"""The version of electra_tf, written once (setup.py reads this file).

>>> __version__.count(".")
2
"""

__version__ = "0.2.0"
# The field every saved folder, run folder and export records the version that wrote it in (`electra_tf.json`,
# `run_config.json`, `export_info.json`); readers ignore it, and folders without it load.
VERSION_FIELD = "electra_tf_version"
