"""Eigenpairs of A = L + E where L = X_c X_cᵀ has low rank r and E is small, without forming A − L.

The scaled Gaussian Gram is σ_X² H K_G H = L + E with E = H G H = O(σ⁻²) (Lemma 2). Its eigenvalues minus
the linear ones, and its eigenvectors' angles to the linear ones, are O(σ⁻²): a general eigensolver on A
loses log10(‖L‖/‖E‖) digits to cancellation. Here the linear part is exact (the d×d problem of
:class:`~precise_kpca.numerics.linear_spectrum.LinearSpectrum`, at a precision that covers that loss) and only
E-sized quantities are ever formed, so E may be held in float64 without losing relative accuracy.

In the basis [W, P₀] (W: linear eigenvectors, P₀ = I − WWᵀ the projector on null(L)):

    A ≅ [[Λ + F, Yᵀ], [Y, S₀]],   F = WᵀEW,  Y = P₀EW,  S₀ = P₀EP₀.

* Top eigenpairs (i < r): with the resolvent expanded as (μ − S₀)⁻¹ = Σₙ S₀ⁿ/μⁿ⁺¹ (‖S₀‖ < μ), the
  eigenvalue μ_i = λ_i + δ_i solves (Λ + P(μ)) x = μ x with P(μ) = F + Σₙ μ^{−n−1} Yᵀ S₀ⁿ Y; δ_i and the
  components x_j (j ≠ i, x_i = 1) come from a fixed point that only divides E-sized numbers by gaps
  λ_i − λ_j. The eigenvector is v_i = W x + z, z = Σₙ μ^{−n−1} S₀ⁿ Y x, orthogonal to W.
* Null-block eigenvalues ν solve ν ∈ eig(S₀ − Y(Λ + F − ν)⁻¹Yᵀ); only the largest is needed (Eq. 18's
  ∞-norm pairs it with a zero linear eigenvalue). float64 uses a Lanczos solver; mp refines float64 Ritz
  vectors by block subspace iteration and Rayleigh–Ritz in mp.

The method applies when ‖E‖ is well below the smallest nonzero linear eigenvalue and the gaps between the top
ones (:attr:`PerturbedSpectrum.applicable`); otherwise callers fall back to a full eigensolver.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.linalg
import scipy.sparse.linalg

from ..backends import Backend, Float64Backend
from .linear_spectrum import LinearSpectrum

# ‖E‖_F must stay below this fraction of λ_r and of the top gaps: the Neumann series and the fixed point then
# contract by at least 4× per step.
_CONTRACTION = 0.25
_MAX_FIXED_POINT_STEPS = 200
_NULL_RITZ_BLOCK = 4
_NULL_FIXED_POINT_STEPS = 4


class PerturbedSpectrum:
    """Eigen-structure of L + E relative to L's (see module docstring).

    Parameters
    ----------
    linear : LinearSpectrum
        Linear eigen-decomposition at high precision (its backend should carry at least
        ``digits + log10(λ_1/‖E‖)`` digits).
    E : ndarray, shape (N, N), or operator
        Symmetric perturbation with E·1 = 0 (double centered), in ``backend``'s arithmetic; or an operator
        with ``dot``, ``shape``, ``frobenius`` (float) and ``to_float64()``.
    backend : Backend
        Arithmetic of E and of every E-sized quantity computed here.
    k : int
        Number of top eigenvectors wanted.

    Attributes
    ----------
    applicable : bool
        False when ‖E‖ is too large for the expansion; then nothing else is computed.
    shifts : list
        δ_i = μ_i − λ_i for the r nonzero linear eigenvalues (backend scalars).
    null_top : scalar
        Largest eigenvalue of the null block (pairs with a zero linear eigenvalue).
    coords : list of (x, z)
        For i < k: v_i = W x + z with x_i = 1 (x: r-vector, z: N-vector orthogonal to W).
    """

    def __init__(self, linear: LinearSpectrum, E: np.ndarray, backend: Backend, k: int):
        b = self.backend = backend
        self.linear = linear
        lb = linear.backend
        r = self.rank = linear.rank
        if not 1 <= k <= r:
            raise ValueError(f"k={k} must be between 1 and the rank {r} of the centered linear Gram")
        self.W = _convert(lb, b, linear.vectors)
        self.lam = [_convert_scalar(lb, b, v) for v in linear.values[:r]]
        self.gap = [[_convert_scalar(lb, b, linear.values[i] - linear.values[j]) for j in range(r)] for i in range(r)]
        if isinstance(E, np.ndarray):
            self.E_op, self.n = b.operator(E), E.shape[0]
            e_norm = _to_float(b, b.sqrt((E * E).sum()))
            self._E_float64 = lambda: _convert(b, Float64Backend(), E)
        else:  # an operator with dot, shape, frobenius and to_float64 (e.g. residual_series.SeriesOperator)
            self.E_op, self.n = E, E.shape[0]
            e_norm = E.frobenius
            self._E_float64 = E.to_float64
        smallest_gap = min((abs(_to_float(b, self.gap[i][j])) for i in range(r) for j in range(r) if i != j),
                           default=math.inf)
        lam_r = _to_float(b, self.lam[-1])
        self.applicable = e_norm <= _CONTRACTION * min(lam_r, smallest_gap)
        if not self.applicable:
            return
        self._W_ops = (b.operator(self.W), b.operator(self.W.T))
        EW = self.E_op.dot(self.W)
        F = self._W_ops[1].dot(EW)
        self.F = (F + F.T) / 2
        self.Y = EW - self._W_ops[0].dot(self.F)
        # Neumann terms: (‖S₀‖/μ)^(n+1) ≤ (e_norm/λ_r)^(n+1) below the working eps.
        ratio = max(e_norm / lam_r, 2.0**-1000)
        terms = max(1, math.ceil(math.log(b.eps / 16) / math.log(ratio)))
        # Mₙ = Yᵀ S₀ⁿ Y = K_aᵀ K_b for any a + b = n (S₀ symmetric): Krylov blocks K_a = S₀ᵃ Y to half the depth.
        krylov = [self.Y]
        for _ in range(terms // 2):
            krylov.append(self._null_apply(krylov[-1]))
        moments = (b.matmul(krylov[n // 2].T, krylov[n - n // 2]) for n in range(terms))
        self.moments = [(M + M.T) / 2 for M in moments]
        deltas, xs = self._top_pairs()
        self.shifts = list(deltas)
        z = self._null_component(deltas[:k], xs[:, :k])
        self.coords = [(xs[:, i].copy(), z[:, i].copy()) for i in range(k)]
        self.null_top = self._null_top()
        if not self.null_top < self.lam[-1] + self.shifts[-1]:
            self.applicable = False  # a null-block eigenvalue overtook λ_r: Eq. 18's pairing changes

    # --- the top block --------------------------------------------------------------------------------
    def _project_null(self, V: np.ndarray) -> np.ndarray:
        W, WT = self._W_ops
        return V - W.dot(WT.dot(V))

    def _null_apply(self, V: np.ndarray) -> np.ndarray:
        """S₀ V = P₀ E P₀ V."""
        return self._project_null(self.E_op.dot(self._project_null(V)))

    def _resolvent_weights(self, deltas: np.ndarray) -> list:
        """μ_i^{−n−1} for n < len(moments), μ_i = λ_i + δ_i: one row per Neumann term."""
        inverse = 1 / (np.array(self.lam[:len(deltas)], dtype=self.backend.dtype) + deltas)
        weights = [inverse]
        for _ in range(len(self.moments) - 1):
            weights.append(weights[-1] * inverse)
        return weights

    def _null_component(self, deltas: np.ndarray, xs: np.ndarray) -> np.ndarray:
        """z = Σₙ μ^{−n−1} S₀ⁿ Y x per column (μ = λ_i + δ_i), by Horner: z = μ⁻¹(Yx + μ⁻¹S₀(Yx + …))."""
        inverse = 1 / (np.array(self.lam[:len(deltas)], dtype=self.backend.dtype) + deltas)
        start = self.backend.matmul(self.Y, xs)
        z = start
        for _ in range(len(self.moments) - 1):
            z = start + self._null_apply(z) * inverse[None, :]
        return z * inverse[None, :]

    def _top_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """δ_i and x_i (column i, x_ii = 1) for all i < r, iterated together.

        Column i follows the fixed point of (Λ + P(μ_i)) x = μ_i x, P(μ) = F + Σₙ μ^{−n−1} Mₙ: component j ≠ i
        is (P x − P_jj x_j)_j / (λ_i − λ_j + δ_i − P_jj), then δ_i = (P x)_i. The r×r products P·X are exact
        backend products (fixed point on the mp backend), the rest elementwise: r² scalar operations per
        Neumann term and step instead of r³.
        """
        b, r = self.backend, self.rank
        lam = np.array(self.lam, dtype=b.dtype)
        gaps = lam[None, :] - lam[:, None]  # [j, i] = λ_i − λ_j
        operators = [b.operator(M) for M in [self.F, *self.moments]]
        diagonals = [np.diagonal(M).copy() for M in [self.F, *self.moments]]
        X = b.zeros((r, r))
        np.fill_diagonal(X, b.scalar(1))
        deltas = diagonals[0].copy()

        def apply(weights, V):  # column i of Σₙ wₙ[i] Mₙ V, with w₋₁ = 1 for F
            out = operators[0].dot(V)
            for op, w in zip(operators[1:], weights):
                out = out + op.dot(V) * w[None, :]
            return out

        for _ in range(_MAX_FIXED_POINT_STEPS):
            weights = self._resolvent_weights(deltas)
            P_diag = diagonals[0][:, None] + sum(d[:, None] * w[None, :] for d, w in zip(diagonals[1:], weights))
            denominators = gaps + deltas[None, :] - P_diag
            np.fill_diagonal(denominators, b.scalar(1))  # x_ii stays 1
            new_X = (apply(weights, X) - P_diag * X) / denominators
            np.fill_diagonal(new_X, b.scalar(1))
            new_deltas = np.diagonal(apply(weights, new_X)).copy()
            moving = [i for i in range(r) if not (
                abs(new_deltas[i] - deltas[i]) <= 4 * b.eps * abs(new_deltas[i])
                and all(abs(a - c) <= 4 * b.eps * (1 + abs(c)) for a, c in zip(new_X[:, i], X[:, i])))]
            X, deltas = new_X, new_deltas
            if not moving:
                return deltas, X
        raise ArithmeticError(f"eigenvalues {moving}: the perturbation fixed point did not settle in "
                              f"{_MAX_FIXED_POINT_STEPS} steps (‖E‖ close to a linear eigenvalue gap?)")

    # --- the null block -------------------------------------------------------------------------------
    def _schur_apply(self, V: np.ndarray, coupling_inverse: np.ndarray) -> np.ndarray:
        """(S₀ − Y(Λ + F − ν)⁻¹Yᵀ) V, with (Λ + F − ν)⁻¹ given."""
        b = self.backend
        return self._null_apply(V) - b.matmul(self.Y, coupling_inverse.dot(b.matmul(self.Y.T, V)))

    def _coupling_inverse(self, nu) -> np.ndarray:
        shifted = self.F.copy()
        for j in range(self.rank):
            shifted[j, j] = shifted[j, j] + self.lam[j] - nu
        return _inverse(self.backend, shifted)

    def _null_top(self):
        """Largest ν with ν ∈ eig(S(ν)): a fixed point in ν (S depends on ν only through an O(‖E‖²/λ_r²)
        term, so two steps settle it), each step a Ritz value."""
        b = self.backend
        if isinstance(b, Float64Backend):
            nu = 0.0
            for _ in range(_NULL_FIXED_POINT_STEPS):
                nu = self._ritz_float64(nu)
            return nu
        nu = b.scalar(self._float64_twin_top())
        for _ in range(2):
            nu = self._ritz_mp(nu)
        return nu

    def _ritz_float64(self, nu) -> float:
        n = self.n
        count = min(_NULL_RITZ_BLOCK, n - self.rank - 1)
        if count < 1:
            return 0.0
        inverse = self._coupling_inverse(nu)
        op = scipy.sparse.linalg.LinearOperator(
            (n, n), matvec=lambda v: self._schur_apply(v.reshape(n, 1), inverse).ravel(), dtype=float)
        start = getattr(self, "_ritz_start", None)
        v0 = start[:, 0] if start is not None else np.ones(n) / math.sqrt(n) + 1e-3 * np.arange(n) / n
        values, vectors = scipy.sparse.linalg.eigsh(op, k=count, which="LA", tol=0, v0=v0)
        self._ritz_start = vectors
        return float(values.max())

    def _ritz_mp(self, nu):
        """One block subspace-iteration step from the current Ritz vectors, then Rayleigh–Ritz in mp.

        The float64 Ritz vectors are accurate to ~1e-16; a Ritz value's error is quadratic in that, and each
        step multiplies it by the (small) ratio of the block's next eigenvalue to its top one."""
        b = self.backend
        inverse = self._coupling_inverse(nu)
        V = self._project_null(b.internal(self._ritz_start))
        AV = self._schur_apply(V, inverse)
        V = self._project_null(AV)
        AV = self._schur_apply(V, inverse)
        gram = V.T.dot(V)
        values, vectors = b.eigh((gram + gram.T) / 2)
        # Directions the iteration has (nearly) annihilated carry no information: keep the rest.
        keep = [j for j, g in enumerate(values) if g > len(values) * 16 * b.eps * values[0]]
        half = vectors[:, keep] / b.sqrt(values[keep])[None, :]  # gram^{-1/2} on the kept span
        H = half.T.dot(V.T.dot(AV)).dot(half)
        ritz_values, ritz_vectors = b.eigh((H + H.T) / 2)
        self._ritz_start = V.dot(half.dot(ritz_vectors))
        return ritz_values[0]

    def _float64_twin_top(self) -> float:
        """The float64 fixed point of the null block, whose Ritz vectors start the mp iteration."""
        b = self.backend
        f = Float64Backend()
        twin = PerturbedSpectrum.__new__(PerturbedSpectrum)
        twin.backend, twin.rank = f, self.rank
        twin.W = _convert(b, f, self.W)
        twin._W_ops = (twin.W, twin.W.T)
        twin.E_op = self._E_float64()
        twin.n = self.n
        twin.F = _convert(b, f, self.F)
        twin.Y = _convert(b, f, self.Y)
        twin.lam = [b.to_float(v) for v in self.lam]
        nu = twin._null_top()
        self._ritz_start = twin._ritz_start
        return nu


def _inverse(b: Backend, A: np.ndarray) -> np.ndarray:
    """Inverse of a small (r×r) matrix."""
    if isinstance(b, Float64Backend):
        return scipy.linalg.inv(A)
    return np.array(b.ctx.inverse(b.ctx.matrix(A.tolist())).tolist(), dtype=object)


def _to_float(b: Backend, x) -> float:
    return float(x) if isinstance(b, Float64Backend) else b.to_float(x)


def _convert_scalar(source: Backend, target: Backend, x):
    return target.internal(source.export(x))


def _convert(source: Backend, target: Backend, array: np.ndarray) -> np.ndarray:
    return target.internal(source.export(array))
