"""Keys of the results store: what identifies a curve point, and when a stored point answers a request."""
from __future__ import annotations

import hashlib
import json
from dataclasses import astuple, dataclass

import numpy as np

from ..versions import route_version

NO_K = 0
"""Stored ``k`` for measures without a rank parameter (metric, eigenvalue, cka); shown as missing in frames."""
NAIVE_BACKEND = "float64-naive"
"""The paper's float64 computation: its points certify nothing, so any stored one of this code answers."""
AGREEMENT_BACKENDS = ("float64", "mp")
"""Explicit backends of :func:`precise_kpca.measures.measure`: their digits come from the agreement of two
evaluations, so a request for one asks for heuristic digits."""
UNKNOWN_GUARANTEE = "unknown"
"""``guarantee`` of the rows of a store written before guarantees were recorded."""


def data_hash(X: np.ndarray) -> str:
    """sha256 (hex) of the shape and the C-order float64 bytes of X: the data part of every key."""
    array = np.ascontiguousarray(X, dtype=np.float64)
    digest = hashlib.sha256(repr(array.shape).encode())
    digest.update(array.tobytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class PointKey:
    """Identity of one curve point: everything that changes its value (:mod:`precise_kpca.studies.store`).

    ``k`` is :data:`NO_K`, ``tau`` and ``aggregate`` are ``""`` where the measure does not use them;
    ``requested_dps`` is 0 when no working precision was asked; ``requested_guarantee`` is ``"rigorous"`` or
    ``"heuristic"`` (``"none"`` for the float64-naive overlay).
    """

    data_hash: str
    measure: str
    k: int
    sigma: str
    requested_backend: str
    digits: int
    requested_dps: int = 0
    tau: str = ""
    median: str = "full"
    aggregate: str = ""
    requested_guarantee: str = "rigorous"

    @property
    def hash(self) -> str:
        """sha256 of the key (the ``claims`` table's key)."""
        return hashlib.sha256(json.dumps(astuple(self)).encode()).hexdigest()


def reusable(key: PointKey, guarantee: str, certified_digits: int, code_version: str, *,
             retry_uncertified: bool = False) -> bool:
    """Whether a stored point answers the request ``key``.

    Never when ``code_version`` is not the current version of the route that computed it (or is unknown). Else:

    * ``float64-naive`` requests: always (they certify nothing);
    * any other request: a ``rigorous`` point — also one short of ``key.digits``, and an undetermined one
      (``none``: no route of this code gives it a value), since recomputing them gives the same answer; where the
      request asks for heuristic digits also a ``heuristic`` one that certified them. ``retry_uncertified``
      recomputes every point short of the request, undetermined or not rigorous (after a better route landed).
      Points of unknown guarantee (an older store) are recomputed.
    """
    engine, _, version = code_version.partition("@")
    if not version or route_version(None if engine == "routes" else engine) != code_version:
        return False
    if key.requested_backend == NAIVE_BACKEND:
        return True
    if retry_uncertified:
        return guarantee == "rigorous" and certified_digits >= key.digits
    if guarantee in ("rigorous", "none"):
        return True
    return guarantee == "heuristic" and key.requested_guarantee == "heuristic" and certified_digits >= key.digits


def describe(key: PointKey) -> str:
    """A key as a warning or error message names it (measure, k, σ, backend, digits)."""
    k = "" if key.k == NO_K else f" k={key.k}"
    return f"{key.measure}{k} sigma={key.sigma} backend={key.requested_backend} digits={key.digits}"
