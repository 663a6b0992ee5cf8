"""Explicit feature map of the polynomial kernel ``k(x, y) = (γ x·y + c)^p`` in any dimension.

Multinomial expansion: with ``α = (α_1..α_d)``, ``|α| ≤ p`` and ``α_0 = p − |α|``,

    (γ x·y + c)^p = Σ_α  w_α x^α y^α,   w_α = p! / (α_0! α_1! ⋯ α_d!) · c^{α_0} · γ^{|α|},

so ``φ_α(x) = √w_α · x^α`` is a feature map of dimension C(d + p, p) (C(d + p − 1, p) when c = 0: only
``|α| = p`` survives). The weights ``w_α`` are rational for rational γ, c (float64 parameters are exact
dyadic rationals), so the identity ``φ(x)·φ(y) = k(x, y)`` is checked *exactly* over Q as
``Σ_α w_α x^α y^α == (γ x·y + c)^p`` by :func:`verify_polynomial_feature_map`; the float64 map
:func:`polynomial_feature_map` differs from it only by the rounding of √w_α and of the products.
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from .validation import exact_float64

__all__ = [
    "polynomial_feature_exponents",
    "polynomial_feature_weights",
    "polynomial_feature_map",
    "polynomial_feature_dimension",
    "verify_polynomial_feature_map",
]


def as_float_matrix(X, *, where: str, name: str = "X") -> np.ndarray:
    """A 2-D real array as float64, or a ``ValueError`` saying what is wrong and where.

    The input check shared by the feature maps here, :mod:`precise_kpca.approx.rff` and
    :mod:`precise_kpca.certify.psd`.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Real (bool, integer or float) entries; every entry finite.
    where : str
        Caller named at the start of the message (e.g. ``"polynomial_feature_map"``).
    name : str
        Name of the argument in the message.

    Returns
    -------
    ndarray of float64, shape (n, d)

    Raises
    ------
    ValueError
        ``"{where}: X must be 2-D, got shape ..."``, ``"{where}: X must be real numeric, got dtype ..."``, or
        ``"{where}: X[i, j] = nan is not finite"`` for the first non-finite entry (0-based).
    """
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"{where}: {name} must be 2-D, got shape {X.shape}")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"{where}: {name} must be real numeric, got dtype {X.dtype}")
    X = exact_float64(X, name, prefix=f"{where}: ")  # integers beyond 2^53 or long doubles are refused, not rounded
    bad = np.argwhere(~np.isfinite(X))
    if bad.size:
        i, j = map(int, bad[0])
        raise ValueError(f"{where}: {name}[{i}, {j}] = {X[i, j]} is not finite")
    return X


def _check_params(d: int, degree: int, gamma, coef0) -> tuple[Fraction, Fraction]:
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"polynomial feature map: the dimension d must be an integer >= 1, got {d!r}")
    if isinstance(degree, bool) or not isinstance(degree, (int, np.integer)) or degree < 1:
        raise ValueError(f"polynomial feature map: degree must be an integer >= 1, got {degree!r}")
    try:
        g, c = Fraction(gamma), Fraction(coef0)
    except (TypeError, ValueError):
        raise ValueError(f"polynomial feature map: gamma={gamma!r} and coef0={coef0!r} must be real numbers") from None
    if g <= 0:
        raise ValueError(f"polynomial feature map: gamma must be > 0, got {gamma!r}")
    if c < 0:
        raise ValueError(
            f"polynomial feature map: coef0 must be >= 0 (negative coef0 gives negative weights: no real "
            f"feature map), got {coef0!r}"
        )
    return g, c


def polynomial_feature_dimension(d: int, degree: int, homogeneous: bool = False) -> int:
    """Number of features: C(d + p, p), or C(d + p − 1, p) for the homogeneous kernel (c = 0)."""
    return math.comb(d + degree - 1, degree) if homogeneous else math.comb(d + degree, degree)


def polynomial_feature_exponents(d: int, degree: int, homogeneous: bool = False) -> np.ndarray:
    """Multi-indices α of the features, by total degree descending then lexicographically descending.

    Parameters
    ----------
    d : int
        Input dimension.
    degree : int
        Kernel degree p.
    homogeneous : bool
        Only ``|α| = p`` (the kernel ``(γ x·y)^p``).

    Returns
    -------
    ndarray of int, shape (F, d)
    """
    _check_params(d, degree, 1, 0)
    totals = [degree] if homogeneous else range(degree, -1, -1)
    rows = []
    for total in totals:
        # compositions of `total` into d nonnegative parts, lexicographically descending
        for bars in itertools.combinations(range(total + d - 1), d - 1):
            parts, prev = [], -1
            for b in bars + (total + d - 1,):
                parts.append(b - prev - 1)
                prev = b
            rows.append(parts)
    rows.sort(key=lambda a: (-sum(a), [-v for v in a]))
    return np.array(rows, dtype=np.int64).reshape(-1, d)


def polynomial_feature_weights(d: int, degree: int, gamma=1, coef0=1) -> tuple[np.ndarray, list[Fraction]]:
    """Exponents α and exact weights w_α with ``(γ x·y + c)^p = Σ_α w_α x^α y^α``.

    Parameters
    ----------
    d, degree : int
    gamma, coef0 : int, float, Fraction or str
        Converted exactly (a float is the dyadic number it stores). γ > 0, c ≥ 0.

    Returns
    -------
    exponents : ndarray of int, shape (F, d)
    weights : list of Fraction, length F
        All positive (terms with zero weight, i.e. ``α_0 > 0`` when c = 0, are omitted).
    """
    g, c = _check_params(d, degree, gamma, coef0)
    exponents = polynomial_feature_exponents(d, degree, homogeneous=(c == 0))
    weights = []
    for alpha in exponents:
        total = int(alpha.sum())
        a0 = degree - total
        multinomial = math.factorial(degree) // (math.factorial(a0) * math.prod(math.factorial(int(a)) for a in alpha))
        weights.append(multinomial * c**a0 * g**total)
    return exponents, weights


def polynomial_feature_map(X, degree: int, gamma=1.0, coef0=1.0) -> np.ndarray:
    """Float64 explicit feature map ``φ(x) = (√w_α x^α)_α`` of ``(γ x·y + c)^p``.

    Parameters
    ----------
    X : array_like of float, shape (n, d)
    degree : int
    gamma, coef0 : float
        γ > 0, c ≥ 0.

    Returns
    -------
    ndarray, shape (n, F)
        ``Φ Φᵀ`` equals the kernel Gram up to float64 rounding (relative to the sum of |terms|, at most
        about (F + p + 2)·eps).
    """
    X = as_float_matrix(X, where="polynomial_feature_map")
    exponents, weights = polynomial_feature_weights(X.shape[1], degree, gamma, coef0)
    scale = np.sqrt(np.array([float(w) for w in weights]))
    monomials = np.prod(X[:, None, :] ** exponents[None, :, :], axis=2)
    return monomials * scale[None, :]


def verify_polynomial_feature_map(X, Y=None, *, degree: int, gamma=1.0, coef0=1.0) -> bool:
    """Exact check over Q of ``Σ_α w_α x^α y^α == (γ x·y + c)^p`` for all row pairs of X and Y.

    Parameters
    ----------
    X : array_like of float, shape (n, d)
    Y : array_like of float, shape (m, d), optional
        Defaults to X.
    degree : int
    gamma, coef0 : int, float, Fraction or str

    Returns
    -------
    bool
        True iff every one of the n·m identities holds exactly (Python ``Fraction`` arithmetic).
    """
    X = as_float_matrix(X, where="verify_polynomial_feature_map")
    Y = X if Y is None else as_float_matrix(Y, where="verify_polynomial_feature_map", name="Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"verify_polynomial_feature_map: X and Y need equal columns, got shapes {X.shape} and {Y.shape}")
    exponents, weights = polynomial_feature_weights(X.shape[1], degree, gamma, coef0)
    g, c = Fraction(gamma), Fraction(coef0)

    def monomials(Z):
        rows = [[Fraction(float(v)) for v in z] for z in Z]
        return rows, [[math.prod(r[k] ** int(a[k]) for k in range(len(r))) for a in exponents] for r in rows]

    xr, xm = monomials(X)
    yr, ym = monomials(Y)
    for x, mx in zip(xr, xm):
        for y, my in zip(yr, ym):
            kernel = (g * sum(a * b for a, b in zip(x, y)) + c) ** degree
            if sum(w * a * b for w, a, b in zip(weights, mx, my)) != kernel:
                return False
    return True
