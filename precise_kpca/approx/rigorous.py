"""The neighbours' matrices in Arb ball arithmetic from the exact data, and what is enclosed from them.

For one data set and one approximation (exact empirical KPCA, Nyström with m landmarks, random features with a
given draw), :class:`KernelProblem` builds at the current flint precision (``flint.ctx.workprec``):

* the σ_X²-scaled centered matrices, whose top eigenvalues are ``(n − 1) σ_X² λ_l``:
  exact ``A = σ_X² H (K − 1) H`` (n×n); Nyström ``A = W Wᵀ / σ_X²`` (m×m) with ``K_mm = L Lᵀ`` (ball Cholesky) and
  ``W = L⁻¹ F̃ᵀ``, ``F̃ = σ_X² H (K_nm − 1)``, so that A has the eigenvalues of ``σ_X² K_mm^{-1/2} K_mn H K_nm
  K_mm^{-1/2}`` (seed 002's M-problem); random features ``Yᵀ Y`` or ``Y Yᵀ`` (the smaller) with ``Y = σ_X H Z``;
* their σ → ∞ limits (:mod:`precise_kpca.approx.convergence`): the covariance ``C = X_cᵀ X_c / (n − 1)``, or for
  random features ``L_Cᵀ Q L_C`` (``C = L_C L_Cᵀ``, ``Q = PᵀP``; ``P C Pᵀ`` when C is singular);
* the centered Gram approximation error ``‖σ_X² H (K̃ − K) H‖_F / ‖σ_X² H K H‖_F`` (``K̃ = K_nm K_mm⁻¹ K_mn`` or
  ``Z Zᵀ``).

Exactness: X = M·2^e with integer M (:class:`~precise_kpca.numerics.exact.ExactData`), so squared distances,
inner products and centered sums are exact integers; σ_X² = σ² d_X² comes from the exact median pair(s)
(:class:`~precise_kpca.numerics.exact_geometry.ExactEccentricity`); the landmark indices, frequencies and phases
are data (float64 draws taken as exact). Kernel entries are ``expm1(−u)`` balls, so ``K − 1`` never cancels, and
centering removes the constant exactly. Every number is a ball containing the exact value; the eigenvalues are
enclosed by :func:`~precise_kpca.approx.enclosure.top_eigenvalues`. Hand-written because no library evaluates these
matrices in ball arithmetic; python-flint provides the balls, the products and the small eigenproblems.
"""
from __future__ import annotations

from fractions import Fraction

import flint
import numpy as np

from ..numerics.exact import ExactData
from ..numerics.exact_geometry import ExactEccentricity
from ..validation import parse_sigma
from .enclosure import cholesky, top_eigenvalues
from .kpca import _draw_landmarks, _unit_features

__all__ = ["KernelProblem", "frobenius_ball", "sigma_x2_ball"]


def frobenius_ball(entries) -> flint.arb:
    """A ball containing ``sqrt(Σ x²)`` for every choice of points in the balls."""
    total = flint.arb(0)
    for x in entries:
        size = x.abs_lower().union(x.abs_upper())  # ≥ 0: its square is then a tight ball
        total += size * size
    return total.nonnegative_part().sqrt()


class KernelProblem:
    """Exact data of one neighbours' study, and its matrices in ball arithmetic at the current precision.

    Parameters
    ----------
    X : ndarray of float64, shape (n, d)
        Validated data (exact).
    method : {"exact", "nystrom", "rf-cos", "rf-sincos"}
    n_landmarks : int
        m (Nyström): indices from ``default_rng(random_state)``, as :func:`precise_kpca.approx.kpca.nystrom_kpca`'s
        wrappers draw them. Identical landmark rows are kept once: they span the same compression space.
    n_features : int
        D (random features): ω ~ N(0, I) and phases from ``random_state``, as
        :class:`~precise_kpca.approx.rff.RandomFourierFeatures` draws them (γ = 1/2), divided by σ_X in balls.
    random_state : int or None
    median : {"full", "pairs"}
    """

    def __init__(self, X: np.ndarray, method: str, *, n_landmarks: int = 10, n_features: int = 100, random_state=0,
                 median: str = "full"):
        self.method = method
        self.n, self.d = X.shape
        exact = ExactData.from_float64(X)
        self._exp2 = exact.exp2
        self._median_sq = ExactEccentricity(X, median).median_sq
        mantissas = self._mantissas = exact.mantissas
        self._centered = flint.fmpz_mat(exact.centered_integers.tolist())  # n·X_c·2^-e
        self._full_sq = None
        if method == "nystrom":
            landmarks = _draw_landmarks(self.n, n_landmarks, random_state)
            _, first = np.unique(X[landmarks], axis=0, return_index=True)
            self.landmarks = landmarks[np.sort(first)]
            self._sq = _squared_distances(mantissas, mantissas[self.landmarks])
        elif method.startswith("rf-"):
            self._features = _unit_features(X, n_features, method[3:], random_state)
            freq = ExactData.from_float64(self._features.frequencies_)
            self._proj = _products(mantissas, freq.mantissas)  # x_i·ω_j in units 2^(e + e_ω)
            self._proj_exp2 = exact.exp2 + freq.exp2

    # -- bandwidth and kernel entries -----------------------------------------------------------------------
    def sigma_x2(self, sigma: Fraction) -> flint.arb:
        """σ_X² as a ball (see :func:`sigma_x2_ball`)."""
        return _sigma_x2(self._median_sq, self._exp2, sigma)

    def _kernel_minus_one(self, sq, s2: flint.arb, rows: range, cols: range, symmetric: bool) -> list[list]:
        """``K − 1 = expm1(−|x_i − x_j|² / 2σ_X²)`` on an integer squared-distance block (mirrored if symmetric)."""
        c = flint.arb(2) ** (2 * self._exp2) / (2 * s2)
        out = [[None] * len(cols) for _ in rows]
        for a, i in enumerate(rows):
            for b, j in enumerate(cols):
                if symmetric and b < a:
                    out[a][b] = out[b][a]
                else:
                    out[a][b] = (-(flint.arb(int(sq[i, j])) * c)).expm1()
        return out

    def _exact_centered(self, s2: flint.arb) -> list[list]:
        """σ_X² H (K − 1) H as nested lists of balls (n×n, mirrored)."""
        if self._full_sq is None:
            self._full_sq = _squared_distances(self._mantissas, self._mantissas)
        n = self.n
        rows = _double_center(self._kernel_minus_one(self._full_sq, s2, range(n), range(n), True))
        return [[s2 * x for x in row] for row in rows]

    # -- the σ_X²-scaled matrices -----------------------------------------------------------------------------
    def scaled_matrix(self, sigma: Fraction) -> flint.arb_mat:
        """The symmetric ball matrix whose top eigenvalues are ``(n − 1) σ_X² λ_l`` (module docstring)."""
        s2 = self.sigma_x2(sigma)
        if self.method == "exact":
            return flint.arb_mat(self._exact_centered(s2))
        if self.method == "nystrom":
            W = self._nystrom_factor(s2)
            return W * W.transpose() / s2
        Y = self._scaled_features(s2)
        return Y.transpose() * Y if Y.ncols() <= Y.nrows() else Y * Y.transpose()

    def scaled_eigenvalues(self, sigma: Fraction, ell: int) -> list[flint.arb]:
        """Enclosures of ``σ_X² λ_l``, l = 1..ℓ (U-statistic scaling: divided by n − 1)."""
        return [lam / (self.n - 1) for lam in top_eigenvalues(self.scaled_matrix(sigma), ell)]

    def _nystrom_factor(self, s2: flint.arb) -> flint.arb_mat:
        """W = L⁻¹ F̃ᵀ (m×n), K_mm = L Lᵀ, F̃ = σ_X² H (K_nm − 1)."""
        m = len(self.landmarks)
        K_nm = self._kernel_minus_one(self._sq, s2, range(self.n), range(m), False)
        K_mm = [[1 + K_nm[i][b] for b in range(m)] for i in self.landmarks]
        F = _center_columns(K_nm)
        Ft = flint.arb_mat([[s2 * F[i][b] for i in range(self.n)] for b in range(m)])
        return cholesky(flint.arb_mat(K_mm)).solve(Ft)

    def _scaled_features(self, s2: flint.arb) -> flint.arb_mat:
        """Y = σ_X H Z (n×D), Z the features of the exact data with frequencies ω/σ_X."""
        sigma_x = s2.sqrt()
        unit = flint.arb(2) ** self._proj_exp2 / sigma_x
        D = self._features.n_components
        norm = (flint.arb(2) / D).sqrt()
        n_freq = self._proj.shape[1]
        if self._features.kind == "cos":
            phases = [flint.arb(float(b)) for b in self._features.phases_]
            Z = [[(flint.arb(int(self._proj[i, j])) * unit + phases[j]).cos() for j in range(n_freq)]
                 for i in range(self.n)]
        else:
            Z = []
            for i in range(self.n):
                pairs = [(flint.arb(int(self._proj[i, j])) * unit).sin_cos() for j in range(n_freq)]
                Z.append([c for _, c in pairs] + [s for s, _ in pairs])
        return flint.arb_mat(_center_columns(Z)) * (norm * sigma_x)

    # -- limits -------------------------------------------------------------------------------------------------
    def limit_matrix(self) -> flint.arb_mat:
        """The symmetric ball matrix whose top eigenvalues are the σ → ∞ limits μ_l."""
        C = self._covariance()
        if self.method in ("exact", "nystrom"):
            return C
        P = self._projection()
        try:
            L = cholesky(C)
        except ArithmeticError:  # C singular (rank-deficient data): the D'×D' form has the same nonzero spectrum
            return P * C * P.transpose()
        return L.transpose() * (P.transpose() * P) * L

    def limit(self, ell: int) -> list[flint.arb]:
        """Enclosures of μ_1..μ_ℓ."""
        return top_eigenvalues(self.limit_matrix(), ell)

    def limit_rank(self) -> int:
        """How many limit eigenvalues can be nonzero: d, or min(d, rows of P) for random features."""
        if self.method in ("exact", "nystrom"):
            return self.d
        return min(self.d, self._proj.shape[1])

    def _covariance(self) -> flint.arb_mat:
        """C = X_cᵀ X_c / (n − 1) from the exact integers n·X_c·2^-e."""
        gram = self._centered.transpose() * self._centered
        scale = flint.arb(2) ** (2 * self._exp2) / (self.n * self.n * (self.n - 1))
        return flint.arb_mat(gram) * scale

    def _projection(self) -> flint.arb_mat:
        """P (rows per frequency): √(2/D) sin(b_k) ω_k (cos map), √(2/D) ω_k (sincos map, the sin half)."""
        D = self._features.n_components
        norm = (flint.arb(2) / D).sqrt()
        W = self._features.frequencies_
        if self._features.kind == "cos":
            weights = [flint.arb(float(b)).sin() * norm for b in self._features.phases_]
        else:
            weights = [norm] * W.shape[0]
        return flint.arb_mat([[flint.arb(float(v)) * w for v in row] for row, w in zip(W, weights)])

    # -- Gram approximation error -------------------------------------------------------------------------------
    def gram_error(self, sigma: Fraction) -> flint.arb:
        """``‖σ_X² H (K̃ − K) H‖_F / ‖σ_X² H K H‖_F`` (nystrom and random features)."""
        s2 = self.sigma_x2(sigma)
        if self.method == "nystrom":
            W = self._nystrom_factor(s2)
            approx = W.transpose() * W / s2
        else:
            Y = self._scaled_features(s2)
            approx = Y * Y.transpose()
        exact = self._exact_centered(s2)
        diff = (approx[i, j] - exact[i][j] for i in range(self.n) for j in range(self.n))
        return frobenius_ball(diff) / frobenius_ball(x for row in exact for x in row)


def sigma_x2_ball(X: np.ndarray, sigma, median: str = "full") -> flint.arb:
    """A ball containing σ_X² = σ² d_X² for float64 data X (exact) at the current flint precision.

    Parameters
    ----------
    X : ndarray of float64, shape (n, d)
    sigma : int, float, str or Fraction
        Read exactly by :func:`precise_kpca.validation.parse_sigma`.
    median : {"full", "pairs"}
        d_X as :mod:`precise_kpca.numerics.geometry` defines it.
    """
    return _sigma_x2(ExactEccentricity(X, median).median_sq, ExactData.from_float64(X).exp2, parse_sigma(sigma))


def _sigma_x2(median_sq, exp2: int, sigma: Fraction) -> flint.arb:
    """σ² d_X², d_X = 2^e · mean of the square roots of the exact median squared distance(s)."""
    roots = [flint.arb(v).sqrt() for v in median_sq]
    d_x = sum(roots[1:], roots[0]) / len(roots) * flint.arb(2) ** exp2
    s = flint.arb(flint.fmpq(sigma.numerator, sigma.denominator))
    return s * s * d_x * d_x


def _squared_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Exact integer |a_i − b_j|², shape (len(a), len(b))."""
    na = (a * a).sum(axis=1)
    nb = (b * b).sum(axis=1)
    return na[:, None] + nb[None, :] - 2 * _products(a, b)


def _products(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Exact integer a_i · b_j, shape (len(a), len(b))."""
    product = flint.fmpz_mat(a.tolist()) * flint.fmpz_mat(b.tolist()).transpose()
    return np.array([int(v) for v in product.entries()], dtype=object).reshape(len(a), len(b))


def _center_columns(rows: list[list]) -> list[list]:
    """H A for nested lists of balls (each column minus its mean)."""
    n = len(rows)
    means = [sum((row[j] for row in rows[1:]), rows[0][j]) / n for j in range(len(rows[0]))]
    return [[x - mean for x, mean in zip(row, means)] for row in rows]


def _double_center(rows: list[list]) -> list[list]:
    """H A H for a symmetric nested list of balls (mirrored: entry (j, i) is the ball of (i, j))."""
    n = len(rows)
    means = [sum(row[1:], row[0]) / n for row in rows]
    grand = sum(means[1:], means[0]) / n
    out = [[None] * n for _ in range(n)]
    for i in range(n):
        for j in range(i, n):
            out[i][j] = out[j][i] = rows[i][j] - means[i] - means[j] + grand
    return out
