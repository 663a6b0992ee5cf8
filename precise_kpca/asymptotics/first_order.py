"""First-order (ε²) perturbation data of Theorem 3, scaled to thousands of rows.

σ_X² H K_G H = L + ε² M + O(ε⁴), ε = 1/σ_X, L = X_c X_cᵀ, M = H D^{∘2} H / 8 (proofs/perturbation). With the
nonzero linear eigenpairs (λ_i, w_i), i < r, grouped into clusters of exactly repeated values, and P₀ the
projector on null(L):

* eigenvalue shifts: for a cluster g the eigenvalues of W_gᵀ M W_g (w_iᵀ M w_i for a simple λ_i); the null
  eigenvalue 0 splits into the eigenvalues of P₀ M P₀ (M kills 1, so its top magnitude ``null_top`` is that of
  (I − WWᵀ) D^{∘2} (I − WWᵀ)/8 on 1⊥);
* eigenprojections: the largest principal angle between a group's perturbed eigenspace and span(W_g) is
  ε² ‖T_g‖₂ + O(ε⁴), column i of T_g being
  ``(I − W_g W_gᵀ) M w_i / λ_i + Σ_{j∉g} w_j (w_jᵀ M w_i) λ_j / (λ_i (λ_i − λ_j))``
  (the reduced resolvent with the null block folded in, so poorly determined small-λ_j directions enter
  damped by λ_j).

The formulas are written once against a :class:`~precise_kpca.backends.Backend`; the two paths are its backends.
In both the linear eigenproblem stays exact-then-mp: the data set's integer S = ZᵀZ (Z = N X_c 2^−e) and its exact
rank (:mod:`precise_kpca.numerics.linear_exact`), S refined by
:func:`precise_kpca.numerics.eigen_refine.refine_eigensystem` with rigorous error bounds (which decide the
clusters of repeated values). The N×N work:

* ``"mp"`` (exact input) — in working precision from exact data: M formed from the exact squared distances
  (N×N mp matrices; N up to a few hundred), its null block refined densely;
* ``"float64"`` — W = Z Q Λ_S^{−1/2} and D^{∘2}W by BLAS, M never formed: D^{∘2} from SciPy's direct
  squared distances by row blocks (relative error ≤ (d + 2)u per entry), the top of the null block by dense
  ``eigvalsh`` (N ≤ 1500) or ARPACK (Lanczos).
"""
from __future__ import annotations

import flint
import numpy as np
from scipy.sparse.linalg import LinearOperator, eigsh
from scipy.spatial.distance import cdist

from ..backends import Backend, Float64Backend, MPBackend
from ..numerics.centering import center_array
from ..numerics.eigen_refine import refine_eigensystem
from ..numerics.geometry import squared_distances
from ..numerics.linear_exact import exact_linear
from ..validation import check_data
from ..numerics.exact_geometry import ExactEccentricity

PATHS = ("float64", "mp")
DENSE_NULL_MAX_N = 1500
MP_CHECK_MAX_N = 120
_BLOCK_ROWS = 512
_DPS = 40


class FirstOrder:
    """First-order perturbation data of σ_X² H K_G H around L (module docstring).

    Parameters
    ----------
    X : array_like, shape (N, d)
    path : {"float64", "mp"}
    dps : int
        Working precision of the linear eigenproblem (both paths) and of the ``"mp"`` path.

    Attributes
    ----------
    rank : int
        rank(L), exact (:mod:`precise_kpca.numerics.linear_exact`).
    values : ndarray of float, shape (rank,)
        Nonzero linear eigenvalues λ_i, descending.
    clusters : list of tuple of int
        Index ranges of linear eigenvalues the refinement's error bounds do not separate (exact repeats, and
        near ones below the working precision).
    shifts : ndarray of float, shape (rank,)
        First-order shifts (eigenvalues of W_gᵀ M W_g per cluster, descending within it).
    null_top : float
        Largest |eigenvalue| of P₀ M P₀.
    d_x2 : float
        Squared median distance (exact data, rounded once).
    """

    def __init__(self, X, *, path: str = "float64", dps: int = _DPS):
        X = check_data(X)
        if path not in PATHS:
            raise ValueError(f"path must be one of {PATHS}, got {path!r}")
        self.path, self.n = path, X.shape[0]
        exact = exact_linear(X)
        linear = exact.eigensystem(dps)
        self.rank, self.clusters = exact.rank, linear.clusters
        ecc = ExactEccentricity(X)
        with flint.ctx.workprec(128):
            roots = [flint.arb(v).sqrt() for v in ecc.median_sq]
            d_x = sum(roots[1:], roots[0]) / len(roots)
            self.d_x2 = float((d_x * d_x).mid()) * 2.0 ** (2 * exact.exp2)
        b = self._backend = Float64Backend() if path == "float64" else MPBackend(dps)
        lam = self._lam = linear.l_values(b)
        W = linear.vectors(b)
        if b.exact_input:  # M from the exact squared distances, formed: its null block is refined densely
            sq = squared_distances(X, b)
            M = center_array(sq * sq) / 8
            MW = b.matmul(M, W)
        else:  # M never formed (thousands of rows): D^{∘2}W by row blocks, HW = W
            M, MW = None, _d2_times(X, W) / 8
        C = b.matmul(W.T, MW)
        C = (C + C.T) / 2
        self._W, self._MW, self._C = W, MW, C
        self.values = b.to_floats(lam)
        self.shifts = np.concatenate([b.to_floats(b.eigvalsh(C[s:t, s:t])) for s, t in self.clusters])
        self.null_top = _null_top_float64(X, W) if M is None else _null_top_dense(M, MW, W, C, b)

    # -- constants -----------------------------------------------------------------------------------------
    def eigenvalue_coefficient(self) -> float:
        """lim σ² × Eq. 18 = max(|shifts|, null_top) / (d_X² λ_1)."""
        top = max(float(np.max(np.abs(self.shifts))), self.null_top)
        return top / (self.d_x2 * self.values[0])

    def angle_coefficient(self, start: int, stop: int) -> float:
        """‖T_g‖₂ for the linear eigenvalues start..stop−1 (lim σ_X² × their largest principal angle).

        Raises
        ------
        ValueError
            If the range splits a cluster of exactly repeated eigenvalues (no limit exists then) or leaves
            the nonzero spectrum.
        """
        if not 0 <= start < stop <= self.rank:
            raise ValueError(f"eigenvalue range {start}..{stop - 1} is outside the {self.rank} nonzero ones")
        for s, t in self.clusters:
            if s < stop < t or s < start < t:
                raise ValueError(
                    f"eigenvalues {start}..{stop - 1} split the exactly repeated linear eigenvalues {s}..{t - 1}: "
                    "the Gaussian eigenvectors of a repeated eigenvalue have no individual limit; take the whole "
                    "cluster (raise or lower k)")
        b, W, MW, C, lam = self._backend, self._W, self._MW, self._C, self._lam
        g = slice(start, stop)
        inside = W[:, g] @ (W[:, g].T @ MW[:, g])
        T = (MW[:, g] - inside) / lam[g]
        others = np.r_[0:start, stop:self.rank]
        if len(others):
            weights = lam[others][:, None] / (lam[g][None, :] * (lam[g][None, :] - lam[others][:, None]))
            T = T + W[:, others] @ (C[others, g] * weights)
        return b.to_float(b.norm2(T))


def _d2_times(X: np.ndarray, W: np.ndarray) -> np.ndarray:
    """H D^{∘2} W (= H D^{∘2} H W, as HW = W) in float64, D^{∘2} by row blocks (never N×N at once)."""
    D2W = np.empty_like(W)
    for start in range(0, X.shape[0], _BLOCK_ROWS):
        block = cdist(X[start:start + _BLOCK_ROWS], X, "sqeuclidean")
        D2W[start:start + _BLOCK_ROWS] = (block * block) @ W
    return D2W - D2W.mean(axis=0)


def _null_top_dense(M: np.ndarray, MW: np.ndarray, W: np.ndarray, C: np.ndarray, b: Backend) -> float:
    """Largest |eigenvalue| of (I − WWᵀ) M (I − WWᵀ) (M1 = 0), formed and refined to ``b``'s precision."""
    n, r = W.shape
    if n - r - 1 <= 0:
        return 0.0
    null = M - b.matmul(MW, W.T) - b.matmul(W, MW.T) + b.matmul(b.matmul(W, C), W.T)
    top = refine_eigensystem(null, dps=b.dps, tier=1, k=1)
    return b.to_float(max(abs(top.values[0]), abs(top.values[-1])))


def _null_top_float64(X: np.ndarray, W: np.ndarray) -> float:
    """Largest |eigenvalue| of (I − WWᵀ − 11ᵀ/N) D^{∘2} (I − WWᵀ − 11ᵀ/N) / 8."""
    n, r = W.shape
    if n - r - 1 <= 0:
        return 0.0

    def project(v):
        v = v - W @ (W.T @ v)
        return v - v.mean(axis=0)

    if n <= DENSE_NULL_MAX_N:
        D = cdist(X, X, "sqeuclidean")
        B = project(project(D * D).T) / 8
        return float(np.max(np.abs(np.linalg.eigvalsh((B + B.T) / 2))))
    blocks = [(s, cdist(X[s:s + _BLOCK_ROWS], X, "sqeuclidean") ** 2) for s in range(0, n, _BLOCK_ROWS)]

    def matvec(v):
        p = project(v.reshape(n, -1))
        out = np.empty_like(p)
        for s, block in blocks:
            out[s:s + len(block)] = block @ p
        return project(out) / 8

    operator = LinearOperator((n, n), matvec=matvec, matmat=matvec, dtype=np.float64)
    value = eigsh(operator, k=1, which="LM", return_eigenvectors=False, tol=0, ncv=min(n, 40))
    return float(abs(value[0]))


def checked_pair(X, *, mp_max_n: int = MP_CHECK_MAX_N) -> tuple[FirstOrder, FirstOrder, str]:
    """The float64 evaluation and the independent one that certifies its digits, with the method's name.

    N ≤ ``mp_max_n``: the ``"mp"`` path (every N×N quantity at dps 40 from exact data). Larger N: a second
    float64 evaluation on X with rows and columns reversed (every BLAS, ``cdist`` and Lanczos rounding
    differs); agreement then measures sensitivity to rounding, which is what limits the float64 path — the
    float64 path itself is validated against the mp path in the tests.
    """
    X = check_data(X)
    primary = FirstOrder(X)
    if X.shape[0] <= mp_max_n:
        return primary, FirstOrder(X, path="mp"), f"float64 path vs mp path (dps {_DPS}, exact data): agreement"
    reference = FirstOrder(np.ascontiguousarray(X[::-1, ::-1]))
    return primary, reference, "float64 path vs float64 on reversed rows/columns: agreement (rounding sensitivity)"
