"""Random Fourier features (Rahimi & Recht 2007) for the Gaussian kernel ``exp(−γ|x − y|²)``.

Bochner: ``k(x, y) = E_w[cos(w·(x − y))]`` with ``w ~ N(0, 2γ I)``. Two finite-D feature maps:

* ``kind="cos"`` (the seed article's): ``z(x) = √(2/D) cos(W x + b)``, ``b ~ U(0, 2π)``. Each term is
  ``cos(w·(x−y)) + cos(w·(x+y) + 2b)``: unbiased, but the approximate kernel is *not* shift-invariant.
  Per pair, the D terms are i.i.d. with variance ``v = 1 + k⁴/2 − k²`` (since ``E cos(2w·δ) = k(δ)⁴``), so
  ``E[(k_D − k)²] = v / D`` exactly.
* ``kind="sincos"``: ``z(x) = √(2/D) [cos(W x), sin(W x)]`` with D/2 frequencies; ``k_D(x, y) =
  (2/D) Σ cos(w·(x−y))`` is exactly shift-invariant, with per-frequency variance ``(1 + k⁴)/2 − k²``.

The mean squared error over pairs therefore decays exactly like D⁻¹ in expectation; the RMSE like
D^{−1/2} (up to a Jensen bias of relative order 1/(number of pairs), the same for every D).

Guarantees: :func:`rff_convergence` computes in float64 (guarantee ``"none"``: nothing bounds the libm cosines or
the sums). With ``enclose=True`` it also encloses, for the same draws (float64 frequencies, phases and points taken
as exact), every RMSE, the predicted RMSE and the fitted slope in Arb balls (:class:`RFFEnclosure`, ``"rigorous"``):
``w·x`` from exact integer products, cosines, exponentials and sums in ball arithmetic. The slope's standard error
is a statistical estimate, not a numerical bound.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import flint
import numpy as np

from ..feature_maps import as_float_matrix
from ..numerics.exact import ExactData
from .enclosure import Interval, IntervalArray, arb_interval, least_squares_slope

__all__ = [
    "RandomFourierFeatures",
    "rff_expected_mse",
    "RFFConvergence",
    "RFFEnclosure",
    "rff_convergence",
    "ARTICLE_DS",
]

ARTICLE_DS = (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000)
_ENCLOSURE_BITS = 96  # Arb precision of the enclosures: the D-term sums lose at most log2 D of it


def _gamma(gamma, sigma) -> float:
    if (gamma is None) == (sigma is None):
        raise ValueError("RandomFourierFeatures: give exactly one of gamma= (exp(-gamma|x-y|^2)) or sigma= (bandwidth)")
    value = float(gamma) if gamma is not None else 1.0 / (2.0 * float(sigma) ** 2)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"RandomFourierFeatures: need gamma > 0 (or sigma > 0), got gamma={gamma!r}, sigma={sigma!r}")
    return value


class RandomFourierFeatures:
    """Seeded random Fourier feature map of the Gaussian kernel.

    Parameters
    ----------
    n_components : int
        Number of features D (even for ``kind="sincos"``).
    gamma : float, optional
        Kernel ``exp(−γ|x − y|²)``.
    sigma : float, optional
        Bandwidth instead of γ: ``γ = 1/(2σ²)``.
    kind : {"cos", "sincos"}
        See the module docstring.
    random_state : int or numpy.random.Generator, optional
        Seed; the same seed gives the same features (``W`` drawn before ``b``, as in the seed article).

    Attributes (after :meth:`fit`)
    ------------------------------
    frequencies_ : ndarray, shape (D, d) or (D/2, d)
        ``W`` with rows ``w ~ N(0, 2γ I)``.
    phases_ : ndarray, shape (D,) or None
        ``b ~ U(0, 2π)`` (``kind="cos"``).
    """

    def __init__(self, n_components: int, *, gamma=None, sigma=None, kind: str = "cos", random_state=None):
        if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)) or n_components < 1:
            raise ValueError(f"RandomFourierFeatures: n_components must be an integer >= 1, got {n_components!r}")
        if kind not in ("cos", "sincos"):
            raise ValueError(f"RandomFourierFeatures: kind must be 'cos' or 'sincos', got {kind!r}")
        if kind == "sincos" and n_components % 2:
            raise ValueError(f"RandomFourierFeatures: kind='sincos' needs an even n_components, got {n_components}")
        self.n_components = int(n_components)
        self.gamma = _gamma(gamma, sigma)
        self.kind = kind
        self.random_state = random_state

    def fit(self, X) -> "RandomFourierFeatures":
        """Draw the frequencies (and phases) for inputs of X's dimension.

        Parameters
        ----------
        X : array_like, shape (n, d)
        """
        d = as_float_matrix(X, where="RandomFourierFeatures.fit").shape[1]
        rng = np.random.default_rng(self.random_state)
        n_freq = self.n_components if self.kind == "cos" else self.n_components // 2
        self.frequencies_ = rng.normal(0.0, np.sqrt(2.0 * self.gamma), size=(n_freq, d))
        self.phases_ = rng.uniform(0.0, 2.0 * np.pi, size=n_freq) if self.kind == "cos" else None
        return self

    def transform(self, X) -> np.ndarray:
        """Features ``z(x)``, shape (n, D); ``z(x)·z(y)`` estimates ``k(x, y)``."""
        X = as_float_matrix(X, where="RandomFourierFeatures.transform")
        if not hasattr(self, "frequencies_"):
            raise ValueError("RandomFourierFeatures: call fit before transform")
        if X.shape[1] != self.frequencies_.shape[1]:
            raise ValueError(f"RandomFourierFeatures: fitted for {self.frequencies_.shape[1]} columns, X has {X.shape[1]}")
        proj = X @ self.frequencies_.T
        scale = np.sqrt(2.0 / self.n_components)
        if self.kind == "cos":
            return scale * np.cos(proj + self.phases_)
        return scale * np.hstack([np.cos(proj), np.sin(proj)])

    def fit_transform(self, X) -> np.ndarray:
        return self.fit(X).transform(X)


def rff_expected_mse(X, Y, D: int, *, gamma: float, kind: str = "cos") -> float:
    """Exact expected mean (over the pairs (x_i, y_i)) squared error of the D-feature kernel estimate.

    Parameters
    ----------
    X, Y : array_like, shape (n, d)
        Paired points.
    D : int
    gamma : float
    kind : {"cos", "sincos"}

    Returns
    -------
    float
        ``mean_i v_i / D`` with ``v = 1 + k⁴/2 − k²`` ("cos") or ``2((1 + k⁴)/2 − k²)`` ("sincos", D/2
        frequencies).
    """
    k = np.exp(-gamma * np.sum((np.asarray(X, float) - np.asarray(Y, float)) ** 2, axis=1))
    v = 1 + k**4 / 2 - k**2 if kind == "cos" else 1 + k**4 - 2 * k**2
    return float(np.mean(v) / D)


@dataclass(frozen=True)
class RFFConvergence:
    """RMSE of the RFF kernel estimate versus D, and the log-log fit.

    Attributes
    ----------
    Ds : ndarray of int, shape (J,)
    rmse : ndarray, shape (J, T)
        RMSE over the pairs, per D and trial.
    rmse_mean : ndarray, shape (J,)
    slope, intercept : float
        Least-squares fit of log10(rmse_mean) on log10(D) (the seed article's statistic).
    slope_se : float
        Standard error of the slope from the trial-to-trial spread: by the delta method
        ``Var log10(rmse_mean_j) ≈ s_j² / T`` with ``s_j`` the sample SD of ``log10 rmse`` over trials, and
        the slope is the linear combination ``Σ c_j log10 rmse_mean_j``, ``c_j = (x_j − x̄)/Σ(x − x̄)²``.
    predicted_rmse : ndarray, shape (J,)
        ``sqrt(E[MSE])`` from :func:`rff_expected_mse` (exact slope −1/2).
    enclosure : RFFEnclosure or None
        Rigorous intervals of the same numbers (``enclose=True``).
    """

    Ds: np.ndarray
    rmse: np.ndarray
    rmse_mean: np.ndarray
    slope: float
    intercept: float
    slope_se: float
    predicted_rmse: np.ndarray
    enclosure: "RFFEnclosure | None" = None


@dataclass(frozen=True)
class RFFEnclosure:
    """Rigorous enclosures of the protocol's numbers for its draws (module docstring).

    Attributes
    ----------
    rmse : IntervalArray, shape (J, T)
    rmse_mean : IntervalArray, shape (J,)
    predicted_rmse : IntervalArray, shape (J,)
    slope : Interval
        Least-squares slope of log rmse_mean on log D.
    """

    rmse: IntervalArray
    rmse_mean: IntervalArray
    predicted_rmse: IntervalArray
    slope: Interval


def rff_convergence(
    *, gamma: float = 0.5, d: int = 5, n_pairs: int = 200, n_trials: int = 10, Ds=ARTICLE_DS, master_seed: int = 0,
    kind: str = "cos", enclose: bool = False,
) -> RFFConvergence:
    """The seed article's RFF convergence protocol (defaults reproduce it draw for draw).

    ``n_pairs`` pairs (x_i, y_i) ~ N(0, I_d) from ``default_rng(master_seed)`` (X then Y); for each D and
    trial t, ``default_rng(1000·D + t)`` draws W (D×d, N(0, 2γ)) then b (U(0, 2π)); the RMSE over pairs of
    ``z(x_i)·z(y_i) − k(x_i, y_i)`` is averaged over trials and log10 of it fitted against log10 D.

    Parameters
    ----------
    gamma : float
    d, n_pairs, n_trials : int
    Ds : sequence of int
        At least two distinct values.
    master_seed : int
    kind : {"cos", "sincos"}
    enclose : bool
        Also enclose every number in Arb balls (``RFFConvergence.enclosure``); costs ~5 µs per feature and pair
        (about 10 s for the quick protocol, 7 min for the article's).

    Returns
    -------
    RFFConvergence
        With the article's defaults the slope is −0.4998.
    """
    Ds = np.asarray(Ds, dtype=np.int64)
    if Ds.ndim != 1 or len(np.unique(Ds)) < 2 or (Ds < 1).any():
        raise ValueError(f"rff_convergence: Ds must hold at least two distinct positive integers, got {Ds.tolist()}")
    if n_trials < 2:
        raise ValueError(f"rff_convergence: n_trials must be >= 2 to estimate the slope's standard error, got {n_trials}")
    master = np.random.default_rng(master_seed)
    Xp = master.normal(size=(n_pairs, d))
    Yp = master.normal(size=(n_pairs, d))
    k_true = np.exp(-gamma * np.sum((Xp - Yp) ** 2, axis=1))
    rmse = np.empty((len(Ds), n_trials))
    fitted = []
    for j, D in enumerate(Ds):
        for t in range(n_trials):
            rff = RandomFourierFeatures(int(D), gamma=gamma, kind=kind, random_state=1000 * int(D) + t).fit(Xp)
            k_approx = np.sum(rff.transform(Xp) * rff.transform(Yp), axis=1)
            rmse[j, t] = np.sqrt(np.mean((k_approx - k_true) ** 2))
            fitted.append(rff)
    mean = rmse.mean(axis=1)
    x = np.log10(Ds.astype(float))
    slope, intercept = np.polyfit(x, np.log10(mean), 1)
    c = (x - x.mean()) / np.sum((x - x.mean()) ** 2)
    s = np.std(np.log10(rmse), axis=1, ddof=1)
    slope_se = float(np.sqrt(np.sum(c**2 * s**2) / n_trials))
    predicted = np.sqrt([rff_expected_mse(Xp, Yp, int(D), gamma=gamma, kind=kind) for D in Ds])
    enclosure = _enclose(Xp, Yp, gamma, Ds, fitted, n_trials) if enclose else None
    return RFFConvergence(Ds, rmse, mean, float(slope), float(intercept), slope_se, predicted, enclosure)


def _enclose(Xp, Yp, gamma: float, Ds, fitted, n_trials: int) -> RFFEnclosure:
    """The protocol's numbers in Arb balls, for the fitted feature maps (trial-major within each D)."""
    with flint.ctx.workprec(_ENCLOSURE_BITS):
        kernel = _exact_kernel(Xp, Yp, gamma)
        rmse = [[_rmse_ball(Xp, Yp, fitted[j * n_trials + t], kernel) for t in range(n_trials)]
                for j in range(len(Ds))]
        means = [sum(row[1:], row[0]) / n_trials for row in rmse]
        predicted = [_predicted_ball(kernel, int(D), fitted[0].kind) for D in Ds]
        slope = least_squares_slope([flint.arb(int(D)).log() for D in Ds], [m.log() for m in means])
        return RFFEnclosure(IntervalArray.of([[arb_interval(x) for x in row] for row in rmse]),
                            IntervalArray.of([arb_interval(m) for m in means]),
                            IntervalArray.of([arb_interval(p) for p in predicted]), arb_interval(slope))


def _exact_kernel(Xp, Yp, gamma: float) -> list[flint.arb]:
    """exp(−γ|x_i − y_i|²) from the exact squared distances."""
    g = flint.arb(Fraction(gamma).numerator) / Fraction(gamma).denominator
    out = []
    for x, y in zip(Xp, Yp):
        sq = sum((Fraction(float(a)) - Fraction(float(b))) ** 2 for a, b in zip(x, y))
        out.append((-g * flint.arb(flint.fmpq(sq.numerator, sq.denominator))).exp())
    return out


def _features(P: np.ndarray, rff: RandomFourierFeatures) -> list[list[flint.arb]]:
    """z(p) of the exact points for the exact draws: ``w·p`` from integer products, then cos (and sin) in balls."""
    points, freq = ExactData.from_float64(P), ExactData.from_float64(rff.frequencies_)
    products = flint.fmpz_mat(points.mantissas.tolist()) * flint.fmpz_mat(freq.mantissas.tolist()).transpose()
    unit = flint.arb(2) ** (points.exp2 + freq.exp2)
    norm = (flint.arb(2) / rff.n_components).sqrt()
    rows = []
    for i in range(len(P)):
        args = [flint.arb(products[i, k]) * unit for k in range(products.ncols())]
        if rff.kind == "cos":
            rows.append([(a + flint.arb(float(b))).cos() * norm for a, b in zip(args, rff.phases_)])
        else:
            pairs = [a.sin_cos() for a in args]
            rows.append([c * norm for _, c in pairs] + [s * norm for s, _ in pairs])
    return rows


def _rmse_ball(Xp, Yp, rff: RandomFourierFeatures, kernel: list[flint.arb]) -> flint.arb:
    zx, zy = _features(Xp, rff), _features(Yp, rff)
    total = flint.arb(0)
    for a, b, k in zip(zx, zy, kernel):
        residual = sum((u * v for u, v in zip(a, b)), flint.arb(0)) - k
        total += residual * residual
    return (total / len(kernel)).nonnegative_part().sqrt()


def _predicted_ball(kernel: list[flint.arb], D: int, kind: str) -> flint.arb:
    """sqrt(E[MSE]) of :func:`rff_expected_mse` in balls."""
    squares = [k * k for k in kernel]
    v = [1 + s * s / 2 - s if kind == "cos" else 1 + s * s - 2 * s for s in squares]
    return (sum(v[1:], v[0]) / (len(v) * D)).sqrt()
