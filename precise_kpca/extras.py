"""Optional dependencies: the package extras and the one-line message a feature gives when its extra is missing.

The core install (``pip install precise_kpca``) computes, certifies, plots and writes CSV. Four features need
more and name their extra when it is absent:

* ``[dask]``: the ``dask://HOST:PORT`` executor (dask.distributed);
* ``[parquet]``: Parquet copies of the tables (pyarrow);
* ``[notebooks]``: widget progress bars and running the notebooks (ipywidgets, ipykernel, nbclient);
* ``[proofs]``: ``precise-kpca prove``, the symbolic checks of the paper's derivations (sympy).

``[test]`` pulls them all.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import warnings

EXTRAS = {"dask": "dask.distributed", "parquet": "pyarrow", "notebooks": "ipywidgets", "proofs": "sympy"}
"""Extra -> the module whose presence says it is installed."""


class MissingExtra(ImportError):
    """A feature needs an optional dependency that is not installed; the message names the extra."""


def has_extra(extra: str) -> bool:
    """Whether the module of ``extra`` (a key of :data:`EXTRAS`) can be imported."""
    module = EXTRAS[extra]
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package (dask of dask.distributed) is missing
        return False


def missing_message(extra: str, feature: str) -> str:
    """``"<feature> needs the optional dependency <module>: pip install 'precise_kpca[<extra>]'"``."""
    return f"{feature} needs the optional dependency {EXTRAS[extra]}: pip install 'precise_kpca[{extra}]'"


def require(extra: str, feature: str):
    """Import and return the module of ``extra``.

    Raises
    ------
    MissingExtra
        When it is not installed (:func:`missing_message`).
    """
    if not has_extra(extra):
        raise MissingExtra(missing_message(extra, feature))
    return importlib.import_module(EXTRAS[extra])


def progress_bar_class():
    """tqdm's class for progress bars: the notebook widget where that works, the text bar elsewhere.

    ``tqdm.auto`` picks the widget inside Jupyter and warns at length when ipywidgets is missing; here a kernel
    without ipywidgets gets the text bar and one line naming the ``[notebooks]`` extra.
    """
    if "ipykernel" in sys.modules and not has_extra("notebooks"):
        warnings.warn(missing_message("notebooks", "a widget progress bar") + " (showing a text bar)",
                      stacklevel=3)
        from tqdm.std import tqdm
    else:
        from tqdm.auto import tqdm
    return tqdm
