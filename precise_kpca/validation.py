"""Input checks shared by every layer: clear errors that say what is wrong and where.

Guarantees:

* **Exact input or a refusal.** :func:`check_data` returns float64 data equal to the input entry for entry: integers
  beyond 2^53, long doubles, ``Fraction``/``Decimal``/mpf objects are accepted exactly when they are float64
  numbers and refused otherwise, naming the first entry that is not (never rounded silently); a masked entry, a
  missing value, a sparse matrix, a complex or non-numeric entry are refused with their row and column.
* **Symmetric, real matrices** for the eigensolvers (:func:`check_symmetric`), within a stated rounding tolerance.
* **Bandwidths** are exact rationals (:func:`parse_sigma`), their size bounded before they are built
  (:mod:`precise_kpca.limits`).
* **Any float64 magnitude.** Every scale-invariant computation may replace X by X·2^s (:func:`scale_exponent`, exact:
  only the exponents change), so squared distances of data near 1e307 or 1e-310 neither overflow nor underflow.

Hand-written because the checks are about exactness (``numpy.asarray(x, float)`` rounds without a word) and their
messages name this library's parameters.
"""
from __future__ import annotations

import math
import re
import sys
from decimal import Decimal
from fractions import Fraction

import numpy as np

from . import limits
from .backends import as_fraction

MIN_ROWS = 3
_EXACT_INT = 2**53
_POWER = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?\d+)?)\s*(?:\*\*|\^)\s*\(?\s*([+-]?\d+)\s*\)?\s*$")
_NUMBER = re.compile(r"^\s*[+-]?([0-9]*)\.?([0-9]*)(?:[eE]([+-]?\d+))?\s*$")
_RATIO = re.compile(r"^\s*[+-]?(\d+)\s*/\s*(\d+)\s*$")
SAFE_EXPONENT = 200
"""Data with max|x| in [2^-200, 2^200] is left as it is by :func:`scale_exponent`; squared distances, Grams and
their sums over N ≤ 10^6 rows then stay far inside the float64 range."""


def check_data(X, *, name: str = "X", min_rows: int = MIN_ROWS) -> np.ndarray:
    """Validate a data matrix and return it as a C-contiguous float64 array of shape (N, d), equal to X exactly.

    Parameters
    ----------
    X : array_like, shape (N, d)
        Real numbers: bool, integer, float (any width), or objects (int, float, ``Fraction``, ``Decimal``, mpf);
        a masked array without masked entries; a pandas DataFrame.
    name : str
        The argument's name in messages.
    min_rows : int

    Raises
    ------
    ValueError
        If X is not 2-D, not numeric, complex, sparse, has masked or missing entries, has fewer than ``min_rows``
        rows or no columns, holds NaN/inf, or holds a value that is not a float64 number (an integer beyond 2^53
        that is not a multiple of its float spacing, a long double or rational between floats): the message names
        the first offending row and column, 0-based.
    """
    array = _as_array(X, name)
    if array.ndim != 2:
        raise ValueError(f"{name} must be 2-D (N examples x d attributes), got shape {array.shape}")
    array = exact_float64(array, name, _column_labels(X))
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


def _as_array(X, name: str) -> np.ndarray:
    """X as an ndarray, refusing what ``numpy.asarray`` would silently misread (masks, sparse matrices)."""
    if np.ma.isMaskedArray(X):
        mask = np.ma.getmaskarray(X)
        if mask.any():
            where = tuple(int(i) for i in np.argwhere(mask)[0])
            raise ValueError(f"{name} is a masked array with {int(mask.sum())} masked entr"
                             f"{'y' if mask.sum() == 1 else 'ies'} (first at row {where[0]}"
                             + (f", column {where[1]}" if len(where) > 1 else "") + "): masked values have no "
                             "distances; drop those rows or fill them (X.filled(value))")
        return np.asarray(np.ma.getdata(X))
    if hasattr(X, "tocsr") and hasattr(X, "nnz"):  # scipy.sparse, without importing it
        raise ValueError(f"{name} is a sparse matrix of shape {X.shape}: pass a dense array ({name}.toarray())")
    try:
        return np.asarray(X)
    except Exception as exc:  # ragged nested sequences
        raise ValueError(f"{name} could not be read as a 2-D numeric array: {exc}") from exc


def _column_labels(X):
    columns = getattr(X, "columns", None)
    return list(columns) if columns is not None else None


def _where(name: str, index, labels) -> str:
    row, col = int(index[0]), int(index[1])
    label = f" ({labels[col]!r})" if labels is not None and col < len(labels) else ""
    return f"{name}[{row}, {col}] (row {row}, column {col}{label}, 0-based)"


def exact_float64(array: np.ndarray, name: str, labels=None, *, prefix: str = "") -> np.ndarray:
    """float64 copy of a 2-D array, equal to it entry for entry, or ValueError at the first entry that is not
    (the conversion of :func:`check_data`, for matrices that are not data sets; ``prefix`` starts the message)."""
    try:
        return _exact_float64(array, name, labels)
    except ValueError as exc:
        if not prefix:
            raise
        raise ValueError(f"{prefix}{exc}") from None


def _exact_float64(array: np.ndarray, name: str, labels) -> np.ndarray:
    kind = array.dtype.kind
    if kind == "c":
        raise ValueError(f"{name} must be real, got complex dtype {array.dtype}")
    if kind == "b" or kind in "iu" and array.dtype.itemsize <= 4 or kind == "f" and array.dtype.itemsize <= 8:
        return np.ascontiguousarray(array, dtype=np.float64)
    if kind in "iu":
        return _exact_from_integers(array, name, labels)
    if kind == "f":  # long double: exact where the round trip is
        with np.errstate(over="ignore", invalid="ignore"):
            converted = array.astype(np.float64)
            inexact = np.isfinite(array) & (converted.astype(array.dtype) != array)
        if inexact.any():
            index = np.argwhere(inexact)[0]
            raise ValueError(_not_float64(name, index, labels, array[tuple(index)], f"{array.dtype} value"))
        return np.ascontiguousarray(converted)
    if kind == "O":
        return _exact_from_objects(array, name, labels)
    where = f" (first at {_where(name, (0, 0), labels)}: {array[0, 0]!r})" if array.size else ""
    raise ValueError(f"{name} must be numeric, got dtype {array.dtype}{where}")


def _exact_from_integers(array: np.ndarray, name: str, labels) -> np.ndarray:
    converted = array.astype(np.float64)
    big = (array > _EXACT_INT) | (array < -_EXACT_INT) if array.dtype.kind == "i" else array > _EXACT_INT
    for index in np.argwhere(big):
        value = int(array[tuple(index)])
        if int(converted[tuple(index)]) != value:
            raise ValueError(_not_float64(name, index, labels, value, f"{array.dtype} integer"))
    return np.ascontiguousarray(converted)


def _exact_from_objects(array: np.ndarray, name: str, labels) -> np.ndarray:
    out = np.empty(array.shape, dtype=np.float64)
    for index in np.ndindex(array.shape):
        out[index] = _exact_entry(array[index], name, index, labels)
    return out


def _exact_entry(value, name: str, index, labels) -> float:
    if value is None or _is_missing(value):
        raise ValueError(f"{name} has a missing value ({value!r}) at {_where(name, index, labels)}")
    if isinstance(value, (complex, np.complexfloating)) or type(value).__name__ == "mpc":
        raise ValueError(f"{name} must be real, got complex {value!r} at {_where(name, index, labels)}")
    if isinstance(value, (bool, np.bool_)):
        return float(value)
    if not isinstance(value, (int, float, Fraction, Decimal, np.number)) and not hasattr(value, "_mpf_"):
        raise ValueError(f"{name} must be numeric, got {type(value).__name__} {_short(value)} at "
                         f"{_where(name, index, labels)}")
    if isinstance(value, (float, np.floating)) and np.dtype(type(value)).itemsize <= 8:
        return float(value)
    if not _finite(value):
        return float(value)  # NaN/inf: reported with the other non-finite entries
    exact = _exact_rational(value)
    try:
        converted = float(exact)
    except OverflowError:
        converted = math.inf
    if not math.isfinite(converted) or Fraction(converted) != exact:
        raise ValueError(_not_float64(name, index, labels, value, type(value).__name__))
    return converted


def _finite(value) -> bool:
    mpf_tuple = getattr(value, "_mpf_", None)
    if mpf_tuple is not None:
        return bool(mpf_tuple[1]) or not mpf_tuple[2]  # mpmath codes inf/nan as a zero mantissa, nonzero exponent
    if isinstance(value, Decimal):
        return value.is_finite()
    return not isinstance(value, np.floating) or bool(np.isfinite(value))


def _exact_rational(value) -> Fraction:
    if isinstance(value, (Decimal, np.floating)):
        return Fraction(*value.as_integer_ratio())
    mpf_tuple = getattr(value, "_mpf_", None)
    if mpf_tuple is not None and abs(mpf_tuple[2]) > 4 * 1074:  # far outside float64: refuse before 2**exp is built
        return Fraction(0) if not mpf_tuple[1] else Fraction(2) ** (4 * 1074 if mpf_tuple[2] > 0 else -4 * 1074)
    return as_fraction(value)


def _is_missing(value) -> bool:
    pandas = sys.modules.get("pandas")  # a pandas missing value exists only where pandas is loaded
    return pandas is not None and (value is pandas.NA or value is pandas.NaT)


def _not_float64(name, index, labels, value, what) -> str:
    advice = "" if name != "X" else (", or shift/rescale the data (the measures depend only on differences of rows "
                                     "and are invariant under scaling by a power of two)")
    return (f"{_where(name, index, labels)} = {_short(value)} ({what}) is not a float64 number (nearest float64 "
            f"{_nearest(value)!r}): precise_kpca takes float64 input as exact and does not round it silently. "
            f"Round it yourself ({name}.astype(float)) if that is intended{advice}")


def _nearest(value) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.copysign(math.inf, 1 if value > 0 else -1)


def check_symmetric(array: np.ndarray, eps: float, *, name: str = "K") -> np.ndarray:
    """A real square matrix's symmetric part, refusing asymmetry beyond rounding.

    Entries may differ from their transposes by at most ``4·N·eps·max|K|`` — what a symmetric computation rounded
    in the working precision (unit roundoff ``eps``) leaves; the symmetric part (K + Kᵀ)/2 is returned then (K
    itself when exactly symmetric).

    Parameters
    ----------
    array : ndarray, shape (N, N)
        float64 or an object array of mpf.
    eps : float
        Unit roundoff of the backend.

    Raises
    ------
    ValueError
        Complex entries, or asymmetry beyond the tolerance (the message names the worst pair).
    """
    check_real(array, name)
    diff = array - array.T
    if not any(diff.ravel()):
        return array
    gap = np.vectorize(lambda v: abs(float(v)), otypes=[float])(diff)
    scale = max(abs(float(v)) for v in array.ravel())
    tolerance = 4 * array.shape[0] * eps * scale
    worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(gap)), gap.shape))
    if gap[worst] > tolerance:
        raise ValueError(f"{name} is not symmetric: {name}[{worst[0]}, {worst[1]}] - {name}[{worst[1]}, {worst[0]}] = "
                         f"{float(diff[worst]):.3g}, beyond the rounding tolerance 4·N·eps·max|{name}| = "
                         f"{tolerance:.3g}; eigensystems here are of symmetric matrices")
    return (array + array.T) / 2


def check_real(array: np.ndarray, name: str = "K") -> None:
    """ValueError for a complex matrix (complex dtype, or complex objects such as mpmath's mpc)."""
    if np.iscomplexobj(array) or array.dtype == object and any(
            isinstance(v, complex) or getattr(v, "imag", 0) for v in array.ravel()):
        raise ValueError(f"{name} must be real: a complex (Hermitian) matrix has complex eigenvectors, which "
                         "precise_kpca does not compute")


def parse_sigma(sigma, *, name: str = "sigma") -> Fraction:
    """Exact positive rational value of a bandwidth.

    Accepts int, float, Fraction, mpmath mpf, or a string: a decimal number (``"0.25"``, ``"1e400"``), a ratio
    of integers (``"1/16"``, as the results store writes σ) or a power ``"a**b"`` / ``"a^b"`` (``"2**100"``,
    ``"2^-4"``), so bandwidths beyond the float range stay exact. Its size is bounded before it is built: abs(log2
    σ) ≤ ``max_log2_sigma`` and strings of at most ``max_sigma_chars`` characters (:mod:`precise_kpca.limits`).

    Raises
    ------
    ValueError
        Not a positive finite number, unreadable text, zero to a negative power.
    ResourceLimitExceeded
        Beyond the limits (a ValueError too).
    """
    if isinstance(sigma, bool):
        raise ValueError(f"{name} must be a positive number, got {sigma!r}")
    if isinstance(sigma, str):
        value = _parse_sigma_string(sigma, name)
    else:
        if isinstance(sigma, (float, np.floating)) and not math.isfinite(sigma):
            raise ValueError(f"{name} must be finite and > 0, got {sigma!r}")
        mpf_tuple = getattr(sigma, "_mpf_", None)
        if mpf_tuple is not None and mpf_tuple[1]:  # bound the size before 2**exp is built
            limits.check_log2_sigma(mpf_tuple[2] + int(mpf_tuple[1]).bit_length(), parameter=name, shown=_short(sigma))
        try:
            value = as_fraction(sigma)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be a finite positive number, got {_short(sigma)}") from exc
        if value > 0:
            limits.check_log2_sigma(_log2_fraction(value), parameter=name, shown=_short(sigma))
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {_short(sigma)}")
    return value


def _short(value) -> str:
    text = value if isinstance(value, str) else repr(value) if not isinstance(value, (int, Fraction)) else None
    if text is None:
        bits = abs(value.numerator).bit_length() + value.denominator.bit_length() if isinstance(value, Fraction) \
            else abs(value).bit_length()
        text = repr(value) if bits < 1000 else f"<{type(value).__name__} of {bits} bits>"
    return repr(text[:80] + "...") if len(text) > 80 else repr(text) if isinstance(value, str) else text


def _log2_fraction(q: Fraction) -> float:
    return math.log2(abs(q.numerator)) - math.log2(q.denominator) if q.numerator else 0.0


def _parse_sigma_string(text: str, name: str) -> Fraction:
    limits.check_sigma_text(text, parameter=name)
    power = _POWER.match(text)
    if power:
        base = _parse_sigma_string(power.group(1), name)
        exponent = int(power.group(2))
        if base == 0:
            raise ValueError(f"{name}={text!r}: a power of 0 is not a bandwidth (0**{exponent})")
        limits.check_log2_sigma(exponent * _log2_fraction(base), parameter=name, shown=_short(text))
        return base**exponent
    number = _NUMBER.match(text)
    if number and (number.group(1) or number.group(2)):
        whole, fraction, exponent = number.group(1), number.group(2), int(number.group(3) or 0)
        digits = (whole + fraction).lstrip("0")
        if digits:  # magnitude from the text, before the integer 10**exponent is built
            log10 = len(whole.lstrip("0")) - 1 + exponent if whole.lstrip("0") else exponent - (len(fraction) - len(
                fraction.lstrip("0"))) - 1
            limits.check_log2_sigma(log10 * math.log2(10), parameter=name, shown=_short(text))
        return Fraction(text.strip())
    if _RATIO.match(text):
        numerator, denominator = (int(g) for g in _RATIO.match(text).groups())
        if denominator == 0:
            raise ValueError(f"{name}={text!r}: division by zero")
        return Fraction(text.strip().replace(" ", ""))
    raise ValueError(f"{name}={_short(text)} is not a number; use e.g. '0.25', '1e40', '1/16', '2**100' or '2^-4'")


def scale_exponent(X: np.ndarray) -> int:
    """Exponent s with X·2^s exact and, where X is outside the safe range, max|X·2^s| in [1, 2).

    Data with max|x| in [2^-SAFE_EXPONENT, 2^SAFE_EXPONENT] get s = 0 (no change). Otherwise s brings the largest
    magnitude to [1, 2), but never so far down that an entry's lowest set bit would fall below 2^-1074 (the
    scaling then stays exact; its maximum is then larger than 2, which only data spanning more than 2^1074 in
    magnitude needs).

    Parameters
    ----------
    X : ndarray of float64, shape (N, d), finite
    """
    magnitudes = np.abs(X[X != 0])
    if not magnitudes.size:
        return 0
    _, top = np.frexp(magnitudes.max())  # max in [2^(top-1), 2^top)
    if -SAFE_EXPONENT <= top - 1 <= SAFE_EXPONENT:
        return 0
    mantissas, exponents = np.frexp(magnitudes)
    integers = (mantissas * 2.0**53).astype(np.int64)  # exact: 53-bit odd-or-even mantissas
    trailing = np.log2((integers & -integers).astype(np.float64)).astype(np.int64)
    lowest = int((exponents - 53 + trailing).min())  # exponent of the lowest set bit over all entries
    return max(1 - int(top), -1074 - lowest)


def rescaled(X: np.ndarray) -> np.ndarray:
    """X·2^s with s = :func:`scale_exponent` (X itself when s = 0): for computations invariant under that scaling."""
    s = scale_exponent(X)
    return X if s == 0 else np.ldexp(X, s)
