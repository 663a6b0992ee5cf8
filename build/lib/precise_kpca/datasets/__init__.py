"""Data sets: the paper's Table I sets, user files, OpenML, and synthetic families.

This package stands apart from the numerics (it imports none of them). Everything returns the paper's
preprocessed N×d ``float64`` matrix: target attribute dropped, categorical attributes one-hot encoded (one
column per category value present in the data), numeric attributes unscaled.

Data directory (for named sets): the ``data_dir`` argument, else ``$PRECISE_KPCA_DATA``, else
``platformdirs.user_cache_dir("precise_kpca")/datasets``. It holds the data files and a ``manifest.json``
naming, per set, its file, target and categorical attributes, and the paper's Table I values. ``"wine"`` is
bundled (via scikit-learn) and loads with no data directory.

>>> from precise_kpca import datasets
>>> datasets.load("wine").shape
(178, 13)
"""
from . import synthetic
from .manifest import DatasetInfo, Manifest
from .openml import load_openml
from .paths import ENV_VAR, data_dir
from .preprocess import preprocess
from .readers import read_table
from .registry import BUNDLED, available, load, load_frame, load_path, manifest, resolve

__all__ = [
    "BUNDLED",
    "DatasetInfo",
    "ENV_VAR",
    "Manifest",
    "available",
    "data_dir",
    "load",
    "load_frame",
    "load_openml",
    "load_path",
    "manifest",
    "preprocess",
    "read_table",
    "resolve",
    "synthetic",
]
