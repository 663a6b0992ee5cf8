"""Eigenpairs of A = L + E where L = X_c X_cᵀ has low rank r and E is small, without forming A − L.

The scaled Gaussian Gram is σ_X² H K_G H = L + E with E = H G H = O(σ⁻²) (Lemma 2). Its eigenvalues minus
the linear ones, and its eigenvectors' angles to the linear ones, are O(σ⁻²): a general eigensolver on A
loses log10(‖L‖/‖E‖) digits to cancellation. Here the linear part is exact (the d×d problem of
:class:`~precise_kpca.numerics.linear_spectrum.LinearSpectrum`, at a precision that covers that loss) and only
E-sized quantities are ever formed, so E may be held in float64 without losing relative accuracy.

The linear eigenvalues are split into a *top* block λ_1 … λ_t that stands clear of ‖E‖ (gaps and λ_t above
‖E‖/C) and the *rest* λ_{t+1} … λ_r, which are E-sized or smaller (nearly collinear attributes make
λ_r/λ_1 ~ 1e-12 on several of the paper's data sets). With W the top linear eigenvectors, W_s the rest and
P₀ = I − WWᵀ:

    A ≅ [[Λ + F, Yᵀ], [Y, S₀]],   F = WᵀEW,  Y = P₀EW,  S₀ = P₀EP₀ + W_s Λ_s W_sᵀ.

* Top eigenpairs (i < t): with the resolvent expanded as (μ − S₀)⁻¹ = Σₙ S₀ⁿ/μⁿ⁺¹ (‖S₀‖ < μ), the
  eigenvalue μ_i = λ_i + δ_i solves (Λ + P(μ)) x = μ x with P(μ) = F + Σₙ μ^{−n−1} Yᵀ S₀ⁿ Y; δ_i and the
  components x_j (j ≠ i, x_i = 1) come from a fixed point that only divides E-sized numbers by gaps
  λ_i − λ_j. Linear eigenvalues closer than ‖E‖/C (exact ties come from symmetries of the data, e.g.
  tic-tac-toe's board) form clusters J solved together: a g×g E-sized eigenproblem per eigenvalue, the
  Schur complement onto J, with the fixed point dividing only by gaps to other clusters. The eigenvector is
  v_i = W x + z, z = Σₙ μ^{−n−1} S₀ⁿ Y x, orthogonal to W.
* Rest-block eigenvalues ν solve ν ∈ eig(S₀ − Y(Λ + F − ν)⁻¹Yᵀ); the largest r − t + 1 are needed (Eq. 18's
  ∞-norm pairs them with λ_{t+1} … λ_r and a zero). Each is a fixed point in ν: float64 Lanczos on the Schur
  complement; in mp, Rayleigh–Ritz on that Lanczos basis, so each step is a small dense eigenproblem.

The method applies when such a split exists (:attr:`PerturbedSpectrum.applicable`) and, for eigenvectors, when
they lie in the top block; otherwise callers fall back to a full eigensolver.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.linalg
import scipy.sparse.linalg

from ..backends import Backend, Float64Backend
from ..errors import NoConvergence
from .linear_spectrum import LinearSpectrum
from .theorems import split_runs

# ‖E‖_F (plus λ_{t+1}) must stay below this fraction of λ_t and ‖E‖_F below it of the top gaps: the Neumann
# series and the fixed points then contract by at least 4× per step.
_CONTRACTION = 0.25
_MAX_FIXED_POINT_STEPS = 200
_FAST_RATIO = 1e-3  # a top block this far above the rest is preferred to a larger one (see _top_block_size)
_MAX_CLUSTER = 8  # linear eigenvalues closer than ‖E‖/C solved together: a g-cluster costs g² columns
_CLUSTER_GAP = 1e-3  # mp Rayleigh–Ritz blocks: Lanczos values closer than this (relative) stay together
_REST_RITZ_EXTRA = 3  # Lanczos vectors beyond the rest eigenvalues needed: keeps the wanted ones converged


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
        Number of top eigenvectors wanted (those inside the top block are computed).
    rest : bool
        Compute ``rest_values`` (False: None, for callers that bound the rest block themselves).

    Attributes
    ----------
    applicable : bool
        False when no linear eigenvalue stands clear of ‖E‖; then nothing else is computed.
    rank : int
        Size t of the top block (≤ the linear rank r).
    lam, rest_lam : list
        Linear eigenvalues of the top block (t) and of the rest (r − t), backend scalars.
    shifts : list
        δ_i = μ_i − λ_i for the top block.
    rest_values : list
        The largest r − t + 1 eigenvalues of the rest block (at most n − t − 1), descending (paired with
        ``rest_lam`` and a zero). Empty when t = n − 1 (N ≤ d + 1 with every linear eigenvalue in the top
        block): then the rest block is empty and A's last eigenvalue is the exact zero of the centering vector,
        paired with the linear zero.
    coords : list of (x, z)
        For i < min(k, t): v_i = W x + z (x: t-vector, z: N-vector orthogonal to W); x_i = 1 when i is alone
        in its cluster, else x restricted to the cluster has unit norm.
    clusters : list of (a, z)
        Runs of top linear eigenvalues solved together (gaps below ‖E‖/C; singletons mostly).
    series_ratio : float
        (‖E‖_F + λ_{t+1})/λ_t ≥ ‖S₀‖/μ: the resolvent series' contraction (see :meth:`series_terms`).
    """

    def __init__(self, linear: LinearSpectrum, E: np.ndarray, backend: Backend, k: int, rest: bool = True):
        b = self.backend = backend
        self.linear = linear
        lb = linear.backend
        r = linear.rank
        if not 1 <= k <= r:
            raise ValueError(f"k={k} must be between 1 and the rank {r} of the centered linear Gram")
        if isinstance(E, np.ndarray):
            self.E_op, self.n = b.operator(E), E.shape[0]
            e_norm = b.to_float(b.sqrt((E * E).sum()))
            self._E_float64 = lambda: _convert(b, Float64Backend(), E)
        else:  # an operator with dot, shape, frobenius and to_float64 (e.g. residual_series.SeriesOperator)
            self.E_op, self.n = E, E.shape[0]
            e_norm = E.frobenius
            self._E_float64 = E.to_float64
        floats = [lb.to_float(v) for v in linear.values[:r]]
        t = self.rank = top_block_size(floats, e_norm, k)
        self.applicable = t > 0
        if not self.applicable:
            return
        self.clusters = _clusters(floats[:t], e_norm)
        # λ_i − λ_j at the linear precision: inside a cluster they are E-sized or exact zeros
        self._gaps = _convert(lb, b, np.array(linear.values[:t])[None, :] - np.array(linear.values[:t])[:, None])
        self.W = _convert(lb, b, linear.vectors[:, :t])
        self.lam = [_convert_scalar(lb, b, v) for v in linear.values[:t]]
        self.rest_lam = [_convert_scalar(lb, b, v) for v in linear.values[t:r]]
        self._W_ops = (b.operator(self.W), b.operator(self.W.T))
        rest_vectors = _convert(lb, b, linear.vectors[:, t:r])
        self._rest_ops = (b.operator(rest_vectors), b.operator(rest_vectors.T), np.array(self.rest_lam, dtype=b.dtype))
        EW = self.E_op.dot(self.W)
        F = self._W_ops[1].dot(EW)
        self.F = (F + F.T) / 2
        self.Y = EW - self._W_ops[0].dot(self.F)
        # Neumann terms: (‖S₀‖/μ)^(n+1) ≤ ((‖E‖ + λ_{t+1})/λ_t)^(n+1) below the working eps.
        self._s0_norm = e_norm + (floats[t] if t < r else 0.0)  # ≥ ‖S₀‖₂
        self.series_ratio = self._s0_norm / floats[t - 1]
        terms = self.series_terms(b.eps)
        # Mₙ = Yᵀ S₀ⁿ Y = K_aᵀ K_b for any a + b = n (S₀ symmetric): Krylov blocks K_a = S₀ᵃ Y to half the depth.
        krylov = [self.Y]
        for _ in range(terms // 2):
            krylov.append(self._null_apply(krylov[-1]))
        moments = (b.matmul(krylov[n // 2].T, krylov[n - n // 2]) for n in range(terms))
        self.moments = [(M + M.T) / 2 for M in moments]
        deltas, xs = self._top_pairs()
        self.shifts = list(deltas)
        k = min(k, t)
        z = self._null_component(deltas[:k], xs[:, :k])
        self.coords = [(xs[:, i].copy(), z[:, i].copy()) for i in range(k)]
        # S(ν) acts on n − t − 1 dimensions; A's eigenvalues beyond (rank ≤ n − 1) are exact zeros
        if not rest:  # the caller bounds the rest block itself (the structured enclosure does)
            self.rest_values = None
            return
        self.rest_values = self._rest_values(min(r - t + 1, self.n - t - 1))
        if self.rest_values and not self.rest_values[0] < self.lam[-1] + self.shifts[-1]:
            self.applicable = False  # a rest-block eigenvalue overtook λ_t: Eq. 18's pairing changes

    def series_terms(self, eps: float) -> int:
        """Neumann terms (Krylov depth ≈ half of it) the top block needs at working precision ``eps``."""
        return _neumann_terms(self.series_ratio, eps)

    # --- the top block --------------------------------------------------------------------------------
    def _project_null(self, V: np.ndarray) -> np.ndarray:
        W, WT = self._W_ops
        return V - W.dot(WT.dot(V))

    def _null_apply(self, V: np.ndarray) -> np.ndarray:
        """S₀ V = P₀ E P₀ V + W_s Λ_s W_sᵀ V."""
        out = self._project_null(self.E_op.dot(self._project_null(V)))
        W_s, W_sT, lam_s = self._rest_ops
        if len(lam_s):
            out = out + W_s.dot(W_sT.dot(V) * lam_s.reshape((-1,) + (1,) * (V.ndim - 1)))
        return out

    def _inverse_mu(self, deltas: np.ndarray) -> np.ndarray:
        """1/μ_i, μ_i = λ_i + δ_i, for the first len(deltas) top eigenvalues."""
        return 1 / (np.array(self.lam[:len(deltas)], dtype=self.backend.dtype) + deltas)

    def _resolvent_weights(self, deltas: np.ndarray) -> list:
        """μ_i^{−n−1} for n < len(moments): one row per Neumann term."""
        inverse = self._inverse_mu(deltas)
        weights = [inverse]
        for _ in range(len(self.moments) - 1):
            weights.append(weights[-1] * inverse)
        return weights

    def _null_component(self, deltas: np.ndarray, xs: np.ndarray) -> np.ndarray:
        """z = Σₙ μ^{−n−1} S₀ⁿ Y x per column (μ = λ_i + δ_i), by Horner: z = μ⁻¹(Yx + μ⁻¹S₀(Yx + …))."""
        inverse = self._inverse_mu(deltas)
        start = self.backend.matmul(self.Y, xs)
        z = start
        # the series converges at ‖S₀‖/μ_k, faster than the moments' ‖S₀‖/μ_t
        smallest = min(self.backend.to_float(mu) for mu in 1 / inverse)
        for _ in range(min(len(self.moments), _neumann_terms(self._s0_norm / smallest, self.backend.eps)) - 1):
            z = start + self._null_apply(z) * inverse[None, :]
        return z * inverse[None, :]

    def _top_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """δ_i and x_i (column i) for all i < t, iterated together.

        Eigenvalue μ_i = λ_i + δ_i of the cluster J ∋ i solves the Schur complement of T(μ) = Λ + P(μ),
        P(μ) = F + Σₙ μ^{−n−1} Mₙ, onto J: x_O = R x_J with R = (μ − T_OO)⁻¹ P_OJ, and δ_i is eigenvalue
        i − min J (descending) of H_i = (Λ_J − λ_i) + P_JJ + P_JO R, a g×g E-sized matrix. R is a fixed point:
        row j is (P_jJ + Σ_{l≠j} P_jl R_l) / (λ_i − λ_j + δ_i − P_jj), dividing E-sized numbers by gaps to
        other clusters only. For a singleton J = {i} this is x_ii = 1, x_j as above, δ_i = (P x)_i. The
        products P·V are exact backend products (fixed point on the mp backend), the rest elementwise.
        """
        b, t = self.backend, self.rank
        operators = [b.operator(M) for M in [self.F, *self.moments]]
        diagonals = [np.diagonal(M).copy() for M in [self.F, *self.moments]]
        # column c of V is column c − offset[i] of [I_g; R] (rows J, O) for the eigenvalue owner[c] = i
        owner = np.array([i for a, z in self.clusters for i in range(a, z) for _ in range(z - a)])
        block_of = {i: (a, z) for a, z in self.clusters for i in range(a, z)}
        offset = np.searchsorted(owner, np.arange(t))
        inside = np.zeros((t, len(owner)), dtype=bool)
        for c, i in enumerate(owner):
            inside[slice(*block_of[i]), c] = True
        unit = b.zeros((t, len(owner)))
        for c, i in enumerate(owner):
            unit[block_of[i][0] + c - offset[i], c] = b.scalar(1)
        V = unit.copy()
        deltas = diagonals[0].copy()

        def apply(weights, V):  # column c of Σₙ wₙ[owner c] Mₙ V, with w₋₁ = 1 for F
            out = operators[0].dot(V)
            for op, w in zip(operators[1:], weights):
                out = out + op.dot(V) * w[owner][None, :]
            return out

        for _ in range(_MAX_FIXED_POINT_STEPS):
            weights = self._resolvent_weights(deltas)
            P_diag = (diagonals[0][:, None] + sum(d[:, None] * w[None, :] for d, w in zip(diagonals[1:], weights)))
            P_diag = P_diag[:, owner]
            denominators = self._gaps[:, owner] + deltas[owner][None, :] - P_diag
            denominators[inside] = b.scalar(1)
            new_V = (apply(weights, V) - P_diag * V) / denominators
            new_V[inside] = unit[inside]
            PV = apply(weights, new_V)
            new_deltas, us = deltas.copy(), []
            for i in range(t):
                a, z = block_of[i]
                H = PV[a:z, offset[i]:offset[i] + z - a].copy()
                if z - a == 1:  # x_ii = 1
                    new_deltas[i], u = H[0, 0], unit[i:i + 1, offset[i]]
                else:
                    for j in range(a, z):
                        H[j - a, j - a] = H[j - a, j - a] + self._gaps[i, j]  # λ_j − λ_i
                    values, vectors = b.eigh((H + H.T) / 2)
                    new_deltas[i], u = values[i - a], vectors[:, i - a]  # both descending
                us.append(u)
            still = [c for c in range(len(owner))
                     if not all(abs(p - q) <= 4 * b.eps * (1 + abs(q)) for p, q in zip(new_V[:, c], V[:, c]))]
            moving = sorted({owner[c] for c in still} | {
                i for i in range(t) if not abs(new_deltas[i] - deltas[i]) <= 4 * b.eps * abs(new_deltas[i])})
            V, deltas = new_V, new_deltas
            if not moving:
                X = b.zeros((t, t))
                for i in range(t):
                    a, z = block_of[i]
                    X[:, i] = V[:, offset[i]:offset[i] + z - a].dot(us[i])
                return deltas, X
        raise NoConvergence(f"eigenvalues {moving}: the perturbation fixed point did not settle in "
                            f"{_MAX_FIXED_POINT_STEPS} steps", remedy="‖E‖ is close to a linear eigenvalue gap: "
                            "the structured expansion does not apply at this σ")

    # --- the rest block -------------------------------------------------------------------------------
    def _schur_apply(self, V: np.ndarray, coupling_inverse: np.ndarray) -> np.ndarray:
        """(S₀ − Y(Λ + F − ν)⁻¹Yᵀ) V, with (Λ + F − ν)⁻¹ given."""
        b = self.backend
        return self._null_apply(V) - b.matmul(self.Y, coupling_inverse.dot(b.matmul(self.Y.T, V)))

    def _coupling_inverse(self, nu) -> np.ndarray:
        shifted = self.F.copy()
        for j in range(self.rank):
            shifted[j, j] = shifted[j, j] + self.lam[j] - nu
        return self.backend.inverse(shifted)

    def _rest_values(self, count: int) -> list:
        """The largest ``count`` ν with ν ∈ eig(S(ν)), S(ν) = S₀ − Y(Λ + F − ν)⁻¹Yᵀ, descending.

        S depends on ν only through an O(‖E‖²/λ_t²)-sized term (and θ_j(S(ν)) decreases in ν), so the fixed
        point ν_j = θ_j(S(ν_j)) contracts fast. float64: see :meth:`_rest_pairs_float64`. mp: from the float64
        fixed point and its Ritz basis B around ν_j (residual ~eps₆₄‖S‖, so Ritz values to ~eps₆₄²/gap), the
        fixed point of the Rayleigh quotient H(ν) = BᵀS₀B − Σₙ νⁿ Zᵀ(Λ + F)^{−n−1} Z, Z = YᵀB (ν is E-sized,
        Λ + F is not). S₀ is applied to every j's basis in one exact product.
        """
        b = self.backend
        if count == 0:  # t = n − 1: W and 1 span everything, A's only other eigenvalue is the exact zero of 1
            return []
        if b.fixed_precision:  # the float64 fixed point is the answer; otherwise it starts the refinement
            return [nu for nu, _, _ in self._rest_pairs_float64(count)]
        inverse = self._coupling_inverse(b.scalar(0))
        pairs = self._float64_twin()._rest_pairs_float64(count)
        # Rayleigh–Ritz on the cluster of Ritz vectors around j only (gaps below _CLUSTER_GAP·|ν_j| join it): its
        # Ritz values are as accurate as the whole basis's, at a fraction of the mp work
        clusters = []
        for j, (estimate, ritz, _) in enumerate(pairs):
            lo, hi = j, j + 1
            while lo > 0 and ritz[lo - 1] - ritz[lo] < _CLUSTER_GAP * abs(estimate):
                lo -= 1
            while hi < len(ritz) and ritz[hi - 1] - ritz[hi] < _CLUSTER_GAP * abs(estimate):
                hi += 1
            clusters.append((lo, hi))
        V_all = self._project_null(b.internal(np.hstack([basis[:, lo:hi] for (_, _, basis), (lo, hi)
                                                         in zip(pairs, clusters)])))
        SV_all = self._null_apply(V_all)
        values, first = [], 0
        for j, ((estimate, _, _), (lo, hi)) in enumerate(zip(pairs, clusters)):
            V, SV = V_all[:, first:first + hi - lo], SV_all[:, first:first + hi - lo]
            first += hi - lo
            gram_values, gram_vectors = b.eigh(b.matmul(V.T, V))
            # Ritz directions the projection (nearly) annihilated carry no information: keep the rest.
            keep = [i for i, g in enumerate(gram_values) if g > len(gram_values) * 16 * b.eps * gram_values[0]]
            Q = gram_vectors[:, keep] / b.sqrt(gram_values[keep])[None, :]  # basis = V Q, orthonormal
            T0 = Q.T.dot(b.matmul(V.T, SV)).dot(Q)
            T0 = (T0 + T0.T) / 2
            Z = b.matmul(self.Y.T, V).dot(Q)
            # terms until (|ν|·‖(Λ + F)⁻¹‖)ⁿ < eps/16, with ‖(Λ + F)⁻¹‖ ≤ 1/((1 − C)λ_t)
            ratio = min(2 * abs(estimate) / ((1 - _CONTRACTION) * b.to_float(self.lam[-1])), 0.5)
            corrections, R = [], inverse.dot(Z)
            for _ in range(_neumann_terms(ratio, b.eps)):
                corrections.append(Z.T.dot(R))
                R = inverse.dot(R)

            def theta(nu):
                H = T0 - sum(C * nu**n for n, C in enumerate(corrections))
                return b.eigh((H + H.T) / 2)[0][j - lo]

            values.append(_fixed_point(theta, b.scalar(estimate), b.eps, f"rest-block eigenvalue {j}"))
        return values

    def _rest_pairs_float64(self, count: int) -> list:
        """(ν_j, Ritz values and Ritz basis of S(ν_j)'s top count + a few eigenpairs), j < count: float64.

        One Lanczos basis B of S(0) serves every j: S(ν) = S(0) + Y D(ν) Yᵀ, D(ν) = (Λ + F)⁻¹ − (Λ + F − ν)⁻¹,
        so ν_j is the fixed point of the j-th eigenvalue of H(ν) = diag(θ(S(0))) + Zᵀ D(ν) Z, Z = YᵀB (m×m).
        The Ritz vector Bu is accepted when the part of its residual outside B, (I − BBᵀ) Y D Z u, is below
        4 eps‖S₀‖ (then it is as good as a Lanczos vector of S(ν_j) itself); otherwise Lanczos on S(ν) is
        iterated for that j. Large σ (‖E‖ ≪ λ_t) needs one Lanczos run for all j.
        """
        b, eps = self.backend, self.backend.eps
        values, B = self._lanczos(0.0, count + _REST_RITZ_EXTRA, None)
        base_inverse = self._coupling_inverse(0.0)
        Z = self.Y.T.dot(B)

        def ritz(nu):
            D = base_inverse - self._coupling_inverse(nu)
            theta, U = b.eigh(np.diag(values) + Z.T.dot(D).dot(Z))
            return theta, U, D

        pairs = []
        for j in range(count):
            nu = _fixed_point(lambda nu: ritz(nu)[0][j], values[j], eps, f"rest-block eigenvalue {j}")
            theta, U, D = ritz(nu)
            outside = self.Y.dot(D.dot(Z.dot(U[:, j])))
            outside -= B.dot(B.T.dot(outside))
            if np.linalg.norm(outside) <= 4 * eps * self._s0_norm:
                pairs.append((nu, theta, B.dot(U)))
            else:
                # the top j + 1 (and a few more, for the mp cluster around j) are all this j needs
                m = min(len(values), j + 1 + _REST_RITZ_EXTRA)
                pairs.append(self._rest_pair_by_lanczos(j, m, B.dot(U[:, j])))
        return pairs

    def _rest_pair_by_lanczos(self, j: int, m: int, start: np.ndarray) -> tuple:
        """(ν_j, Ritz values, Lanczos basis) with a Lanczos run of S(ν) at every step of the fixed point."""
        ritz, basis = self._lanczos(0.0, m, start)

        def theta(nu):
            nonlocal ritz, basis
            ritz, basis = self._lanczos(nu, m, basis[:, j])
            return ritz[j]

        nu = _fixed_point(theta, ritz[j], self.backend.eps, f"rest-block eigenvalue {j}")
        return nu, ritz, basis

    def _lanczos(self, nu: float, m: int, v0) -> tuple[np.ndarray, np.ndarray]:
        """Top m eigenpairs of S(ν) (float64), descending; dense when the problem is too small for Lanczos."""
        n = self.n
        inverse = self._coupling_inverse(nu)
        if m >= n - self.rank - 1:  # S(ν) acts on an (n − t − 1)-dimensional space (E and W kill 1)
            values, vectors = scipy.linalg.eigh(self._schur_apply(np.eye(n), inverse))
            m = min(m, n - self.rank - 1)
            return values[::-1][:m], self._project_null(vectors[:, ::-1][:, :m])
        op = scipy.sparse.linalg.LinearOperator(
            (n, n), matvec=lambda v: self._schur_apply(v.reshape(n, 1), inverse).ravel(), dtype=float)
        if v0 is None:
            v0 = np.ones(n) / math.sqrt(n) + 1e-3 * np.arange(n) / n
        values, vectors = scipy.sparse.linalg.eigsh(op, k=m, which="LA", tol=0, v0=v0)
        order = np.argsort(values)[::-1]
        return values[order], self._project_null(vectors[:, order])

    def _float64_twin(self) -> "PerturbedSpectrum":
        """This spectrum's rest block in float64 (same W, F, Y, E rounded): start values and bases for mp."""
        b, f = self.backend, Float64Backend()
        twin = PerturbedSpectrum.__new__(PerturbedSpectrum)
        twin.backend, twin.rank, twin.n = f, self.rank, self.n
        twin.W = _convert(b, f, self.W)
        twin._W_ops = (twin.W, twin.W.T)
        rest = _convert(self.linear.backend, f, self.linear.vectors[:, self.rank:self.linear.rank])
        twin._rest_ops = (rest, rest.T, np.array([b.to_float(v) for v in self.rest_lam], dtype=float))
        twin.E_op = self._E_float64()
        twin.F = _convert(b, f, self.F)
        twin.Y = _convert(b, f, self.Y)
        twin.lam = [b.to_float(v) for v in self.lam]
        twin._s0_norm = self._s0_norm
        return twin


def _neumann_terms(ratio: float, eps: float) -> int:
    """Terms of a series whose n-th term is ≤ ratioⁿ (ratio < 1) until that is below eps/16."""
    return max(1, math.ceil(math.log(eps / 16) / math.log(max(ratio, 2.0**-1000))))


def _fixed_point(step, start, eps: float, what: str):
    """Iterate x ← step(x) (a contraction) from ``start`` until two iterates agree to 4 eps relative, or until the
    steps stop shrinking: then they are rounding noise of ``step`` itself (e.g. a Lanczos solve)."""
    x, last = start, math.inf
    for _ in range(_MAX_FIXED_POINT_STEPS):
        new = step(x)
        change = abs(new - x)
        if change <= 4 * eps * abs(new) or change >= last:
            return new
        x, last = new, change
    raise NoConvergence(f"{what}: the fixed point did not settle in {_MAX_FIXED_POINT_STEPS} steps",
                        remedy="the structured expansion does not apply at this σ")


def _clusters(lam: list, e_norm: float) -> list[tuple[int, int]]:
    """Runs [a, z) of λ (descending) joined by gaps below ‖E‖/C: their eigenvalues are found together."""
    if not lam:
        return []
    return split_runs([e_norm <= _CONTRACTION * (lam[i - 1] - lam[i]) for i in range(1, len(lam))])


def top_block_size(lam: list, e_norm: float, wanted: int = 1) -> int:
    """The top block size t: λ_{t+1} + ‖E‖ ≤ C·λ_t (λ descending, λ_{r+1} = 0), with no cluster of λ_1 … λ_t
    (see :func:`_clusters`) larger than _MAX_CLUSTER; 0 if no t qualifies.

    Among those, the largest whose ratio (λ_{t+1} + ‖E‖)/λ_t is below _FAST_RATIO and that still holds the
    ``wanted`` eigenvectors (a series in that ratio costs ~30/log10(1/ratio) terms), else the largest.
    """
    padded = list(lam) + [0.0]
    ratios = {t: (padded[t] + e_norm) / padded[t - 1] for t in range(1, len(lam) + 1)
              if padded[t] + e_norm <= _CONTRACTION * padded[t - 1]
              and max(z - a for a, z in _clusters(lam[:t], e_norm)) <= _MAX_CLUSTER}
    if not ratios:
        return 0
    largest = max(ratios)
    fast = [t for t, ratio in ratios.items() if ratio <= _FAST_RATIO and t >= min(wanted, largest)]
    return max(fast) if fast else largest


def _convert_scalar(source: Backend, target: Backend, x):
    return target.internal(source.export(x))


def _convert(source: Backend, target: Backend, array: np.ndarray) -> np.ndarray:
    return target.internal(source.export(array))
