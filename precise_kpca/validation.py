"""Input checks shared by every layer: clear errors that say what is wrong and where."""
from __future__ import annotations

import math
import re
from fractions import Fraction

import numpy as np

from .backends import as_fraction

MIN_ROWS = 3
_POWER = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?\d+)?)\s*(?:\*\*|\^)\s*\(?\s*([+-]?\d+)\s*\)?\s*$")
_NUMBER = re.compile(r"^\s*[+-]?([0-9]*\.?[0-9]+(?:[eE][+-]?\d+)?)\s*$")
_RATIO = re.compile(r"^\s*[+-]?\d{1,1000}\s*/\s*\d{1,1000}\s*$")


def check_data(X, *, name: str = "X", min_rows: int = MIN_ROWS) -> np.ndarray:
    """Validate a data matrix and return it as a C-contiguous float64 array of shape (N, d).

    Raises
    ------
    ValueError
        If X is not 2-D, not numeric, has fewer than 3 rows or no columns, or holds NaN/inf
        (the message names the first offending row and column, 0-based).
    """
    try:
        array = np.asarray(X)
    except Exception as exc:  # ragged nested sequences
        raise ValueError(f"{name} could not be read as a 2-D numeric array: {exc}") from exc
    if array.ndim != 2:
        raise ValueError(f"{name} must be 2-D (N examples x d attributes), got shape {array.shape}")
    if array.dtype == object or not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
        bad = _first_non_numeric(array)
        where = f" (first at row {bad[0]}, column {bad[1]}: {array[bad]!r})" if bad else ""
        raise ValueError(f"{name} must be numeric, got dtype {array.dtype}{where}")
    if np.iscomplexobj(array):
        raise ValueError(f"{name} must be real, got complex dtype {array.dtype}")
    array = np.ascontiguousarray(array, dtype=np.float64)
    n, d = array.shape
    if n < min_rows:
        raise ValueError(
            f"{name} has {n} row(s); at least {min_rows} are needed (the median pairwise distance and "
            "double centering are degenerate below three)"
        )
    if d == 0:
        raise ValueError(f"{name} has {n} rows but no columns")
    finite = np.isfinite(array)
    if not finite.all():
        row, col = map(int, np.argwhere(~finite)[0])
        count = int((~finite).sum())
        raise ValueError(
            f"{name} contains {array[row, col]} at row {row}, column {col} (0-based; {count} non-finite "
            f"entr{'y' if count == 1 else 'ies'} in all): NaN/inf data have no distances"
        )
    return array


def _first_non_numeric(array):
    for index in np.ndindex(array.shape):
        try:
            value = float(array[index])
        except (TypeError, ValueError):
            return index
        if value != value and not isinstance(array[index], float):
            return index
    return None


def parse_sigma(sigma, *, name: str = "sigma") -> Fraction:
    """Exact positive rational value of a bandwidth.

    Accepts int, float, Fraction, mpmath mpf, or a string: a decimal number (``"0.25"``, ``"1e400"``), a ratio
    of integers (``"1/16"``, as the results store writes σ) or a power ``"a**b"`` / ``"a^b"`` (``"2**100"``,
    ``"2^-4"``), so bandwidths beyond the float range stay exact.
    """
    if isinstance(sigma, bool):
        raise ValueError(f"{name} must be a positive number, got {sigma!r}")
    if isinstance(sigma, str):
        value = _parse_sigma_string(sigma, name)
    else:
        if isinstance(sigma, (float, np.floating)) and not math.isfinite(sigma):
            raise ValueError(f"{name} must be finite and > 0, got {sigma!r}")
        try:
            value = as_fraction(sigma)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be a finite positive number, got {sigma!r}") from exc
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {sigma!r}")
    return value


def _parse_sigma_string(text: str, name: str) -> Fraction:
    power = _POWER.match(text)
    if power:
        base = Fraction(power.group(1))
        exponent = int(power.group(2))
        if abs(exponent) > 100_000:
            raise ValueError(f"{name}={text!r}: exponent {exponent} is out of the supported range (|e| <= 100000)")
        return base**exponent
    number = _NUMBER.match(text)
    if number or _RATIO.match(text):
        return Fraction(text.strip().replace(" ", ""))
    raise ValueError(f"{name}={text!r} is not a number; use e.g. '0.25', '1e40', '1/16', '2**100' or '2^-4'")
