"""Shared helpers for numerical cross-checks against the library's mp backend.

Library results are global-type ``mpmath.mpf`` (exported without rounding); every further operation here
runs in a private ``mpmath.MPContext`` so the global ``mpmath.mp`` precision is never read or changed.
"""
from __future__ import annotations

import mpmath
import numpy as np

DPS = 60


def context(dps: int = DPS) -> mpmath.MPContext:
    """A private mpmath context at ``dps`` decimal digits."""
    ctx = mpmath.MPContext()
    ctx.dps = dps
    return ctx


def convert(ctx: mpmath.MPContext, value):
    """Exact copy of an mpf (any context) or float in ``ctx`` (no rounding at ctx's precision or more)."""
    if hasattr(value, "_mpf_"):
        return ctx.make_mpf(value._mpf_)
    return ctx.mpf(value)


def matrix(ctx: mpmath.MPContext, values) -> mpmath.matrix:
    """``ctx.matrix`` holding exact copies of a 2-D array of mpf or floats."""
    rows = np.asarray(values, dtype=object)
    return ctx.matrix([[convert(ctx, x) for x in row] for row in rows])


def sample_points(n: int, d: int, seed: int) -> np.ndarray:
    """n random points in R^d on a dyadic grid (exact in float64), all distinct."""
    rng = np.random.default_rng(seed)
    return rng.integers(-64, 65, size=(n, d)) / 16.0


def sigma_x(gram, ctx: mpmath.MPContext):
    """The effective bandwidth σ_X = d_X·σ stored in a library Gram's ``meta``, in ``ctx``."""
    return convert(ctx, gram.meta["sigma_x"])
