"""Where the data sets live: argument, then ``PRECISE_KPCA_DATA``, then the user cache."""
from __future__ import annotations

import os
from pathlib import Path

import platformdirs

ENV_VAR = "PRECISE_KPCA_DATA"
"""Environment variable naming the data directory (used when no ``data_dir`` argument is given)."""


def user_cache_root() -> Path:
    """The per-user cache folder of precise_kpca (``platformdirs.user_cache_dir("precise_kpca")``)."""
    return Path(platformdirs.user_cache_dir("precise_kpca"))


def data_dir(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """Resolve the data directory.

    Parameters
    ----------
    data_dir : path-like or None
        Explicit folder. When None, the environment variable ``PRECISE_KPCA_DATA`` is used if set (and
        non-empty), otherwise ``<user cache>/datasets``.

    Returns
    -------
    pathlib.Path
        The folder. An explicit argument or the environment variable must name an existing directory; the
        default cache folder may not exist yet (it then simply holds no data sets).

    Raises
    ------
    NotADirectoryError
        If the argument or the environment variable names something that is not an existing directory.
    """
    if data_dir is not None:
        path, origin = Path(data_dir), "data_dir argument"
    elif os.environ.get(ENV_VAR):
        path, origin = Path(os.environ[ENV_VAR]), f"environment variable {ENV_VAR}"
    else:
        return user_cache_root() / "datasets"
    if not path.is_dir():
        raise NotADirectoryError(f"data directory {str(path)!r} (from the {origin}) is not an existing directory")
    return path
