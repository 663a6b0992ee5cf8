"""Driver: the entry point :func:`refine_eigensystem`, the input's reading to fixed point, and the iteration
(products, bounds, correction, update; checkpoints and the best checked basis)."""
from __future__ import annotations

import logging
import math
import os
import time

import numpy as np

from ...arith.fixed import FixedMatrix, chunked_digit_bits
from ...errors import NoConvergence
from ..eigen_fixed import mpf_matrix_to_fixed
from . import checkpoint as _checkpoint
from .bounds import bounds, wanted_accuracy
from .correction import correction, updated_basis
from .helpers import _exact
from .products import Products, products
from .result import RefinedEigensystem, build_result, keep
from .rounding import _NOISE_MARGIN, _NOISE_ROUNDINGS, _NORM_SAFETY

LOG2_10 = math.log2(10)
_START_BITS = 64  # float64 eigenvectors fit in 64-bit fixed point (smaller entries lose only absolute 2**-64)
_MAX_ITERATIONS = 40
# tier 1: bits of A beyond target, 2 log2 N (Frobenius-to-entry factors of the products) and the top-k gaps
_A_GUARD = 8
_MAX_GAP_BITS = 50  # tier 1's allowance for ‖A‖ / (smallest top-k gap): beyond 2**50 the float64 gaps say nothing
_LOG = logging.getLogger(__name__)  # INFO: one line per iteration (runs of hours at N = 5404); DEBUG: timings


def refine_eigensystem(A, *, dps: int, tier: int = 1, k: int | None = None, max_bits: int | None = None,
                       input_error: float = 0.0, checkpoint: str | os.PathLike | None = None):
    """Eigenvalues and eigenvectors of a symmetric matrix to ``dps`` digits, with error bounds.

    Parameters
    ----------
    A : ndarray of mpmath mpf, shape (N, N), or FixedMatrix
        Symmetric matrix, read exactly: mpf entries (any mpmath context), or a fixed-point matrix such as
        ``FixedMatrix.from_words([hi, lo], bits=input_bits(N, dps, tier))`` of a double-word Gram
        (:func:`precise_kpca.numerics.binary128_gram.scaled_gaussian_gram_words`), whose ``error_bound`` counts as
        rounding of the input. A nonsymmetric input is symmetrised and the asymmetry is added to the bounds.
    dps : int
        Target decimal digits.
    tier : {1, 2}
        1: every eigenvalue to ``dps`` digits relative to ``‖A‖₂`` and the top ``k`` eigenvectors to
        ``dps`` digits (those whose eigenvalue exceeds ``2**24 10**-dps ‖A‖₂``: below that tier 1 treats the
        spectrum as one cluster and the returned bounds say how well such vectors are known). 2: every eigenpair
        to ``dps`` digits relative to its own eigenvalue, as far as the precision carried by ``A``'s entries
        allows: eigenvalues within ``2**24`` of A's noise get absolute bounds of that size, the noise being the
        larger of A's read rounding and one half step of its grid (``N 2**-(bits+1)`` of ``max |A|``, also for
        an ``A`` given exactly: the basis carries no more bits than A).
    k : int, optional
        Number of leading eigenvectors returned by tier 1 (default ``min(N, 10)``); tier 2 returns all.
    max_bits : int, optional
        Cap on the fixed-point bits used for ``A`` (default: tier 1 what ``dps`` needs, tier 2 all the
        bits the entries carry).
    input_error : float, optional
        Bound on ``‖A_true - A‖₂`` (in ``A``'s units; a Frobenius bound will do, e.g. ``Binary128Gram.error_bound``)
        when ``A`` stands for a matrix known only to that accuracy. The refinement targets ``A`` as given; the
        returned ``value_error_bounds`` and ``vector_error_bounds`` hold for ``A_true`` (Weyl; Davis–Kahan with
        the residual and the gaps widened by it), ``given_*`` for ``A`` itself.
    checkpoint : str or path-like, optional
        File for the state after each iteration (:mod:`.checkpoint`: written whole, then renamed). A call
        with the same ``A`` and arguments resumes from it (``RefinedEigensystem.resumed``); another ``A`` or other
        arguments raise ValueError. It is removed when the refinement returns.

    Returns
    -------
    RefinedEigensystem
    """
    started = time.perf_counter()
    A, n, k = _checked_arguments(A, dps, tier, k, input_error)
    A_read, exp2, a_bits, read_rounding = _read_fixed(A, n, dps, tier, max_bits)
    del A  # the refiner may round A_read: no second copy of the input's digits
    scaled_error = _scaled_input_error(input_error, exp2 + a_bits)
    # the slice GEMMs use the caller's BLAS threads (threadpoolctl / OPENBLAS_NUM_THREADS)
    refiner = _Refiner(A_read, n, exp2, a_bits, dps, tier, k, max_bits, read_rounding, scaled_error)
    del A_read  # the refiner holds A rounded to the bits it needs (GBs at N = 5404)
    if checkpoint is not None:
        refiner.checkpoint = (checkpoint, started)
    result = refiner.run()
    if checkpoint is not None:
        _checkpoint.remove(checkpoint)
    return result


def _checked_arguments(A, dps, tier, k, input_error):
    """``(A, n, k)``: A as a ``FixedMatrix`` or an object array, its order and tier 1's k (ValueError on bad ones)."""
    if tier not in (1, 2):
        raise ValueError(f"tier must be 1 or 2, got {tier!r}")
    if not isinstance(dps, (int, np.integer)) or dps < 1:
        raise ValueError(f"dps must be a positive integer, got {dps!r}")
    if not (isinstance(input_error, (int, float, np.floating)) and math.isfinite(input_error) and input_error >= 0):
        raise ValueError(f"input_error must be a finite nonnegative float, got {input_error!r}")
    if isinstance(A, FixedMatrix):
        if A.shape[0] != A.shape[1]:
            raise ValueError(f"A must be a square matrix, got shape {A.shape}")
        n = A.shape[0]
    else:
        A = np.asarray(A, dtype=object)
        if A.ndim != 2 or A.shape[0] != A.shape[1]:
            raise ValueError(f"A must be a square matrix, got shape {A.shape}")
        n = A.shape[0]
    k = min(n, 10) if k is None else int(k)
    if tier == 1 and not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and N={n}, got {k}")
    return A, n, k


def _read_fixed(A, n, dps, tier, max_bits):
    """``(A_read, exp2, a_bits, read_rounding)``: A in the refiner's units (see :func:`_normalised_fixed`), read
    to the bits the tier needs (at most ``max_bits``), and a bound on the reading's ‖ΔA‖₂."""
    if isinstance(A, FixedMatrix):
        A_read, exp2, a_bits, read_rounding = _normalised_fixed(A)
        if max_bits is not None and max_bits < a_bits:
            A_read = _exact(A_read.rounded(A_read.exponent + max_bits))
            read_rounding += n * 2.0 ** -(max_bits + 1)
            exp2, a_bits = exp2 + a_bits - max_bits, max_bits
        return A_read, exp2, a_bits, read_rounding
    a_bits = input_bits(n, dps, tier)
    if max_bits is not None:
        a_bits = max_bits if a_bits is None else min(a_bits, max_bits)
    A_read, exp2, a_bits = mpf_matrix_to_fixed(A, a_bits)
    # ‖ΔA‖₂ ≤ ‖ΔA‖_F ≤ n 2**-(a_bits+1) (normalised units)
    return A_read, exp2, a_bits, n * 2.0 ** -(a_bits + 1)


def _scaled_input_error(input_error, unit_exp: int) -> float:
    """``input_error`` in normalised units (``2**unit_exp`` ≈ max |A|): A's exponent can lie far outside
    float64's range (σ beyond 2**500); ValueError where the error is far larger than A itself."""
    try:
        scaled_error = math.ldexp(float(input_error), -unit_exp) * _NORM_SAFETY if input_error else 0.0
    except OverflowError:
        scaled_error = math.inf
    if not math.isfinite(scaled_error):
        raise ValueError(f"input_error={input_error!r} is far larger than A itself (its unit is 2**{unit_exp})")
    return scaled_error


def input_bits(n: int, dps: int, tier: int = 1) -> int | None:
    """Fixed-point bits below ``max |A|`` that :func:`refine_eigensystem` reads (tier 1), ``None`` for all (tier 2).

    Tier 1 reads enough for the largest top-k gap allowance (50 bits) and then rounds to what the float64 gaps
    ask for; build a ``FixedMatrix`` input with these ``bits`` (more only cost memory).
    """
    if tier != 1:
        return None
    return math.ceil(dps * LOG2_10) + 2 * max(1, math.ceil(math.log2(n))) + _A_GUARD + _MAX_GAP_BITS


def _normalised_fixed(F: FixedMatrix):
    """A ``FixedMatrix`` input in the refiner's units: ``(A_read, exp2, a_bits, read_rounding)`` with ``A_read``
    of exponent 1 on the grid ``2**-a_bits`` and ``F = A_read 2**(exp2 + a_bits)``; ``read_rounding`` bounds
    ``‖F_represented - F‖₂`` through F's entrywise ``error_bound`` (Frobenius ≤ n max)."""
    n = F.shape[0]
    shift = 1 - F.exponent
    A_read = FixedMatrix(F.digits, 1, F.digit_bits, 0.0)
    a_bits = -A_read.ulp_exp2
    exp2 = F.exponent - 1 - a_bits
    read_rounding = n * math.ldexp(float(F.error_bound), shift) * _NORM_SAFETY
    return A_read, exp2, a_bits, read_rounding


class _Refiner:
    """State of one refinement: fixed-point A, basis X, precision schedule (the stage functions of
    :mod:`.products`, :mod:`.correction`, :mod:`.bounds`, :mod:`.result` and :mod:`.checkpoint` read it as ``ref``)."""

    def __init__(self, A_read, n, exp2, a_bits, dps, tier, k, max_bits, read_rounding, input_error):
        self.n, self.exp2, self.dps, self.tier, self.k = n, exp2, dps, tier, k
        # normalised units: 2**(exp2 + a_bits) ≈ max |A|; A_read = Z 2**-a_bits there
        self.unit_exp = exp2 + a_bits
        self.asym = 0.0
        # reading A to fixed point is a symmetric perturbation (after symmetrising: the mean of two such),
        # read_rounding bounds its ‖ΔA‖₂; input_error (‖A_true - A‖₂) enters only the returned bounds
        self.input_error = input_error
        if not np.array_equal(A_read.digits, A_read.digits.transpose(0, 2, 1)):
            # 2A_sym = A + Aᵀ exactly (units unchanged: one more fractional bit); the skew part is a
            # perturbation of norm ≤ ‖A - Aᵀ‖_F / 2
            Z, z_exp = A_read.to_integers()
            self.asym = float(np.linalg.norm((A_read - A_read.T).to_float64())) / 2 * _NORM_SAFETY
            A_read = FixedMatrix.from_integers(Z + Z.T, z_exp - 1)
            self.exp2 = exp2 - 1
            a_bits += 1
        read_rounding += self.asym
        A_float = A_read.to_float64()
        w, V = np.linalg.eigh(A_float)
        order = np.argsort(-w, kind="stable")
        self.V0 = V[:, order]
        del V
        self.a_norm = float(np.max(np.abs(w)))
        del A_float
        self.target = 10.0**-dps
        # digits of A and X: the widest the products take without re-splitting (22 bits on inner chunks of at
        # most 2048 beyond N = 2048: at N = 5404 about 10 % fewer slice GEMMs than 21 bits)
        self.digit_bits = chunked_digit_bits(n)
        if tier == 1:
            target_bits = math.ceil(dps * LOG2_10)
            log2n = max(1, math.ceil(math.log2(n)))
            want = target_bits + 2 * log2n + _A_GUARD + _gap_bits_from_values(w[order], k)
            if max_bits is not None:
                want = min(want, max_bits)
            if want < a_bits:
                # round to the grid 2**-want (normalised units): one more symmetric perturbation
                A_read = _exact(A_read.rounded(A_read.exponent + want, digit_bits=self.digit_bits))
                read_rounding += n * 2.0 ** -(want + 1)
                a_bits = want
        # exactly, in the refinement's digit width (on the same grid)
        A_read = A_read.rounded(A_read.exponent + a_bits, digit_bits=self.digit_bits)
        self.a_bits = a_bits
        self.A_full = _exact(A_read)
        self.a_rounding = read_rounding
        # What the refinement resolves: A's own rounding, and at least one half step of its grid (X carries no
        # more bits than A, so an exactly given A is resolved no further than one rounded to the same grid;
        # without this floor an exact zero eigenvalue would want a zero bound)
        self.resolution = max(read_rounding, n * 2.0 ** -(a_bits + 1))
        # Eigenvalues within a few hundred roundings of A's fixed point are noise; for tier 1 so is everything
        # far below the absolute target. They form one cluster whose block is rotated, never split.
        self.noise = _NOISE_ROUNDINGS * self.resolution
        if tier == 1:
            self.noise = max(self.noise, _NOISE_MARGIN * self.target * self.a_norm)
        self.history = []
        self.checkpoint = None  # (path, perf_counter at the call's start) when the state is saved per iteration

    def _vector_targets(self, pr: Products, order) -> np.ndarray:
        """Indices whose vectors must reach the target: tier 1 the top k above the noise (eigenvalues within
        2**24 targets of zero have no tier-1 vectors), tier 2 those above A's precision."""
        if self.tier == 1:
            top = order[: self.k]
            return top[np.abs(pr.theta_hi[top]) > self.noise]
        return np.flatnonzero(np.abs(pr.theta_hi) > self.resolution * _NOISE_MARGIN / self.target)

    def _done(self, pr: Products, order, vb, vec) -> bool:
        vectors_ok = np.all(vec[self._vector_targets(pr, order)] <= self.target)
        return bool(np.all(vb <= wanted_accuracy(self, pr)) and vectors_ok)

    # -- the iteration ----------------------------------------------------------------------------
    def run(self) -> RefinedEigensystem:
        """Products, bounds, correction and update per iteration until the bounds meet their targets or stop
        improving; the result is built from the best checked basis."""
        n = self.n
        # tier 1: X's rounding enters eigenvalues quadratically and vectors as 2**-x_bits / gap (gap bits are
        # in a_bits); tier 2 keeps 16 bits beyond A
        log2n = max(1, math.ceil(math.log2(n)))
        x_cap = self.a_bits - log2n - 8 if self.tier == 1 else self.a_bits
        X, x_bits, start, bits_used, stall, best, saved = self._start()
        for it in range(start, _MAX_ITERATIONS + 1):
            it_clock = time.perf_counter()
            a_bits = self._product_bits(x_bits)
            clock = time.perf_counter()
            pr = products(self, X, x_bits, a_bits)
            bits_used = max(bits_used, x_bits, a_bits)
            _debug_time(f"products (A {a_bits} b, X {x_bits} b)", clock)
            clock = time.perf_counter()
            bnd = bounds(self, pr) if a_bits == self.a_bits else None
            _debug_time("bounds", clock)
            if bnd is not None:
                score, done = self._score(pr, bnd)
                if best is None or done or score < best[0]:
                    best, stall = (score, it, keep(self, X, x_bits, pr, bnd)), 0
                else:
                    stall += 1  # bounds stopped improving: the precision of A is exhausted
                if done or stall >= 3 or it == _MAX_ITERATIONS:
                    break
            clock = time.perf_counter()
            W, new_order, e_max, in_cluster = correction(self, pr)
            _debug_time(f"correction ({in_cluster} clustered)", clock)
            self.history.append(
                {"a_bits": a_bits, "x_bits": x_bits, "max_correction": e_max, "clustered": in_cluster,
                 "bounds_over_target": score if bnd is not None else None}
            )
            del pr
            # precision doubles per iteration: convergence is at most quadratic, and graded spectra
            # need the higher precision to resolve their next eigenvalue group
            # and no finer than the products just used can steer (W is only as good as S: 2**-a_bits)
            new_bits = min(x_cap, 2 * x_bits, a_bits + 64)
            clock = time.perf_counter()
            X = updated_basis(X, W, new_order, new_bits)
            del W
            _debug_time("update", clock)
            x_bits = new_bits
            self._iteration_done(it, it_clock, X, x_bits, bits_used, stall, best)
        if best is None:
            raise NoConvergence("refine_eigensystem: no basis was close enough to orthonormal to bound",
                                remedy="a larger dps or tier 1 (the matrix may carry too few bits)")
        _, it, kept = best
        del X, best
        pr = bnd = None  # a break leaves the last products alive
        self.A_full = None  # the result needs the kept basis only (A and X are GBs each at N = 5404)
        result = build_result(self, kept, it, bits_used)
        if saved is not None:
            result.resumed = saved
        return result

    def _start(self):
        """``(X, x_bits, iteration, bits_used, stall, best, resumed)``: the float64 eigenvectors at 64 bits, or the
        state of a checkpoint (``resumed``: its iteration and earlier seconds, None for a fresh start)."""
        saved = _checkpoint.resumed_state(self)
        if saved is None:
            x_bits = _START_BITS
            X = _exact(FixedMatrix.from_float64(self.V0, bits=x_bits, digit_bits=self.digit_bits))
            start, bits_used, stall = 0, 0, 0
            best = None  # (score, iteration, what the result needs) of the best checked basis
            self.rotated_scale = None
        else:
            # popped, not read: the loaded basis and best basis are GBs each at N = 5404 and must not outlive X
            X, x_bits, start, bits_used, stall, best = (saved.pop(key) for key in
                                                        ("X", "x_bits", "iteration", "bits_used", "stall", "best"))
            self.rotated_scale, self.history = saved.pop("rotated_scale"), saved.pop("history")
            saved = {"iteration": start, "seconds": saved["seconds"]}
            _LOG.info("refine_eigensystem N=%d tier %d: resumed after iteration %d (%.1f s before)", self.n,
                      self.tier, start, saved["seconds"])
        self.V0 = None
        return X, x_bits, start, bits_used, stall, best, saved

    def _product_bits(self, x_bits: int) -> int:
        """Bits of A the next products use: 48 beyond X's, and while tier 2 peels a graded cluster no more than
        resolve its next level."""
        a_bits = min(self.a_bits, x_bits + 48)
        if self.tier == 2 and self.rotated_scale is not None:
            # a graded cluster is being peeled: its next level is resolved by products accurate to 2**-53
            # of the block just rotated (plus 40 guard bits); the full precision waits for the last steps
            need = math.ceil(math.log2(max(self.a_norm, 1e-300) / self.rotated_scale)) + 53 + 40
            a_bits = min(a_bits, max(need, 2 * _START_BITS))
        return a_bits

    def _score(self, pr: Products, bnd) -> tuple[float, bool]:
        """The checked basis's largest ratio of a bound to its target (eigenvalues and wanted vectors), and
        whether every bound meets its target."""
        order, vb, vec, _ = bnd
        vec_cols = self._vector_targets(pr, order)
        with np.errstate(divide="ignore", invalid="ignore"):  # 10**-dps underflows past dps 323
            score = max(float(np.max(vb / wanted_accuracy(self, pr))),
                        float(np.max(vec[vec_cols], initial=0.0)) / max(self.target, 1e-300))
        return score, self._done(pr, order, vb, vec)

    def _iteration_done(self, it, it_clock, X, x_bits, bits_used, stall, best) -> None:
        """The iteration's seconds in its history entry and the log; the state saved when checkpointing."""
        h = self.history[-1]
        h["seconds"] = time.perf_counter() - it_clock
        _LOG.info("refine_eigensystem N=%d tier %d: iteration %d (A %d b, X %d b, %d clustered) in %.1f s; "
                  "next X %d b", self.n, self.tier, it + 1, h["a_bits"], h["x_bits"], h["clustered"], h["seconds"],
                  x_bits)
        if self.checkpoint is not None:
            _checkpoint.save_state(self, {"X": X, "x_bits": x_bits, "iteration": it + 1, "bits_used": bits_used,
                                          "stall": stall, "best": best, "rotated_scale": self.rotated_scale,
                                          "history": self.history})


def _debug_time(what: str, since: float) -> None:
    _LOG.debug("%s: %.1f s", what, time.perf_counter() - since)


def _gap_bits_from_values(w: np.ndarray, k: int) -> int:
    """Bits of ``‖A‖ / gap`` over the top-k of descending float64 eigenvalues (capped at 50)."""
    scale = max(abs(w[0]), abs(w[-1]))
    if scale == 0 or len(w) < 2:
        return 0
    gaps = np.abs(np.diff(w))
    near = np.minimum(np.concatenate(([np.inf], gaps)), np.concatenate((gaps, [np.inf])))[:k]
    ratio = scale / max(np.min(near), scale * 2.0**-_MAX_GAP_BITS)
    return int(math.ceil(min(float(_MAX_GAP_BITS), max(0.0, math.log2(ratio)))))
