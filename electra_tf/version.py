"""The version of electra_tf: the one place it is written (setup.py reads this file; `electra_tf.__version__`).

>>> __version__.count(".")
2
"""

__version__ = "0.2.0"
