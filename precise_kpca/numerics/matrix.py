"""Symmetric matrices that remember a constant offset, so centering never subtracts nearly equal numbers."""
from __future__ import annotations

import numpy as np

from ..backends import Backend, get_backend
from ..validation import check_real, check_symmetric


class SymmetricMatrix:
    """An N×N matrix stored as ``offset + deviation`` (entrywise) in one backend's arithmetic.

    A Gaussian Gram is 1 − O(σ⁻²): stored as offset 1 plus ``expm1(−u)``, its deviation keeps full relative
    accuracy, and double centering (which removes constants exactly) never forms ``K − 1``.

    Indexing ``M[i, j]`` returns a float (float64 backends) or a global-type ``mpmath.mpf`` (mp backend,
    exported without rounding); ``M.values`` is the whole public array (float64 ndarray or object ndarray
    of ``mpmath.mpf``). ``M.deviation`` and ``M.offset`` expose the stored parts in backend form.

    Parameters
    ----------
    deviation : ndarray, shape (N, M)
        Backend array (float64, or object array of the backend's mpf).
    backend : Backend
    offset : scalar, default 0
    kind : str
        Short description, e.g. ``"gaussian"``, ``"centered gaussian"``.
    """

    def __init__(self, deviation: np.ndarray, backend: Backend, offset=0, *, kind: str = "matrix", meta=None):
        self.deviation = deviation
        self.backend = backend
        self.offset = backend.scalar(offset)
        self.kind = kind
        self.meta = dict(meta or {})

    @property
    def shape(self) -> tuple[int, ...]:
        return self.deviation.shape

    @property
    def n(self) -> int:
        return self.deviation.shape[0]

    @property
    def internal(self) -> np.ndarray:
        """offset + deviation in backend form (rounds once; loses what the split protected)."""
        if not self.offset:
            return self.deviation
        return self.deviation + self.offset

    @property
    def values(self) -> np.ndarray:
        """Public array: float64 ndarray or object ndarray of global-type ``mpmath.mpf``."""
        return self.backend.export(self.internal)

    def to_float64(self) -> np.ndarray:
        """Nearest-float copy, for plotting or comparison with float64 code."""
        return self.backend.to_floats(self.internal)

    def __getitem__(self, key):
        entry = self.deviation[key]
        if self.offset:
            entry = entry + self.offset
        return self.backend.export(entry)

    def __array__(self, dtype=None, copy=None):
        values = self.values
        return values if dtype is None else values.astype(dtype)

    def __repr__(self) -> str:
        return f"SymmetricMatrix(kind={self.kind!r}, shape={self.shape}, backend={self.backend.name!r}, dps={self.backend.dps})"


def as_symmetric_matrix(K, *, backend=None, dps=None) -> SymmetricMatrix:
    """Wrap a plain array (float → float64 backend, object → mp backend with explicit ``dps``).

    A plain array must be real, finite, exactly convertible (see :func:`precise_kpca.validation.exact_float64`)
    and symmetric up to rounding: entries may differ from their transposes by 4·N·eps·max|K| at most (eps of the
    backend), and the symmetric part (K + Kᵀ)/2 is used (:func:`precise_kpca.validation.check_symmetric`).
    """
    if isinstance(K, SymmetricMatrix):
        return K
    array = np.asarray(K)
    if array.ndim != 2 or array.shape[0] != array.shape[1]:
        raise ValueError(f"expected a square matrix, got shape {array.shape}")
    check_real(array)
    if backend is None:
        if array.dtype == object:
            if dps is None:
                raise ValueError(
                    "an object array of mpf values needs dps=<decimal digits> (its working precision); "
                    "or pass the SymmetricMatrix returned by the kernel functions"
                )
            backend = "mp"
        else:
            backend = "float64"
    backend = get_backend(backend, dps)
    values = backend.checked_internal(array, "K")
    return SymmetricMatrix(check_symmetric(values, backend.eps), backend)
