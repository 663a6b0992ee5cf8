"""Certified inertia and eigenvalue enclosures of symmetric (kernel Gram) matrices.

Mercer's condition for a finite sample is that the Gram matrix is positive semi-definite. A float64
eigensolver cannot decide it: rounding turns exact zero eigenvalues into ±1e−13 and can hide a small
negative one. This module decides it rigorously.

Two methods, both rigorous (no step relies on an unverified floating-point result):

``"exact-charpoly"`` (exact matrices: float64 entries taken as the dyadic rationals they are, or
    ``fmpq_mat``/``fmpz_mat``). The matrix is scaled by a positive integer to an integer matrix (inertia
    unchanged), its characteristic polynomial is computed exactly over Z (FLINT), and the inertia is read
    off the coefficients: the multiplicity of the root 0 is the index of the lowest nonzero coefficient, and
    the number of positive roots equals the number of sign changes (Descartes' rule of signs is *exact* for
    a polynomial whose roots are all real, which holds for the characteristic polynomial of a symmetric
    matrix); the negative roots are the rest. The eigenvalue enclosures are FLINT's certified root isolation
    (``fmpz_poly.complex_roots``, Arb ball arithmetic) of the characteristic polynomial; exact zero
    eigenvalues are reported as the point interval [0, 0].

``"ball-ostrowski"`` (ball matrices, e.g. Gaussian Grams whose entries are transcendental and enclosed in
    Arb balls; also usable for large float64 matrices). An approximate orthonormal eigenbasis ``V`` is taken
    as an exact matrix (float64, or higher precision when needed), and in Arb arithmetic we enclose
    ``B = Vᵀ A V`` for every ``A`` in the ball matrix, ``F = B − diag(d)`` and ``G = VᵀV − I``. With
    ``f ≥ ‖F‖₂`` and ``δ ≥ ‖G‖₂`` (upper bounds through Frobenius norms), Weyl's inequality gives
    ``λ_k(B) ∈ [d_k − f, d_k + f]`` and, if ``δ < 1``, Ostrowski's theorem
    ``λ_k(B) = θ_k λ_k(A)`` with ``θ_k ∈ [1 − δ, 1 + δ]`` encloses every eigenvalue of ``A``
    (:func:`~precise_kpca.numerics.theorems.weyl`, :func:`~precise_kpca.numerics.theorems.ostrowski`); Sylvester's
    law of inertia (V is nonsingular) makes the signs of the enclosures the inertia. It cannot certify an
    exact zero eigenvalue: when an enclosure contains 0 the precision of ``V`` and of the arithmetic is
    raised, and if that does not separate it from 0 the certification fails with
    :class:`CertificationError` (or, for exact input, falls back to ``"exact-charpoly"``).

Reported float bounds are rounded outward from the exact (dyadic) ball endpoints, so
``lo ≤ λ ≤ hi`` holds for the true eigenvalue of the exact (or every enclosed) matrix.

Note: FLINT's working precision is a process-wide setting; it is only changed inside
``flint.ctx.workprec`` blocks (restored on exit), which are not thread-safe.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import flint
import mpmath
import numpy as np

from ..arith.balls import ends_fraction
from ..arith.rounding import float_down, float_up
from ..feature_maps import as_float_matrix
from ..numerics import theorems

__all__ = [
    "PSDCertificate",
    "CertificationError",
    "certify_psd",
    "certify_kernel_psd",
    "require_psd",
    "guarded_svc",
    "experiment1",
    "KERNELS",
]

_EXACT_AUTO_MAX_N = 400  # above this, "auto" uses the (much faster) ball method first on exact input
_BALL_PRECISIONS = (53, 128, 256, 512, 1024)  # bits of the eigenbasis V / the Arb arithmetic, tried in turn
KERNELS = ("linear", "polynomial", "gaussian", "euclidean", "neg_distance")


class CertificationError(ValueError):
    """Raised when no rigorous method available here can decide the inertia of the matrix."""


@dataclass(frozen=True)
class PSDCertificate:
    """Rigorous inertia and eigenvalue enclosures of a symmetric matrix.

    Attributes
    ----------
    inertia : tuple of int
        ``(n_pos, n_zero, n_neg)``: counts of positive, zero and negative eigenvalues (certified).
    min_eigenvalue, max_eigenvalue : tuple of float
        ``(lo, hi)`` with ``lo ≤ λ ≤ hi`` for the smallest / largest eigenvalue (outward rounded).
    eigenvalue_bounds : ndarray, shape (n, 2)
        Enclosures ``[lo, hi]`` of all eigenvalues in ascending order.
    method : str
        ``"exact-charpoly"`` or ``"ball-ostrowski"`` (see the module docstring for what each proves).
    precision_bits : int or None
        Arb working precision of the certification (None: exact integer arithmetic only).
    n : int
        Order of the matrix.
    note : str
        Where the matrix came from (e.g. kernel, exact vs ball entries, merged duplicate rows).
    """

    inertia: tuple[int, int, int]
    min_eigenvalue: tuple[float, float]
    max_eigenvalue: tuple[float, float]
    eigenvalue_bounds: np.ndarray
    method: str
    precision_bits: int | None
    n: int
    note: str = ""

    @property
    def is_psd(self) -> bool:
        """True iff the matrix is (certifiably) positive semi-definite: no negative eigenvalue."""
        return self.inertia[2] == 0

    @property
    def is_pd(self) -> bool:
        """True iff the matrix is (certifiably) positive definite."""
        return self.inertia[0] == self.n

    @property
    def rank(self) -> int:
        """Certified rank ``n_pos + n_neg``."""
        return self.inertia[0] + self.inertia[2]


# ---------------------------------------------------------------------------------------------------------
# exact <-> float helpers
# ---------------------------------------------------------------------------------------------------------
def _outward(lo: Fraction, hi: Fraction) -> tuple[float, float]:
    """Floats enclosing the exact interval [lo, hi]."""
    return float_down(lo), float_up(hi)


def _mp_context(bits: int) -> mpmath.MPContext:
    """A private mpmath context at ``bits`` bits (never the global ``mpmath.mp``)."""
    ctx = mpmath.MPContext()
    ctx.prec = bits
    return ctx


def _certificate(inertia: tuple[int, int, int], table: np.ndarray, method: str, precision_bits: int | None,
                 note: str) -> PSDCertificate:
    """The certificate of the ascending eigenvalue enclosures ``table`` (n × 2 floats)."""
    return PSDCertificate(
        inertia=inertia,
        min_eigenvalue=(float(table[0][0]), float(table[0][1])),
        max_eigenvalue=(float(table[-1][0]), float(table[-1][1])),
        eigenvalue_bounds=table,
        method=method,
        precision_bits=precision_bits,
        n=table.shape[0],
        note=note,
    )




def _check_square_symmetric_shape(shape: tuple[int, ...], where: str) -> int:
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"{where}: expected a square matrix, got shape {shape}")
    if shape[0] == 0:
        raise ValueError(f"{where}: the matrix is empty")
    return shape[0]


def _float_matrix_to_fmpq(K) -> flint.fmpq_mat:
    K = as_float_matrix(K, where="certify_psd", name="K")
    n = _check_square_symmetric_shape(K.shape, "certify_psd")
    asym = np.argwhere(K != K.T)
    if asym.size:
        i, j = asym[0]
        raise ValueError(
            f"certify_psd: the matrix is not symmetric: K[{i}, {j}] = {K[i, j]!r} != K[{j}, {i}] = {K[j, i]!r}"
        )
    return flint.fmpq_mat(n, n, [flint.fmpq(*float(v).as_integer_ratio()) for v in K.ravel()])


def _check_exact_symmetric(A: flint.fmpq_mat) -> int:
    n = _check_square_symmetric_shape((A.nrows(), A.ncols()), "certify_psd")
    if A != A.transpose():
        raise ValueError("certify_psd: the exact matrix is not symmetric")
    return n


# ---------------------------------------------------------------------------------------------------------
# method 1: exact characteristic polynomial + Descartes
# ---------------------------------------------------------------------------------------------------------
def _certify_exact_charpoly(A: flint.fmpq_mat, note: str) -> PSDCertificate:
    n = A.nrows()
    num, den = A.numer_denom()  # A == num / den, den > 0: same inertia as num, eigenvalues scaled by den
    coeffs = [int(c) for c in num.charpoly().coeffs()]  # ascending; monic of degree n
    n_zero = next(k for k, c in enumerate(coeffs) if c != 0)
    signs = [c > 0 for c in coeffs if c != 0]
    n_pos = sum(a != b for a, b in zip(signs, signs[1:]))  # exact: the polynomial is real-rooted
    n_neg = n - n_pos - n_zero
    reduced = flint.fmpz_poly(coeffs[n_zero:])  # nonzero roots only
    den = int(den)
    bounds: list[tuple[float, float]] = [(0.0, 0.0)] * n_zero
    prec = 64
    while True:
        with flint.ctx.workprec(prec):
            roots = reduced.complex_roots()
        balls = []
        for root, mult in roots:
            lo, hi = ends_fraction(root.real)
            balls += [(lo / den, hi / den)] * mult
        # Real-rootedness means the sign of every ball must already be decided; refine if not.
        if all(lo > 0 or hi < 0 for lo, hi in balls):
            break
        prec *= 2
    if sum(lo > 0 for lo, _ in balls) != n_pos:  # pragma: no cover - would contradict Descartes' rule
        raise CertificationError("certify_psd: root isolation disagrees with Descartes' rule of signs")
    bounds += [_outward(lo, hi) for lo, hi in balls]
    bounds.sort()
    return _certificate((n_pos, n_zero, n_neg), np.array(bounds, dtype=float).reshape(n, 2), "exact-charpoly", prec,
                        note)


# ---------------------------------------------------------------------------------------------------------
# method 2: approximate eigenbasis + Weyl/Ostrowski in ball arithmetic
# ---------------------------------------------------------------------------------------------------------
def _frobenius_upper(M: flint.arb_mat) -> Fraction:
    total = flint.arb(0)
    for x in M.entries():
        total += x.abs_upper() ** 2
    return ends_fraction(total.sqrt())[1]


def _approximate_eigenbasis(mid: np.ndarray | list, bits: int) -> tuple[list, list]:
    """Approximate eigenpairs (ascending) of the midpoint matrix: float64 LAPACK, or mpmath at ``bits``."""
    if bits <= 53:
        w, V = np.linalg.eigh(np.asarray(mid, dtype=float))
        return [float(x) for x in w], V.tolist()
    ctx = _mp_context(bits)
    w, V = ctx.eigsy(ctx.matrix(mid))
    n = len(mid)
    order = sorted(range(n), key=lambda k: w[k])
    return [w[k] for k in order], [[V[i, k] for k in order] for i in range(n)]


def _to_arb(x) -> flint.arb:
    if isinstance(x, float):
        return flint.arb(x)
    man, exp = x.man_exp  # mpmath mpf: exact dyadic
    return flint.arb(flint.fmpz(int(man))) * flint.arb(2) ** int(exp)


def _try_ball_ostrowski(A: flint.arb_mat, mid: list, bits: int, note: str) -> PSDCertificate | None:
    n = A.nrows()
    d, V = _approximate_eigenbasis(mid, bits)
    with flint.ctx.workprec(max(bits, 53) + 32):
        Va = flint.arb_mat([[_to_arb(v) for v in row] for row in V])
        Vt = Va.transpose()
        B = Vt * A * Va
        G = Vt * Va
        da = [_to_arb(x) for x in d]
        for k in range(n):
            B[k, k] -= da[k]
            G[k, k] -= 1
        f = _frobenius_upper(B)
        delta = _frobenius_upper(G)
        dq = [ends_fraction(x)[0] for x in da]  # exact values of the approximate eigenvalues
    if delta >= 1:
        return None
    bounds = []
    for dk in dq:
        lo_b, hi_b = theorems.weyl(dk, dk, f)
        if not (lo_b > 0 or hi_b < 0):
            return None  # the sign of this eigenvalue is not decided at this precision
        bounds.append(theorems.ostrowski(lo_b, hi_b, delta))
    # Weyl/Ostrowski enclose λ_k(A) for the k-th smallest d_k; d is sorted ascending.
    n_pos = sum(lo > 0 for lo, _ in bounds)
    table = np.array([_outward(lo, hi) for lo, hi in bounds], dtype=float).reshape(n, 2)
    return _certificate((n_pos, 0, n - n_pos), table, "ball-ostrowski", max(bits, 53) + 32, note)


def _certify_ball(A: flint.arb_mat, note: str, precisions=_BALL_PRECISIONS) -> PSDCertificate | None:
    n = _check_square_symmetric_shape((A.nrows(), A.ncols()), "certify_psd")
    for i in range(n):
        for j in range(i):
            if not A[i, j].overlaps(A[j, i]):
                raise ValueError(f"certify_psd: the ball matrix is not symmetric at [{i}, {j}]")
    for bits in precisions:
        if bits <= 53:
            mid = [[float(A[i, j].mid()) for j in range(n)] for i in range(n)]
        else:
            ctx = _mp_context(bits)
            mid = [[ctx.ldexp(int(m), int(e)) for m, e in (A[i, j].mid().man_exp() for j in range(n))] for i in range(n)]
        cert = _try_ball_ostrowski(A, mid, bits, note)
        if cert is not None:
            return cert
    return None


# ---------------------------------------------------------------------------------------------------------
# public entry points
# ---------------------------------------------------------------------------------------------------------
def certify_psd(K, *, method: str = "auto", note: str = "") -> PSDCertificate:
    """Certify the inertia and enclose the extreme eigenvalues of a symmetric matrix.

    Parameters
    ----------
    K : ndarray of float, shape (n, n), or flint.fmpq_mat / flint.fmpz_mat / flint.arb_mat
        Symmetric matrix. float64 entries are taken as the exact binary (dyadic) numbers they are;
        ``fmpq_mat``/``fmpz_mat`` are exact; ``arb_mat`` entries are balls and the certificate holds for
        every symmetric matrix inside them.
    method : {"auto", "exact-charpoly", "ball-ostrowski"}
        ``"auto"``: exact input of order ≤ 400 uses ``"exact-charpoly"``, larger exact input tries
        ``"ball-ostrowski"`` first and falls back to the exact method when an eigenvalue cannot be
        separated from 0; ball input uses ``"ball-ostrowski"``.
    note : str
        Free text stored in the certificate.

    Returns
    -------
    PSDCertificate

    Raises
    ------
    ValueError
        Non-square, empty, non-finite or non-symmetric input; unknown method.
    CertificationError
        Ball input with an eigenvalue that cannot be separated from 0 even at 1024 bits (e.g. a singular
        matrix known only up to rounding: its zero eigenvalues cannot be certified from balls).
    """
    if method not in ("auto", "exact-charpoly", "ball-ostrowski"):
        raise ValueError(f"certify_psd: unknown method {method!r}; use 'auto', 'exact-charpoly' or 'ball-ostrowski'")
    if isinstance(K, flint.arb_mat):
        if method == "exact-charpoly":
            raise ValueError("certify_psd: method 'exact-charpoly' needs exact entries, got an arb_mat")
        cert = _certify_ball(K, note)
        if cert is None:
            raise CertificationError(
                "certify_psd: an eigenvalue enclosure still contains 0 at 1024 bits; the inertia of a ball "
                "matrix cannot be certified when it is (nearly) singular"
            )
        return cert
    if isinstance(K, flint.fmpz_mat):
        K = flint.fmpq_mat(K)
    A = K if isinstance(K, flint.fmpq_mat) else _float_matrix_to_fmpq(K)
    n = _check_exact_symmetric(A)
    if method == "exact-charpoly" or (method == "auto" and n <= _EXACT_AUTO_MAX_N):
        return _certify_exact_charpoly(A, note)
    ball = flint.arb_mat(A)
    cert = _certify_ball(ball, note, precisions=_BALL_PRECISIONS[:2])
    if cert is not None:
        return cert
    if method == "ball-ostrowski":
        raise CertificationError(
            "certify_psd: the ball method cannot separate an eigenvalue from 0; use method='exact-charpoly'"
        )
    return _certify_exact_charpoly(A, note)


def _exact_rows(X) -> list[list[Fraction]]:
    X = as_float_matrix(X, where="certify_kernel_psd")
    if X.shape[0] == 0:
        raise ValueError("certify_kernel_psd: X has no rows")
    return [[Fraction(float(v)) for v in row] for row in X]


def _exact_param(name: str, value) -> Fraction:
    try:
        q = Fraction(value) if not isinstance(value, float) else Fraction(float(value))
    except (TypeError, ValueError):
        raise ValueError(f"certify_kernel_psd: parameter {name}={value!r} is not a real number") from None
    return q


def _fq(q: Fraction) -> flint.fmpq:
    return flint.fmpq(q.numerator, q.denominator)


def certify_kernel_psd(X, kernel: str, *, method: str = "auto", prec: int = 128, **params) -> PSDCertificate:
    """Build a kernel Gram matrix from X without rounding (where possible) and certify its inertia.

    The rows of X (float64) are exact dyadic rationals; inner products and squared distances are exact.
    For ball Grams, duplicate rows are merged first: with ``S`` (n × u, 0/1) mapping each row to its
    distinct representative, ``K = S K_u Sᵀ``; its nonzero eigenvalues are those of
    ``W^½ K_u W^½`` (``W = SᵀS``, the multiplicities), which is congruent to ``K_u``, and it has exactly
    ``n − u`` zero eigenvalues besides (Sylvester's law). So duplicates do not defeat the ball method.

    Parameters
    ----------
    X : array_like of float, shape (n, d)
        Data, one example per row.
    kernel : {"linear", "polynomial", "gaussian", "euclidean", "neg_distance"}
        scikit-learn's names ``"rbf"`` (gaussian) and ``"poly"`` (polynomial) are accepted too.
        * ``"linear"``: ``x·y`` — exact rational Gram.
        * ``"polynomial"``: ``(gamma x·y + coef0)**degree`` (parameters ``degree=2, gamma=1, coef0=1``,
          the seed article's) — exact rational Gram.
        * ``"gaussian"``: ``exp(−gamma |x−y|²)``, give ``gamma`` or the raw bandwidth ``sigma``
          (``gamma = 1/(2 sigma²)``); the squared distances are exact, the exponentials Arb balls.
        * ``"euclidean"``: ``−|x−y|²/2`` (the paper's Eq. 2b pseudo-kernel) — exact rational Gram.
        * ``"neg_distance"``: ``−|x−y|`` (the seed article's invalid kernel) — Arb balls of square roots.
        Parameters are converted exactly (a float parameter is the dyadic number it stores).
    method : str
        Passed to :func:`certify_psd` for exact Grams.
    prec : int
        Arb precision in bits of the ball Grams (Gaussian, neg_distance).
    **params
        Kernel parameters (see above). Unknown names raise ``ValueError``.

    Returns
    -------
    PSDCertificate
        ``note`` records the kernel, the parameters and how many duplicate rows were merged.
    """
    rows = _exact_rows(X)
    kernel = _checked_kernel(kernel, params, prec)
    n = len(rows)
    dot = [[sum(a * b for a, b in zip(rows[i], rows[j])) for j in range(n)] for i in range(n)]
    note = f"kernel={kernel} params={params}"
    if kernel in ("linear", "polynomial", "euclidean"):
        entry = _exact_entry(kernel, dot, params)
        A = flint.fmpq_mat(n, n, [_fq(entry(i, j)) for i in range(n) for j in range(n)])
        return certify_psd(A, method=method, note=note + " (exact rational Gram)")
    return _certify_ball_gram(rows, dot, kernel, params, prec, note)


_KERNEL_PARAMS = {"linear": set(), "polynomial": {"degree", "gamma", "coef0"}, "gaussian": {"gamma", "sigma"},
                  "euclidean": set(), "neg_distance": set()}


def _checked_kernel(kernel: str, params: dict, prec: int) -> str:
    """The kernel's name (scikit-learn's names, same kernels, mapped), after checking it and its parameters."""
    kernel = {"rbf": "gaussian", "poly": "polynomial"}.get(kernel, kernel)
    if kernel not in _KERNEL_PARAMS:
        raise ValueError(f"certify_kernel_psd: unknown kernel {kernel!r}; choose one of {KERNELS} (or "
                         "scikit-learn's 'rbf', 'poly')")
    unknown = set(params) - _KERNEL_PARAMS[kernel]
    if unknown:
        raise ValueError(f"certify_kernel_psd: kernel {kernel!r} takes no parameter(s) {sorted(unknown)}")
    if prec < 53:
        raise ValueError(f"certify_kernel_psd: prec={prec} bits is below float64's 53")
    return kernel


def _exact_entry(kernel: str, dot: list, params: dict) -> Callable[[int, int], Fraction]:
    """Entry (i, j) of an exact rational Gram from the exact inner products ``dot``."""
    if kernel == "linear":
        return lambda i, j: dot[i][j]
    if kernel == "euclidean":
        return lambda i, j: -(dot[i][i] + dot[j][j] - 2 * dot[i][j]) / 2
    degree = params.get("degree", 2)
    if isinstance(degree, bool) or not isinstance(degree, (int, np.integer)) or degree < 1:
        raise ValueError(f"certify_kernel_psd: polynomial degree must be an integer >= 1, got {degree!r}")
    gamma = _exact_param("gamma", params.get("gamma", 1))
    coef0 = _exact_param("coef0", params.get("coef0", 1))
    return lambda i, j: (gamma * dot[i][j] + coef0) ** int(degree)


def _gaussian_gamma(params: dict) -> Fraction:
    """γ of the Gaussian kernel from exactly one of ``gamma=`` and ``sigma=`` (γ = 1/(2σ²)), exactly."""
    if ("gamma" in params) == ("sigma" in params):
        raise ValueError("certify_kernel_psd: the gaussian kernel needs exactly one of gamma= or sigma=")
    if "gamma" in params:
        gamma = _exact_param("gamma", params["gamma"])
    else:
        sigma = _exact_param("sigma", params["sigma"])
        if sigma <= 0:
            raise ValueError(f"certify_kernel_psd: sigma must be > 0, got {params['sigma']!r}")
        gamma = 1 / (2 * sigma * sigma)
    if gamma <= 0:
        raise ValueError(f"certify_kernel_psd: gamma must be > 0, got {gamma}")
    return gamma


def _certify_ball_gram(rows: list, dot: list, kernel: str, params: dict, prec: int, note: str) -> PSDCertificate:
    """The Gaussian or neg_distance Gram in Arb balls, duplicate rows merged first (exact zero eigenvalues cannot be
    certified from balls; :func:`certify_kernel_psd`)."""
    first: dict[tuple, int] = {}
    for i, r in enumerate(rows):
        first.setdefault(tuple(r), i)
    reps = list(first.values())
    mult = [0] * len(reps)
    slot = {i: k for k, i in enumerate(reps)}
    for r in rows:
        mult[slot[first[tuple(r)]]] += 1
    n, u = len(rows), len(reps)
    sq = [[dot[a][a] + dot[b][b] - 2 * dot[a][b] for b in reps] for a in reps]
    with flint.ctx.workprec(prec):
        if kernel == "gaussian":
            g = flint.arb(_fq(_gaussian_gamma(params)))
            value = lambda a, b: (-g * flint.arb(_fq(sq[a][b]))).exp()
        else:  # neg_distance
            value = lambda a, b: -flint.arb(_fq(sq[a][b])).sqrt()
        # K = S K_u Sᵀ (S: n×u, 0/1, full column rank). Its nonzero eigenvalues are those of
        # C = W^½ K_u W^½ with W = SᵀS = diag(multiplicities), congruent to K_u; plus n − u exact zeros.
        w = [flint.arb(m).sqrt() for m in mult]
        C = flint.arb_mat(u, u, [w[a] * value(a, b) * w[b] for a in range(u) for b in range(u)])
    cert = certify_psd(C, note=note + f" (Arb balls at {prec} bits; {n - u} duplicate rows merged)")
    if u == n:
        return cert
    n_pos, _, n_neg = cert.inertia
    table = np.vstack([cert.eigenvalue_bounds[:n_neg], np.zeros((n - u, 2)), cert.eigenvalue_bounds[n_neg:]])
    return _certificate((n_pos, n - u, n_neg), table, cert.method + "+duplicate-merge", cert.precision_bits, cert.note)


def require_psd(K, *, what: str = "kernel matrix") -> PSDCertificate:
    """Return the certificate of ``K`` or raise ``ValueError`` if ``K`` certifiably has a negative eigenvalue.

    A guard to put in front of solvers that assume a Mercer kernel (e.g. ``sklearn.svm.SVC(kernel=
    "precomputed")``, which silently returns a meaningless fit for an indefinite Gram matrix).

    Parameters
    ----------
    K : ndarray, shape (n, n), or flint matrix
        As for :func:`certify_psd`.
    what : str
        Name used in the error message.

    Returns
    -------
    PSDCertificate

    Raises
    ------
    ValueError
        If the certified inertia has ``n_neg > 0``; the message gives the count and the enclosure of the
        smallest eigenvalue.
    """
    cert = certify_psd(K)
    if not cert.is_psd:
        lo, hi = cert.min_eigenvalue
        raise ValueError(
            f"{what} is not positive semi-definite: {cert.inertia[2]} negative eigenvalue(s), the smallest in "
            f"[{lo!r}, {hi!r}] (certified by {cert.method}); it is not a Mercer kernel on these points"
        )
    return cert


def guarded_svc(K, y, **svc_params):
    """Fit ``sklearn.svm.SVC(kernel="precomputed")`` only after certifying that ``K`` is PSD.

    libsvm's SMO never checks Mercer's condition: on an indefinite Gram it returns a fit (and a plausible
    training accuracy) with no warning, although the dual is then non-concave and the solution has no
    optimality guarantee (the seed article's Experiment 1b). This guard stops before the solver sees ``K``.

    Parameters
    ----------
    K : ndarray, shape (n, n)
        Precomputed training Gram (float64, taken as exact).
    y : array_like, shape (n,)
        Labels.
    **svc_params
        Passed to ``SVC`` (``kernel`` is fixed to "precomputed").

    Returns
    -------
    (sklearn.svm.SVC, PSDCertificate)

    Raises
    ------
    ValueError
        From :func:`require_psd` when ``K`` has a certified negative eigenvalue.
    """
    from sklearn.svm import SVC

    if "kernel" in svc_params:
        raise ValueError("guarded_svc: the kernel is precomputed; do not pass kernel=")
    cert = require_psd(K, what="precomputed SVC kernel matrix")
    return SVC(kernel="precomputed", **svc_params).fit(K, y), cert


def experiment1(X=None) -> dict[str, PSDCertificate]:
    """The seed article's Experiment 1 with certified enclosures.

    Parameters
    ----------
    X : array_like, shape (n, d), optional
        Default: ``numpy.random.default_rng(42).normal(size=(50, 3))``, the article's data.

    Returns
    -------
    dict
        ``"rbf"`` (γ = 0.5), ``"poly"`` (degree 2, γ = 1, c = 1), ``"invalid"`` (−|x − y|): certificates of the
        Grams built exactly / in Arb from X. The article reports min eigenvalues 0.000181, −0.000000 and
        −98.802080 and max 15.644640, 254.878312, 22.587837.
    """
    X = np.random.default_rng(42).normal(size=(50, 3)) if X is None else X
    return {
        "rbf": certify_kernel_psd(X, "gaussian", gamma=0.5),
        "poly": certify_kernel_psd(X, "polynomial", degree=2, gamma=1.0, coef0=1.0),
        "invalid": certify_kernel_psd(X, "neg_distance"),
    }
