"""Table-driven bad-input suite (issue 22): every input class either refused with a typed error whose message names
the parameter, or the row and column, at fault — or answered with the exact value of an independent oracle.

Oracles: exact ``Fraction`` arithmetic on the input entries (conversions, distances, medians), ``tests.reference``
(the measures from the exact data in a private mpmath context) and ``mpmath.eigsy`` at twice the digits.

Hangs and runaway memory are impossible by construction: each case runs in a forked child under ``RLIMIT_AS``
(its address space at the fork plus :data:`MEMORY_CAP`) and ``alarm(TIMEOUT)``; the parent kills it at
``2 * TIMEOUT``. A case that needs longer, or more memory, fails as such.
"""
from __future__ import annotations

import io
import math
import os
import pickle
import re
import resource
import select
import signal
import sys
import traceback
import warnings
from decimal import Decimal
from fractions import Fraction

import mpmath
import numpy as np
import pandas as pd
import pytest

from precise_kpca import limits
from precise_kpca.backends import get_backend
from precise_kpca.errors import ResourceLimitExceeded
from precise_kpca.estimator import PreciseKernelPCA
from precise_kpca.measures import measure
from precise_kpca.numerics import eigensystem, gaussian_gram, geometry
from precise_kpca.validation import check_data, parse_sigma

from ..reference import reference

TIMEOUT = 60
MEMORY_CAP = 1 << 30
X0 = np.array([[0, 1], [3, 1], [1, 4], [5, 2], [2, 7], [6, 6]], dtype=np.float64)
"""Small integers: X0·2^s is exact for every s from -1065 to 1018."""
_MP = mpmath.MPContext()
_MP.prec = 200


# -- expectations (checked in the child) ------------------------------------------------------------------------
class Raises:
    """The call raises ``kind`` (or a subclass) with a message matching every pattern (re.search, DOTALL)."""

    def __init__(self, kind, *patterns):
        self.kind, self.patterns = kind, patterns

    def check(self, call):
        try:
            value = call()
        except self.kind as exc:
            text = str(exc)
            missing = [p for p in self.patterns if not re.search(p, text, re.DOTALL)]
            return f"message {text!r} lacks {missing}" if missing else None
        except Exception as exc:  # noqa: BLE001 -- the wrong type is the finding
            return f"raised {type(exc).__name__}: {exc} (expected {self.kind.__name__})"
        return f"returned {value!r:.200} (expected {self.kind.__name__})"


class Value:
    """The call returns a value for which ``predicate`` holds (``predicate`` returns True or a failure text)."""

    def __init__(self, predicate):
        self.predicate = predicate

    def check(self, call):
        try:
            value = call()
        except Exception as exc:  # noqa: BLE001
            return f"raised {type(exc).__name__}: {exc}"
        verdict = self.predicate(value)
        return None if verdict is True else f"wrong value {value!r:.300}: {verdict}"


def _located(row, col):
    return rf"row {row}, column {col}"


def _equals_entries(original):
    """check_data returned float64 equal entry for entry to the exact rationals of ``original`` (a nested list)."""
    def predicate(out):
        if not (isinstance(out, np.ndarray) and out.dtype == np.float64):
            return "not a float64 array"
        exact = [[Fraction(v) if not isinstance(v, Decimal) else Fraction(*v.as_integer_ratio()) for v in row]
                 for row in original]
        got = [[Fraction(float(v)) for v in row] for row in out]
        return True if got == exact else "entries differ from the exact input"
    return predicate


# -- independent oracles ------------------------------------------------------------------------------------------
def _exact_median_distance(X) -> mpmath.mpf:
    rows = [[Fraction(float(v)) for v in r] for r in X]
    sq = sorted(sum((a - b) ** 2 for a, b in zip(p, q)) for p in rows for q in rows)  # full: N² entries
    n = len(sq)
    mid = sq[n // 2] if n % 2 else None
    if mid is not None:
        return _MP.sqrt(_MP.mpf(mid.numerator) / mid.denominator)
    lo, hi = sq[n // 2 - 1], sq[n // 2]
    return (_MP.sqrt(_MP.mpf(lo.numerator) / lo.denominator) + _MP.sqrt(_MP.mpf(hi.numerator) / hi.denominator)) / 2


def _geometry_matches(X):
    truth = _exact_median_distance(X)

    def predicate(g):
        got = _MP.mpf(g.median_distance)
        if not math.isfinite(float(g.eccentricity)):
            return "eccentricity not finite"
        return True if abs(got - truth) <= abs(truth) * 2.0**-50 else f"d_X {got} vs exact {truth}"
    return predicate


def _contains_reference(X, name, sigma, **options):
    def predicate(m):
        ref = reference(X, name, sigma, digits=20, **{k: v for k, v in options.items() if k in ("k",)})
        value = _MP.mpf(ref.value)
        if m.guarantee != "rigorous":
            return f"guarantee {m.guarantee}"
        return True if _MP.mpf(m.lower) <= value <= _MP.mpf(m.upper) else f"[{m.lower}, {m.upper}] misses {value}"
    return predicate


def _eigenvalues_match(matrix):
    ctx = mpmath.MPContext()
    ctx.dps = 40
    exact = sorted((float(v) for v in ctx.eigsy(ctx.matrix([[ctx.mpf(Fraction(x).numerator) / Fraction(x).denominator
                                                              for x in r] for r in matrix]))[0]), reverse=True)

    def predicate(system):
        got = sorted((float(v) for v in system.backend.internal(system.values)), reverse=True)
        scale = max(abs(v) for v in exact)
        close = all(abs(a - b) <= 16 * len(exact) * 2.0**-52 * scale for a, b in zip(got, exact))
        return True if close and len(got) == len(exact) else f"eigenvalues {got} vs {exact}"
    return predicate


# -- the table ----------------------------------------------------------------------------------------------------
def _with(value, row, col, base=X0, dtype=object):
    out = np.array(base, dtype=dtype)
    out[row, col] = value
    return out


def _masked(*positions):
    mask = np.zeros(X0.shape, dtype=bool)
    for p in positions:
        mask[p] = True
    return np.ma.masked_array(X0, mask=mask)


def _sparse():
    from scipy.sparse import csr_matrix
    return csr_matrix(X0)


def _longdouble(value):
    out = X0.astype(np.longdouble)
    out[1, 1] = value
    return out


NOT_FLOAT = r"is not a float64 number"
DATA_CASES = {
    # shape and size
    "1-D": (np.arange(6.0), Raises(ValueError, "X must be 2-D", r"\(6,\)")),
    "3-D": (np.zeros((2, 3, 4)), Raises(ValueError, "X must be 2-D", r"\(2, 3, 4\)")),
    "0-D scalar": (np.float64(3.0), Raises(ValueError, "X must be 2-D")),
    "dict": ({"a": 1}, Raises(ValueError, "X must be 2-D")),
    "no rows": (np.zeros((0, 2)), Raises(ValueError, r"X has 0 row\(s\); at least 3")),
    "two rows": (X0[:2], Raises(ValueError, r"X has 2 row\(s\); at least 3")),
    "no columns": (np.zeros((5, 0)), Raises(ValueError, "X has 5 rows but no columns")),
    "ragged list": ([[1.0, 2.0], [3.0], [4.0, 5.0]], Raises(ValueError, "X could not be read|X must be")),
    "sparse": (_sparse(), Raises(ValueError, "sparse matrix of shape", r"toarray")),
    # non-finite, located
    **{f"nan at ({r}, {c})": (_with(np.nan, r, c, dtype=float), Raises(ValueError, "nan", _located(r, c)))
       for r, c in [(0, 0), (3, 1), (5, 0)]},
    "inf": (_with(np.inf, 2, 1, dtype=float), Raises(ValueError, "inf", _located(2, 1))),
    "-inf": (_with(-np.inf, 4, 0, dtype=float), Raises(ValueError, "-inf", _located(4, 0))),
    "two nan": (_with(np.nan, 1, 0, _with(np.nan, 4, 1, dtype=float), float),
                Raises(ValueError, _located(1, 0), "2 non-finite entries")),
    "float32 nan": (_with(np.nan, 2, 0, dtype=np.float32), Raises(ValueError, _located(2, 0))),
    "float16 inf": (_with(np.inf, 0, 1, dtype=np.float16), Raises(ValueError, _located(0, 1))),
    "Decimal NaN": (_with(Decimal("NaN"), 3, 0), Raises(ValueError, _located(3, 0))),
    "mpf inf": (_with(mpmath.mpf("inf"), 1, 1), Raises(ValueError, _located(1, 1))),
    # not real numbers
    "complex dtype": (X0.astype(complex), Raises(ValueError, "X must be real", "complex")),
    "complex object": (_with(1 + 2j, 1, 1), Raises(ValueError, "must be real", _located(1, 1))),
    "numpy complex object": (_with(np.complex128(1j), 2, 0), Raises(ValueError, "must be real", _located(2, 0))),
    "mpc object": (_with(mpmath.mpc(1, 1), 0, 1), Raises(ValueError, "must be real", _located(0, 1))),
    "string dtype": (X0.astype(str), Raises(ValueError, "X must be numeric", "<U")),
    "bytes dtype": (X0.astype(bytes), Raises(ValueError, "X must be numeric")),
    "string object": (_with("3.0", 2, 0), Raises(ValueError, "must be numeric, got str", _located(2, 0))),
    "list object": (_with([1], 4, 1), Raises(ValueError, "must be numeric, got list", _located(4, 1))),
    "None entry": (_with(None, 1, 0), Raises(ValueError, "missing value", _located(1, 0))),
    "pd.NA entry": (_with(pd.NA, 3, 1), Raises(ValueError, "missing value", _located(3, 1))),
    "pd.NaT entry": (_with(pd.NaT, 5, 1), Raises(ValueError, "missing value", _located(5, 1))),
    "datetime64": (np.zeros((4, 2), dtype="datetime64[s]"), Raises(ValueError, "X must be numeric", "datetime64")),
    "timedelta64": (np.zeros((4, 2), dtype="timedelta64[s]"), Raises(ValueError, "X must be numeric")),
    "structured": (np.zeros((4, 2), dtype=[("a", "f8")]), Raises(ValueError, "X must be numeric")),
    # masked
    "masked one": (_masked((2, 1)), Raises(ValueError, "masked array with 1 masked entry", _located(2, 1))),
    "masked three": (_masked((1, 0), (3, 1), (5, 1)), Raises(ValueError, "3 masked entries", _located(1, 0))),
    "masked all": (np.ma.masked_all((4, 2)), Raises(ValueError, "masked entries", _located(0, 0))),
    # not float64 numbers: refused where they are, never rounded
    "int64 2^53+1": (_with(2**53 + 1, 3, 1, dtype=np.int64), Raises(ValueError, NOT_FLOAT, _located(3, 1), "int64")),
    "int64 -(2^53+1)": (_with(-(2**53 + 1), 0, 0, dtype=np.int64), Raises(ValueError, NOT_FLOAT, _located(0, 0))),
    "int64 max": (_with(2**63 - 1, 2, 1, dtype=np.int64), Raises(ValueError, NOT_FLOAT, _located(2, 1))),
    "uint64 max": (_with(2**64 - 1, 4, 0, dtype=np.uint64), Raises(ValueError, NOT_FLOAT, _located(4, 0), "uint64")),
    "uint64 2^63+1": (_with(2**63 + 1, 1, 1, dtype=np.uint64), Raises(ValueError, NOT_FLOAT, _located(1, 1))),
    "long double 1/3": (_longdouble(np.longdouble(1) / 3), Raises(ValueError, NOT_FLOAT, _located(1, 1))),
    "long double 1+2^-60": (_longdouble(np.longdouble(1) + np.longdouble(2) ** -60),
                            Raises(ValueError, NOT_FLOAT, _located(1, 1))),
    "long double 2^20000": (_longdouble(np.longdouble(2) ** 16000), Raises(ValueError, NOT_FLOAT, _located(1, 1))),
    "Fraction 1/3": (_with(Fraction(1, 3), 0, 1), Raises(ValueError, NOT_FLOAT, _located(0, 1), "Fraction")),
    "Fraction 2^-1100": (_with(Fraction(1, 2**1100), 2, 0), Raises(ValueError, NOT_FLOAT, _located(2, 0))),
    "Fraction 10^400": (_with(Fraction(10**400), 5, 1), Raises(ValueError, NOT_FLOAT, _located(5, 1))),
    "Decimal 0.1": (_with(Decimal("0.1"), 1, 0), Raises(ValueError, NOT_FLOAT, _located(1, 0), "Decimal")),
    "Decimal 1e400": (_with(Decimal("1e400"), 3, 0), Raises(ValueError, NOT_FLOAT, _located(3, 0))),
    "Decimal 1e-400": (_with(Decimal("1e-400"), 3, 1), Raises(ValueError, NOT_FLOAT, _located(3, 1))),
    "mpf 71 bits": (_with(_MP.mpf(1) + _MP.mpf(2) ** -70, 4, 1), Raises(ValueError, NOT_FLOAT, _located(4, 1))),
    "mpf 2^-1100": (_with(mpmath.mpf(2) ** -1100, 0, 0), Raises(ValueError, NOT_FLOAT, _located(0, 0))),
    "mpf 2^(10^9)": (_with(mpmath.mpf((1, 10**9)), 2, 1), Raises(ValueError, NOT_FLOAT, _located(2, 1))),
    "int 2^53+1 object": (_with(2**53 + 1, 1, 1), Raises(ValueError, NOT_FLOAT, _located(1, 1))),
    "int 10^400 object": (_with(10**400, 5, 0), Raises(ValueError, NOT_FLOAT, _located(5, 0))),
    "DataFrame nan names the column": (pd.DataFrame(_with(np.nan, 2, 1, dtype=float), columns=["alcohol", "ash"]),
                                       Raises(ValueError, _located(2, 1))),
    "DataFrame Fraction names the column": (pd.DataFrame(_with(Fraction(1, 3), 3, 0), columns=["alcohol", "ash"]),
                                            Raises(ValueError, NOT_FLOAT, "'alcohol'")),
    "DataFrame string column": (pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": ["x", "y", "z"]}),
                                Raises(ValueError, "must be numeric", "'b'")),
}

_EXACT_INPUTS = {
    "int64 2^53+2": _with(2**53 + 2, 3, 1, dtype=np.int64),
    "int64 -2^62": _with(-(2**62), 0, 1, dtype=np.int64),
    "uint64 2^63": _with(2**63, 2, 0, dtype=np.uint64),
    "uint64 2^64-2^11": _with(2**64 - 2**11, 1, 0, dtype=np.uint64),
    **{f"{t.__name__}": X0.astype(t) for t in (np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32)},
    "bool": (X0 > 2),
    "float16": X0.astype(np.float16) / 8,
    "float32": X0.astype(np.float32) / 3,
    "long double 0.5": _longdouble(np.longdouble("0.5")),
    "long double 2^1000": _longdouble(np.longdouble(2) ** 1000),
    "Fraction 1/4": _with(Fraction(1, 4), 1, 1),
    "Fraction 3*2^-1074": _with(Fraction(3, 2**1074), 2, 1),
    "Decimal 0.5": _with(Decimal("0.5"), 4, 0),
    "Decimal 1e20": _with(Decimal("1e20"), 5, 0),
    "mpf 0.25": _with(mpmath.mpf("0.25"), 0, 0),
    "mpf 2^1000": _with(mpmath.mpf(2) ** 1000, 0, 1),
    "int 2^60 object": _with(2**60, 3, 0),
    "numpy int64 object": _with(np.int64(2**55), 2, 1),
    "numpy float32 object": _with(np.float32(0.1), 1, 0),
    "mixed objects": _with(Fraction(5, 8), 0, 0, _with(Decimal("0.75"), 1, 1, _with(7, 2, 0))),
    "negative zero": _with(-0.0, 3, 1, dtype=float),
    "subnormal": _with(5e-324, 4, 1, dtype=float),
    "big-endian": X0.astype(">f8"),
    "Fortran order": np.asfortranarray(X0),
    "strided view": np.hstack([X0, X0])[:, ::2],
    "read-only": np.frombuffer(X0.tobytes(), dtype=np.float64).reshape(X0.shape),
    "list of lists": X0.tolist(),
    "tuple of tuples": tuple(map(tuple, X0.tolist())),
    "masked nothing masked": _masked(),
    "DataFrame numeric": pd.DataFrame(X0, columns=["p", "q"]),
    "DataFrame int64 2^53+2": pd.DataFrame(_with(2**53 + 2, 0, 0, dtype=np.int64)),
}


def _entries(data):
    if isinstance(data, pd.DataFrame):
        return data.to_numpy(dtype=object).tolist()
    if np.ma.isMaskedArray(data):
        return np.ma.getdata(data).tolist()
    array = np.asarray(data)
    if array.dtype.kind == "f" and array.dtype.itemsize > 8:
        return [[Fraction(*np.longdouble(v).as_integer_ratio()) for v in row] for row in array]
    return [[_exact(v) if array.dtype == object else (int(v) if array.dtype.kind in "iub" else float(v)) for v in row]
            for row in array]


def _exact(v):
    """The exact rational of one object entry, by its own definition (mantissa and exponent for mpf)."""
    if hasattr(v, "_mpf_"):
        sign, man, exp, _ = v._mpf_
        return (-1) ** sign * Fraction(man) * Fraction(2) ** exp
    if isinstance(v, np.floating):
        return Fraction(float(v))
    return v


for name, data in _EXACT_INPUTS.items():
    DATA_CASES[f"exact {name}"] = (data, Value(_equals_entries(_entries(data))))

SIGMA_CASES = {
    "1e999999999": ("1e999999999", Raises(ResourceLimitExceeded, "sigma", "max_log2_sigma", "PRECISE_KPCA_MAX_LOG2")),
    "1e-999999999": ("1e-999999999", Raises(ResourceLimitExceeded, "sigma", "max_log2_sigma")),
    "0.000...1e-99999999": ("0.0001e-99999999", Raises(ResourceLimitExceeded, "max_log2_sigma")),
    "2**100000": ("2**100000", Raises(ResourceLimitExceeded, "sigma='2\\*\\*100000'", "max_log2_sigma")),
    "10**-5000": ("10**-5000", Raises(ResourceLimitExceeded, "max_log2_sigma")),
    "2^-20000": ("2^-20000", Raises(ResourceLimitExceeded, "max_log2_sigma")),
    "huge digit string": ("9" * 5000, Raises(ResourceLimitExceeded, "max_sigma_chars")),
    "0**-1": ("0**-1", Raises(ValueError, "sigma='0\\*\\*-1'", "a power of 0")),
    "0**2": ("0**2", Raises(ValueError, "a power of 0")),
    "1/0": ("1/0", Raises(ValueError, "division by zero")),
    "0/5": ("0/5", Raises(ValueError, "sigma must be > 0")),
    "text": ("wide", Raises(ValueError, "sigma='wide' is not a number")),
    "empty": ("", Raises(ValueError, "is not a number")),
    "blank": ("   ", Raises(ValueError, "is not a number")),
    "1e": ("1e", Raises(ValueError, "is not a number")),
    "2**": ("2**", Raises(ValueError, "is not a number")),
    "abc**2": ("abc**2", Raises(ValueError, "is not a number")),
    "nan text": ("nan", Raises(ValueError, "sigma")),
    "inf text": ("inf", Raises(ValueError, "sigma")),
    "-1 text": ("-1", Raises(ValueError, "sigma must be > 0")),
    "0": (0, Raises(ValueError, "sigma must be > 0")),
    "-1.5": (-1.5, Raises(ValueError, "sigma must be > 0")),
    "float nan": (float("nan"), Raises(ValueError, "sigma must be finite")),
    "float inf": (float("inf"), Raises(ValueError, "sigma must be finite")),
    "numpy nan": (np.float64("nan"), Raises(ValueError, "sigma must be finite")),
    "True": (True, Raises(ValueError, "sigma must be a positive number")),
    "None": (None, Raises(ValueError, "sigma must be a finite positive number")),
    "list": ([1.0], Raises(ValueError, "sigma must be a finite positive number")),
    "complex": (1 + 1j, Raises(ValueError, "sigma must be a finite positive number")),
    "Fraction 0": (Fraction(0), Raises(ValueError, "sigma must be > 0")),
    "Fraction -1/2": (Fraction(-1, 2), Raises(ValueError, "sigma must be > 0")),
    "mpf nan": (mpmath.mpf("nan"), Raises(ValueError, "sigma")),
    "mpf 2^(10^6)": (mpmath.mpf((1, 10**6)), Raises(ResourceLimitExceeded, "max_log2_sigma")),
    "Fraction 2^-20000": (Fraction(1, 2**20000), Raises(ResourceLimitExceeded, "max_log2_sigma")),
    "exact 1e400": ("1e400", Value(lambda v: v == Fraction(10**400) or "not 10^400")),
    "exact 1/16": ("1/16", Value(lambda v: v == Fraction(1, 16) or "not 1/16")),
    "exact 2^-4": ("2^-4", Value(lambda v: v == Fraction(1, 16) or "not 1/16")),
    "exact 2**(-3)": ("2**(-3)", Value(lambda v: v == Fraction(1, 8) or "not 1/8")),
    "exact 0.1": ("0.1", Value(lambda v: v == Fraction(1, 10) or "not 1/10")),
    "exact 1.5e-3": (" 1.5e-3 ", Value(lambda v: v == Fraction(3, 2000) or "not 3/2000")),
    "exact float 0.1": (0.1, Value(lambda v: v == Fraction(0.1) or "not the float 0.1")),
    "exact numpy int": (np.int64(3), Value(lambda v: v == 3 or "not 3")),
    "exact 2**10000": ("2**10000", Value(lambda v: v == 2**10000 or "not 2^10000")),
    "exact 1e-320": (1e-320, Value(lambda v: v == Fraction(1e-320) or "not the subnormal")),
}


def _measure(name="metric", sigma=1.0, X=X0, **options):
    return lambda: measure(X, name, sigma, **options)


MEASURE_CASES = {
    "unknown measure": (_measure("volume"), Raises(ValueError, "unknown measure 'volume'")),
    "k=0": (_measure("eigenprojection", k=0), Raises(ValueError, "k must be a positive integer")),
    "k=-1": (_measure("pc", k=-1), Raises(ValueError, "k must be a positive integer")),
    "k=1.5": (_measure("pc", k=1.5), Raises(ValueError, "k must be a positive integer")),
    "k=True": (_measure("pc", k=True), Raises(ValueError, "k must be a positive integer")),
    "k beyond rank": (_measure("eigenprojection", k=3), Raises(ValueError, "k=3 exceeds the rank 2")),
    "digits=0": (_measure(digits=0), Raises(ValueError, "digits must be an integer")),
    "digits=-3": (_measure(digits=-3), Raises(ValueError, "digits must be an integer")),
    "digits=2.5": (_measure(digits=2.5), Raises(ValueError, "digits must be an integer")),
    "digits='10'": (_measure(digits="10"), Raises(ValueError, "digits must be an integer")),
    "digits=10**6": (_measure(digits=10**6), Raises(ResourceLimitExceeded, "digits", "max_digits",
                                                   "PRECISE_KPCA_MAX_DIGITS")),
    "backend bogus": (_measure(backend="bogus"), Raises(ValueError, "backend")),
    "guarantee bogus": (_measure(guarantee="bogus"), Raises(ValueError, "guarantee")),
    "aggregate bogus": (_measure("eigenprojection", aggregate="median"), Raises(ValueError, "aggregate")),
    "tau 0": (_measure("eigenprojection", tau=0), Raises(ValueError, "tau")),
    "tau 1": (_measure("eigenprojection", tau=1), Raises(ValueError, "tau")),
    "tau nan": (_measure("eigenprojection", tau=float("nan")), Raises(ValueError, "tau")),
    "median bogus": (_measure(median="mean"), Raises(ValueError, "median")),
    "arb backend on eigenvalue": (_measure("eigenvalue", backend="arb"), Raises(ValueError, "metric measure only")),
    "dps 10**7": (_measure(backend="mp", dps=10**7), Raises(ResourceLimitExceeded, "dps=10000000", "max_")),
    "sigma 1e999999999": (_measure(sigma="1e999999999"), Raises(ResourceLimitExceeded, "max_log2_sigma")),
    "sigma 0**-1": (_measure(sigma="0**-1"), Raises(ValueError, "a power of 0")),
    "identical rows": (_measure(X=np.ones((5, 2))), Raises(ValueError, "identical|duplicate")),
    "X with nan": (_measure(X=_with(np.nan, 1, 1, dtype=float)), Raises(ValueError, _located(1, 1))),
    "X int64 2^53+1": (_measure(X=_with(2**53 + 1, 2, 0, dtype=np.int64)), Raises(ValueError, _located(2, 0))),
    "heuristic eigenvalue at 300 digits": (
        lambda: _limited(lambda: measure(np.random.default_rng(0).normal(size=(60, 3)), "eigenvalue", 2.0**20,
                                         digits=300, guarantee="heuristic"), max_seconds=60),
        Raises(ResourceLimitExceeded, "max_seconds", "estimated at")),
    "heuristic warns past a minute": (
        lambda: _warnings_as_errors(lambda: measure(np.random.default_rng(0).normal(size=(60, 3)), "eigenvalue",
                                                    2.0**20, digits=300, guarantee="heuristic")),
        Raises(RuntimeWarning, "estimated")),
    # extreme scales: the certified values of the exact data
    **{f"metric X*2^{s}": (_measure(X=np.ldexp(X0, s), digits=8), Value(_contains_reference(np.ldexp(X0, s),
                                                                                          "metric", 1)))
       for s in (1018, 600, -600, -1065)},
    **{f"eigenvalue X*2^{s}": (_measure("eigenvalue", sigma=4, X=np.ldexp(X0, s), digits=6),
                               Value(_contains_reference(np.ldexp(X0, s), "eigenvalue", 4)))
       for s in (1018, -1065)},
    "metric sigma 2^-40": (_measure(sigma=Fraction(1, 2**40), digits=6),
                           Value(_contains_reference(X0, "metric", Fraction(1, 2**40)))),
}


def _limited(call, **changes):
    with limits.lifted(**changes):
        return call()


def _warnings_as_errors(call):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        return call()


def _geometry_case(s):
    X = np.ldexp(X0, s)
    return lambda: geometry(X), Value(_geometry_matches(X))


def _gram_is_identity(gram):
    values = np.array([[float(v) for v in row] for row in gram.backend.internal(gram.values)]) \
        if hasattr(gram, "values") else np.asarray(gram)
    ok = np.array_equal(values, np.eye(len(values)))
    return True if ok else f"not the identity (diagonal {np.diag(values)})"


SCALE_CASES = {
    **{f"geometry X*2^{s}": _geometry_case(s) for s in (1018, 1000, 512, -512, -1000, -1060, -1065)},
    "geometry rows 1e-300 apart": (lambda: geometry(np.array([[0.0], [1e-300], [3e-300], [7e-300]])),
                                   Value(_geometry_matches(np.array([[0.0], [1e-300], [3e-300], [7e-300]])))),
    "geometry duplicates": (lambda: geometry(np.vstack([X0, X0[:1]])).min_distance,
                            Value(lambda v: v == 0 or "min distance of a duplicate row not 0")),
    "gram sigma 1e-320": (lambda: gaussian_gram(X0, 1e-320), Value(_gram_is_identity)),
    "gram sigma 2^-1000": (lambda: gaussian_gram(X0, Fraction(1, 2**1000)), Value(_gram_is_identity)),
    "gram X*2^-1000, sigma 1e-200": (lambda: gaussian_gram(np.ldexp(X0, -1000), 1e-200), Value(_gram_is_identity)),
}

_SYM = [[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]]
MATRIX_CASES = {
    "eigensystem complex Hermitian": (lambda: eigensystem(np.array([[2, 1j], [-1j, 2]])),
                                      Raises(ValueError, "must be real")),
    "eigensystem mpc object": (lambda: eigensystem(np.array([[mpmath.mpc(2, 0), mpmath.mpc(0, 1)],
                                                             [mpmath.mpc(0, -1), mpmath.mpc(2, 0)]])),
                               Raises(ValueError, "must be real")),
    "eigensystem non-symmetric": (lambda: eigensystem(np.array([[1.0, 2.0], [0.0, 3.0]])),
                                  Raises(ValueError, "not symmetric", r"\[0, 1\]")),
    "eigensystem asymmetric 1e-6": (lambda: eigensystem(np.array(_SYM) + np.triu(np.full((3, 3), 1e-6), 1)),
                                    Raises(ValueError, "not symmetric", "tolerance")),
    "eigensystem non-square": (lambda: eigensystem(np.ones((2, 3))), Raises(ValueError, "square|shape")),
    "eigensystem 1-D": (lambda: eigensystem(np.ones(3)), Raises(ValueError, "square|2-D|shape")),
    "eigensystem nan": (lambda: eigensystem(_with(np.nan, 1, 1, np.array(_SYM), float)),
                        Raises(ValueError, "nan|finite|NaN")),
    "eigensystem exact symmetric": (lambda: eigensystem(np.array(_SYM)), Value(_eigenvalues_match(_SYM))),
    "eigensystem int matrix": (lambda: eigensystem(np.array([[2, 1], [1, 2]])),
                               Value(_eigenvalues_match([[2, 1], [1, 2]]))),
    "eigensystem rounding asymmetry": (
        lambda: eigensystem(np.array(_SYM) + np.triu(np.full((3, 3), 2.0**-52), 1)),
        Value(_eigenvalues_match([[2, 1 + 2**-53, 0 + 2**-53], [1 + 2**-53, 3, 1 + 2**-53], [2**-53, 1 + 2**-53, 4]]))),
}


def _certify(matrix):
    from precise_kpca.certify.psd import certify_psd
    return lambda: certify_psd(matrix)


MATRIX_CASES.update({
    "certify_psd complex": (_certify(np.array([[2, 1j], [-1j, 2]])), Raises(ValueError, "must be real")),
    "certify_psd non-symmetric": (_certify(np.array([[1.0, 2.0], [0.0, 3.0]])), Raises(ValueError, "not symmetric")),
    "certify_psd non-square": (_certify(np.ones((2, 3))), Raises(ValueError, "square|shape")),
    "certify_psd nan": (_certify(_with(np.nan, 0, 0, np.array(_SYM), float)), Raises(ValueError, "nan|finite|NaN")),
})


def _backend(*args):
    return lambda: get_backend(*args)


def _fit(**params):
    params.setdefault("sigma", 1.0)
    n = params.pop("n_components", 2)
    return lambda: PreciseKernelPCA(n, **params).fit(X0)


OPTION_CASES = {
    "backend mp dps 10**7": (_backend("mp", 10**7), Raises(ResourceLimitExceeded, "dps", "max_dps", "PRECISE_KPCA")),
    "backend mp dps 0": (_backend("mp", 0), Raises(ValueError, "dps")),
    "backend mp dps -5": (_backend("mp", -5), Raises(ValueError, "dps")),
    "backend mp dps 1.5": (_backend("mp", 1.5), Raises(ValueError, "dps")),
    "backend mp dps '50'": (_backend("mp", "50"), Raises(ValueError, "dps")),
    "backend bogus": (_backend("quad"), Raises(ValueError, "quad")),
    "backend mp dps lifted": (lambda: _limited(lambda: get_backend("mp", 12_000).dps, max_dps=20_000),
                              Value(lambda d: d == 12_000 or "dps not 12000")),
    "set_limits 0": (lambda: limits.set_limits(max_dps=0), Raises(ValueError, "max_dps must be a positive integer")),
    "set_limits unknown": (lambda: limits.set_limits(max_speed=3), Raises(ValueError, "max_speed")),
    "limit from a bad environment": (lambda: _reload_limits_with(PRECISE_KPCA_MAX_DPS="lots"),
                                     Raises(ValueError, "PRECISE_KPCA_MAX_DPS='lots' must be an integer")),
    "estimator mp dps 0": (_fit(backend="mp", dps=0), Raises(ValueError, "dps")),
    "estimator dps with auto": (_fit(dps=50), Raises(ValueError, "dps applies to backend='mp' only")),
    "estimator sigma 2**100000": (_fit(sigma="2**100000"), Raises(ResourceLimitExceeded, "max_log2_sigma")),
    "estimator sigma 0**-1": (_fit(sigma="0**-1"), Raises(ValueError, "a power of 0")),
    "estimator n_components 0": (_fit(n_components=0), Raises(ValueError, "n_components")),
    "estimator n_components N": (_fit(n_components=6), Raises(ValueError, "n_components")),
    "estimator backend bogus": (_fit(backend="quad"), Raises(ValueError, "backend")),
    "estimator mp dps 10**7": (_fit(backend="mp", dps=10**7), Raises(ResourceLimitExceeded, "max_dps")),
}


def _reload_limits_with(**environment):
    import importlib
    os.environ.update(environment)
    importlib.reload(limits)


def _curve(**options):
    from precise_kpca.studies import curves

    def never(*_):  # every argument is checked before the first point
        raise AssertionError("a point ran")

    def call():
        curves.compute_point = never
        grid, X = options.pop("grid", range(0, 3)), options.pop("X", X0)
        return curves.convergence_curve(X, grid, store=False, executor="serial", progress=False, **options)
    return call


CURVE_CASES = {
    "curve k=[]": (_curve(measures=("pc",), k=[]), Raises(ValueError, "k")),
    "curve k=0": (_curve(measures=("pc",), k=0), Raises(ValueError, "k")),
    "curve k beyond rank": (_curve(measures=("pc",), k=[1, 5]), Raises(ValueError, "k=5")),
    "curve backend bogus": (_curve(backend="quad"), Raises(ValueError, "backend")),
    "curve digits 10**6": (_curve(digits=10**6), Raises(ResourceLimitExceeded, "max_digits")),
    "curve digits 0": (_curve(digits=0), Raises(ValueError, "digits")),
    "curve 10^8 points": (_curve(grid=range(0, 100_000_000)), Raises(ResourceLimitExceeded, "max_points")),
    "curve exponent 1.5": (_curve(grid=[0, 1.5]), Raises(ValueError, "1.5")),
    "curve exponent 10**6": (_curve(grid=[10**6]), Raises(ResourceLimitExceeded, "max_log2_sigma")),
    "curve unknown measure": (_curve(measures=("volume",)), Raises(ValueError, "volume")),
    "curve no measures": (_curve(measures=()), Raises(ValueError, "measure")),
    "curve dps with auto": (_curve(dps=50), Raises(ValueError, "dps")),
    "curve mp dps 10**7": (_curve(backend="mp", dps=10**7), Raises(ResourceLimitExceeded, "max_dps")),
    "curve tau 2": (_curve(measures=("eigenprojection",), tau=2), Raises(ValueError, "tau")),
    "curve median bogus": (_curve(median="mean"), Raises(ValueError, "median")),
    "curve aggregate bogus": (_curve(measures=("eigenprojection",), aggregate="sum"), Raises(ValueError, "aggregate")),
    "curve guarantee bogus": (_curve(guarantee="proven"), Raises(ValueError, "guarantee")),
    "curve X nan": (_curve(X=_with(np.nan, 2, 1, dtype=float)), Raises(ValueError, _located(2, 1))),
}


def _cli(*argv, status=2):
    """The CLI's exit status is ``status`` and its stderr one line (no traceback); returns that line."""
    def call():
        from precise_kpca.cli import main

        saved, sys.stderr = sys.stderr, io.StringIO()
        try:
            code = main(list(argv))
            text = sys.stderr.getvalue()
        finally:
            sys.stderr = saved
        lines = [line for line in text.splitlines() if line.strip()]
        if code != status or len(lines) != 1 or "Traceback" in text:
            raise AssertionError(f"status {code} (expected {status}), stderr {text!r}")
        raise _CliLine(lines[0])
    return call


class _CliLine(Exception):
    """The one stderr line of a CLI case (raised so that :class:`Raises` matches it)."""


def _cli_case(*argv, patterns=(), status=2):
    return _cli(*argv, status=status), Raises(_CliLine, "error", *patterns)


def _blocker():
    """A plain file (one byte) in a fresh temporary folder."""
    import tempfile
    path = os.path.join(tempfile.mkdtemp(prefix="bad-input-"), "a-file")
    with open(path, "w") as f:
        f.write("x")
    return path


CLI_CASES = {
    "cli unknown data set": _cli_case("geometry", "no-such-data", patterns=("no-such-data",)),
    "cli data dir missing": _cli_case("geometry", "wine", "--data-dir", "/nonexistent/dir",
                                      patterns=("/nonexistent/dir",)),
    "cli sigma text": _cli_case("plan", "wine", "--sigma", "wide", patterns=("sigma",)),
    "cli sigma 1e999999999": _cli_case("plan", "wine", "--sigma", "1e999999999", patterns=("max_log2_sigma",)),
    "cli digits 0": _cli_case("plan", "wine", "--sigma", "1", "--digits", "0", patterns=("digits",)),
    "cli unknown subcommand": _cli_case("explode", patterns=("invalid choice|explode",)),
    "cli log2 sigma 10^8 points": _cli_case("curves", "wine", "--log2-sigma=0:100000000",
                                            patterns=("max_points|points",)),
    "cli store check a text file": (lambda: _store_check(_blocker()),
                                    Value(lambda out: "damaged" in out and "store repair" in out or out)),
    "cli store under a file": (lambda: _cli("curves", "wine", "--log2-sigma=0:2", "--store",
                                            os.path.join(_blocker(), "s.sqlite"))(),
                               Raises(_CliLine, "error", "is a file")),
    "cli out under a file": (lambda: _cli("curves", "wine", "--log2-sigma=0:2", "--store", ":memory:", "--out",
                                          os.path.join(_blocker(), "out.csv"))(),
                             Raises(_CliLine, "error", "a-file")),
}

def _store_check(path):
    from precise_kpca.cli import main

    saved, sys.stdout = sys.stdout, io.StringIO()
    try:
        code = main(["store", "check", path])
        text = sys.stdout.getvalue()
    finally:
        sys.stdout = saved
    return text if code == 1 else f"status {code}: {text}"


CASES = {}
for table, run in ((DATA_CASES, lambda data: (lambda: check_data(data))),
                   (SIGMA_CASES, lambda sigma: (lambda: parse_sigma(sigma)))):
    for name, (argument, expectation) in table.items():
        CASES[name if table is DATA_CASES else f"sigma {name}"] = (run(argument), expectation)
for table in (MEASURE_CASES, SCALE_CASES, MATRIX_CASES, OPTION_CASES, CURVE_CASES, CLI_CASES):
    CASES.update(table)


# -- the harness --------------------------------------------------------------------------------------------------
def _address_space() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))


def _on_alarm(*_):
    raise TimeoutError("no answer within the time limit")


def _child(call, expectation, write_end: int, timeout: int) -> None:
    try:
        cap = _address_space() + MEMORY_CAP
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.alarm(timeout)
        verdict = expectation.check(call)
        signal.alarm(0)
    except BaseException:  # noqa: BLE001 -- the child reports everything to the parent
        verdict = "harness: " + traceback.format_exc(limit=3)
    os.write(write_end, pickle.dumps(verdict))


def isolated(call, expectation, timeout: int = TIMEOUT):
    """Run ``expectation.check(call)`` in a forked child under the caps; returns its verdict (None: passed)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        try:
            _child(call, expectation, write_end, timeout)
        finally:
            os._exit(0)
    os.close(write_end)
    chunks = []
    try:
        while True:
            ready, _, _ = select.select([read_end], [], [], 2 * timeout)
            if not ready:
                os.kill(pid, signal.SIGKILL)
                return f"hung: killed after {2 * timeout} s"
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_end)
        _, status = os.waitpid(pid, 0)
    if not chunks:
        return f"child died (status {status}: out of memory under the {MEMORY_CAP >> 20} MiB cap?)"
    return pickle.loads(b"".join(chunks))


def test_the_suite_has_at_least_150_classes():
    assert len(CASES) >= 150, len(CASES)


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input(name):
    call, expectation = CASES[name]
    verdict = isolated(call, expectation)
    assert verdict is None, f"{name}: {verdict}"


def test_the_harness_catches_a_hang_a_memory_hog_and_a_wrong_verdict():
    import time
    assert isolated(lambda: time.sleep(60), Value(lambda _: True), timeout=1).startswith("raised TimeoutError")
    assert "MemoryError" in isolated(lambda: bytearray(2 * MEMORY_CAP), Value(lambda _: True))
    assert isolated(lambda: 1, Raises(ValueError)) == "returned 1 (expected ValueError)"
    assert "lacks" in isolated(lambda: check_data(np.ones(3)), Raises(ValueError, "row 7"))
