"""Arithmetic backends: ``"float64"``, ``"float64-naive"`` (the paper's plain forms) and ``"mp"`` (mpmath)."""
from __future__ import annotations

from .base import Backend, as_fraction
from .float64 import Float64Backend
from .mp import MIN_DPS, MPBackend

BACKEND_NAMES = ("float64", "float64-naive", "mp")


def get_backend(backend="float64", dps=None) -> Backend:
    """Backend object for a name (or pass a :class:`Backend` through).

    Parameters
    ----------
    backend : {"float64", "float64-naive", "mp"} or Backend
    dps : int, optional
        Decimal digits; required for ``"mp"`` (at most ``max_dps``, :mod:`precise_kpca.limits`), must be None or 15
        for the float64 backends.
    """
    if isinstance(backend, Backend):
        if dps is not None and dps != backend.dps:
            raise ValueError(f"dps={dps} conflicts with the given backend's dps={backend.dps}")
        return backend
    if backend == "mp":
        if dps is None:
            raise ValueError("backend='mp' needs an explicit precision: pass dps=<decimal digits> (e.g. dps=50)")
        from ..limits import check_dps  # the precision a caller asks for is bounded; internal escalations are not

        backend = MPBackend(dps)
        check_dps(backend.dps)
        return backend
    if backend in ("float64", "float64-naive"):
        if dps is not None and dps != Float64Backend.dps:
            raise ValueError(f"backend={backend!r} has fixed precision (dps=15); got dps={dps}. Use backend='mp'")
        return Float64Backend(naive=backend == "float64-naive")
    raise ValueError(f"unknown backend {backend!r}; choose one of {BACKEND_NAMES}")


__all__ = ["Backend", "Float64Backend", "MPBackend", "MIN_DPS", "BACKEND_NAMES", "get_backend", "as_fraction"]
