"""Side-by-side timings of high-precision symmetric eigensystems on centered Gaussian Grams.

Usage::

    python benchmarks/eigen_bench.py --quick          # N = 60, 200 (about 3 minutes)
    python benchmarks/eigen_bench.py --sizes 60 200 1000 --tier2-sizes 60 200 1000
    python benchmarks/eigen_bench.py --sizes 2000 --tier2-sizes --no-reference   # timing only
    python benchmarks/eigen_bench.py --dataset phoneme --data-dir /work/shared/datasets   # N = 5404, tier 1
    python benchmarks/eigen_bench.py --dataset phoneme --data-dir ... --gram mp --resume    # N = 5404, tier 2

Prints one row per method × N × tier: seconds (median of repeats where cheap), ratio to
``mpmath.eigsy`` at dps 30 (measured where N ≤ --eigsy-max, else extrapolated as N³ from the largest
measured N and marked ≈), ratio to float64 LAPACK ``eigh``, and the digits achieved:

- tier 1: ``-log10(max |λ̂ - λ| / ‖A‖)`` over all eigenvalues and ``-log10 max ‖v̂ - v‖`` over the top k;
- tier 2: the least relative digits over eigenvalues above A's noise floor.

Matrices: ``--gram mp`` (default for Gaussian data) builds ``H K H`` exactly as mpf entries
(:mod:`precise_kpca.testing`, minutes at N = 2000; with ``--dataset`` the same construction
straight into a ``FixedMatrix``, ``centered_gaussian_gram_fixed``, cached, tier 2 by default); ``--gram quad``
(the default for ``--dataset``)
takes the binary128 Gram ``σ_X² H K H`` of :func:`precise_kpca.numerics.binary128_gram.scaled_gaussian_gram_words`
as a ``FixedMatrix`` (``from_words``, no mpf objects; tier 1 only). Its rigorous Frobenius error bound is passed
as ``input_error``: "bounds" then hold for the exact Gram and cannot exceed the binary128 Gram's own digits
relative to ‖A‖ (printed), "given" are the digits for the binary128 matrix as given.

References: mpmath.eigsy at 2·dps + 120 digits for N ≤ --ref-max (independent); above that the same
refinement, tier 1 at dps + 60 digits (two working precisions beyond, labelled ``self+60``), for both tiers. The test matrices
(X = rng.normal(size=(N, 5)), σ = 2**10 median distances) are cached under ``benchmarks/.cache``.
BLAS is limited to one thread unless OPENBLAS_NUM_THREADS is set (the machine is shared; threaded BLAS
spins under load); the thread count used is printed. ``refine`` is
:func:`precise_kpca.numerics.eigen_refine.refine_eigensystem` (float64 eigh, then Ozaki-scheme products on
float64 BLAS, see ``benchmarks/README.md``); the label gives its iterations and largest fixed-point bits.
``--resume`` saves the refinement's state after every iteration under ``benchmarks/.cache`` and resumes an
interrupted run of the same command from it; the seconds printed then add the earlier runs' seconds up to their
last checkpoint (printed separately).
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import math  # noqa: E402
import pickle  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import mpmath  # noqa: E402
import numpy as np  # noqa: E402

from precise_kpca.arith.fixed import FixedMatrix  # noqa: E402
from precise_kpca.testing import (  # noqa: E402
    centered_gaussian_gram,
    centered_gaussian_gram_fixed,
    gaussian_data,
)
from precise_kpca.numerics.eigen_refine import input_bits, refine_eigensystem  # noqa: E402
from precise_kpca.numerics.binary128_gram import scaled_gaussian_gram_words  # noqa: E402

CACHE = Path(__file__).with_name(".cache")
DPS = 30
K = 10


def gram_bits(n: int) -> int:
    """Bits for A: tier 2 needs dps digits below the smallest nonzero eigenvalue (measured: 1e-24.5 of
    λ_max at N = 100, 1e-32 at 200, 1e-56 at 1000, ≈1e-90 expected at 5404) plus 10 digits of margin."""
    grading = 24.5 + 31.5 * math.log(max(n, 100) / 100) / math.log(10)
    return 32 * math.ceil((DPS + 10 + grading) * math.log2(10) / 32)


def gram(n: int, bits: int) -> np.ndarray:
    CACHE.mkdir(exist_ok=True)
    path = CACHE / f"gauss_n{n}_b{bits}.pkl"
    if path.exists():
        return pickle.loads(path.read_bytes())
    A = centered_gaussian_gram(gaussian_data(n, seed=0), bits=bits)
    path.write_bytes(pickle.dumps(A))
    return A


def fixed_gram(name: str, X: np.ndarray, bits: int, workers: int) -> tuple[FixedMatrix, float]:
    """The exact Gram H K H of a data set (σ = 2**10 median distances) to ``bits`` bits as a ``FixedMatrix``
    (:func:`centered_gaussian_gram_fixed`), cached under ``benchmarks/.cache`` (written whole, then renamed);
    returns it and the build seconds (0 when read from the cache)."""
    CACHE.mkdir(exist_ok=True)
    digest = hashlib.blake2b(np.ascontiguousarray(X, dtype=float).tobytes(), digest_size=6).hexdigest()
    path = CACHE / f"{name}_n{len(X)}_b{bits}_{digest}_fixed.npy"  # the data's hash: no stale Gram of other data
    meta = path.with_suffix(".json")
    if path.exists() and meta.exists():
        info = json.loads(meta.read_text())
        return FixedMatrix(np.load(path, mmap_mode="r"), info["exponent"], info["digit_bits"]), 0.0
    t = time.perf_counter()
    F = centered_gaussian_gram_fixed(X, bits=bits, workers=workers)
    seconds = time.perf_counter() - t
    for target, write in ((path, lambda f: np.save(f, F.digits)),
                          (meta, lambda f: f.write(json.dumps({"exponent": F.exponent, "digit_bits": F.digit_bits,
                                                               "seconds": seconds}).encode()))):
        tmp = target.with_name(target.name + ".tmp")
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    return F, seconds


def binary128_gram(X: np.ndarray):
    """The binary128 Gram σ_X² H K H (σ = 2**10 median distances) as a tier-1 ``FixedMatrix``, its error bound
    (Frobenius, A's units), its words ``[hi, lo]`` and the build seconds."""
    t = time.perf_counter()
    g = scaled_gaussian_gram_words(X, 2**10)
    F = FixedMatrix.from_words([g.hi, g.lo], bits=input_bits(len(X), DPS, 1))
    return F, g.error_bound, [g.hi, g.lo], time.perf_counter() - t


def timed(fn, repeats: int):
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def eigsy(A: np.ndarray, dps: int):
    ctx = mpmath.MPContext()
    ctx.dps = dps
    E, Q = ctx.eigsy(ctx.matrix([[ctx.mpf(x) for x in row] for row in A]))
    n = A.shape[0]
    order = sorted(range(n), key=lambda i: -E[i])
    vecs = []
    for j in order[:K]:
        q = [Q[i, j] for i in range(n)]
        big = max(range(n), key=lambda i: (abs(q[i]), -i))
        vecs.append([x if q[big] > 0 else -x for x in q])
    return [E[i] for i in order], vecs


def digits(res, ref_values, ref_vectors, tier: int, noise: float, ref_bounds=None):
    ctx = mpmath.MPContext()
    ctx.prec = 600
    norm = abs(ctx.mpf(ref_values[0]))
    errs = [abs(ctx.mpf(a) - ctx.mpf(b)) for a, b in zip(res.values, ref_values)]
    if tier == 1:
        val = min(_dig(e / norm) for e in errs)
        vec = min(
            _dig(ctx.sqrt(ctx.fsum((ctx.mpf(res.vectors[i, c]) - ctx.mpf(ref_vectors[c][i])) ** 2
                                   for i in range(res.vectors.shape[0]))))
            for c in range(min(K, res.vectors.shape[1]))
        )
        return f"{val:.1f} / vec {vec:.1f}"
    # eigenvalues above A's noise whose reference is itself good to DPS + 2 relative digits
    keep = [abs(v) > noise * norm * 10**DPS and (ref_bounds is None or ref_bounds[i] <= abs(v) * 10.0 ** -(DPS + 2))
            for i, v in enumerate(ref_values)]
    rel = [_dig(e / abs(ctx.mpf(v))) for e, v, k in zip(errs, ref_values, keep) if k]
    return f"{min(rel):.1f} rel ({len(rel)} eigenvalues)"


def bound_digits(res, tier: int, noise: float) -> str:
    """Digits guaranteed by the returned bounds (same measures as :func:`digits`)."""
    norm = abs(res.values[0])
    if tier == 1:
        val = min(_dig(b / norm) for b in res.value_error_bounds)
        vec = min(_dig(b) for b in res.vector_error_bounds[:K])
        out = f"{val:.1f} / vec {vec:.1f}"
        if res.input_error:
            val = min(_dig(b / norm) for b in res.given_value_error_bounds)
            vec = min(_dig(b) for b in res.given_vector_error_bounds[:K])
            out += f" (given binary128 matrix: {val:.1f} / vec {vec:.1f})"
        return out
    rel = [_dig(b / abs(v)) for b, v in zip(res.value_error_bounds, res.values) if abs(v) > noise * norm * 10**DPS]
    return f"{min(rel):.1f} rel"


def _dig(x) -> float:
    return 99.0 if x == 0 else -float(mpmath.log10(x))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="N = 60, 200; tier 2 at N = 60, 200")
    ap.add_argument("--sizes", type=int, nargs="*", default=[60, 200, 1000])
    ap.add_argument("--tier2-sizes", type=int, nargs="*", default=[60, 200, 1000])
    ap.add_argument("--eigsy-max", type=int, default=200, help="largest N timed with mpmath.eigsy")
    ap.add_argument("--ref-max", type=int, default=60, help="largest N with an independent eigsy reference")
    ap.add_argument("--no-reference", action="store_true", help="skip the self+60 reference beyond --ref-max")
    ap.add_argument("--repeats", type=int, default=3, help="repeats (median) of the refinement for N <= 200")
    ap.add_argument("--gram", choices=["mp", "quad"],
                    help="mp: exact mpf Gram (tiers 1, 2); quad: binary128 Gram as a FixedMatrix (tier 1)")
    ap.add_argument("--dataset", help="a data set of precise_kpca.datasets instead of Gaussian data "
                                      "(default --gram quad, tier 1; --gram mp: the exact Gram, tier 2)")
    ap.add_argument("--data-dir", help="data directory for --dataset")
    ap.add_argument("--rows", type=int,
                    help="only the first ROWS examples of --dataset (its large-N behaviour, smaller)")
    ap.add_argument("--tiers", type=int, nargs="+", choices=[1, 2],
                    help="tiers run on --dataset (default: 1 with --gram quad, 2 with --gram mp)")
    ap.add_argument("--gram-workers", type=int, default=2, help="processes building --dataset's exact Gram")
    ap.add_argument("--resume", action="store_true",
                    help="checkpoint each iteration under benchmarks/.cache and resume an interrupted run from it "
                         "(seconds then add the earlier runs' time up to their last checkpoint)")
    ap.add_argument("--debug-bounds", action="store_true", help="print each check's bound components")
    args = ap.parse_args()
    if args.debug_bounds:
        logging.basicConfig(format="  %(message)s")
        logging.getLogger("precise_kpca.numerics.eigen_refine").setLevel(logging.DEBUG)
    if args.quick:
        args.sizes, args.tier2_sizes, args.eigsy_max = [60, 200], [60, 200], 100
    data = None
    if args.dataset:
        from precise_kpca.datasets import load

        data = load(args.dataset, data_dir=args.data_dir)
        if args.rows:
            data = data[: args.rows]
        args.gram = args.gram or "quad"
        tiers = args.tiers or ([1] if args.gram == "quad" else [2])
        args.sizes, args.tier2_sizes = ([len(data)] if t in tiers else [] for t in (1, 2))
    args.gram = args.gram or "mp"
    if args.gram == "quad":
        args.tier2_sizes = []  # binary128 entries: tier 2's relative digits need the mp Gram's extra bits
    eigsy_time = {}
    t64s = {}
    try:
        from threadpoolctl import threadpool_info

        threads = ", ".join(f"{i['internal_api']} {i['num_threads']}" for i in threadpool_info())
    except ImportError:  # pragma: no cover
        threads = os.environ.get("OPENBLAS_NUM_THREADS", "?")
    print(f"BLAS threads: {threads}; dps {DPS}, top-k {K}; gram {args.gram}"
          + (f"; data {args.dataset}" if data is not None else "")
          + (f" (first {len(data)} rows)" if args.rows else ""), flush=True)
    print(f"{'method':<34}{'N':>6}{'tier':>5}{'seconds':>11}{'vs eigsy':>12}{'vs eigh':>10}  digits [reference]",
          flush=True)

    def row(method, n, tier, t, d):
        # eigsy time of a larger N is extrapolated as N³ from the largest measured one (marked ≈)
        if n in eigsy_time:
            ratio = f"{eigsy_time[n] / t:.1f}x"
        elif eigsy_time:
            ref_n = max(eigsy_time)
            ratio = f"≈{eigsy_time[ref_n] * (n / ref_n) ** 3 / t:.0f}x"
        else:
            ratio = "-"
        print(f"{method:<34}{n:>6}{tier:>5}{t:>11.3f}{ratio:>12}{t / t64s[n]:>9.0f}x  {d}", flush=True)

    for n in sorted(set(args.sizes) | set(args.tier2_sizes)):
        input_error = 0.0
        if args.gram == "quad":
            A, input_error, words, t_gram = binary128_gram(data if data is not None else gaussian_data(n, seed=0))
            Af = words[0]
            bits = None
        elif data is not None:
            bits = gram_bits(n)
            A, t_gram = fixed_gram(args.dataset, data, bits, args.gram_workers)
            print(f"exact Gram H K H to {bits} bits: " + (f"built in {t_gram:.1f} s" if t_gram else "from the cache")
                  + f", {A.n_digits} digits of {A.digit_bits} bits", flush=True)
            Af = A.to_float64()
        else:
            bits = gram_bits(n)
            A = gram(n, bits)
            Af = np.vectorize(float, otypes=[float])(A)
        t64s[n], w64 = timed(lambda M=Af: np.linalg.eigh(M), 5 if n <= 2000 else 1)
        if args.gram == "quad":
            # the binary128 Gram's own accuracy relative to ‖A‖₂: Weyl adds it to every eigenvalue bound
            a_norm = float(np.max(np.abs(w64[0])))
            print(f"binary128 Gram: built in {t_gram:.1f} s, ‖A − Â‖_F ≤ {input_error:.3e} = "
                  f"10^{math.log10(input_error / a_norm):.1f} ‖A‖₂: at most {-math.log10(input_error / a_norm):.1f} "
                  "digits relative to ‖A‖ in the bounds for the exact Gram", flush=True)
        del Af, w64
        if args.gram == "quad" and args.no_reference:
            del words  # N = 5404: the refinement needs the memory
        mpf_input = args.gram == "mp" and data is None
        if n <= args.eigsy_max and mpf_input:
            eigsy_time[n], _ = timed(lambda: eigsy(A, DPS), 1)
            row("mpmath.eigsy dps 30", n, "-", eigsy_time[n], "-")
        row("float64 eigh (LAPACK)", n, "-", t64s[n], "-")
        refs = {}
        if n <= args.ref_max and mpf_input:
            refs[1] = refs[2] = (*eigsy(A, 2 * DPS + 120), "eigsy")
        for tier in (1, 2):
            if (tier == 1 and n not in args.sizes) or (tier == 2 and n not in args.tier2_sizes):
                continue
            reps = args.repeats if n <= 200 else 1
            ckpt = CACHE / f"{args.dataset or 'gauss'}_{args.gram}_n{n}_tier{tier}.ckpt" if args.resume else None
            if reps == 1 and args.gram == "quad" and args.no_reference:
                # hand the only reference over: refine_eigensystem frees the input once it has rounded it
                box = [A]
                del A
                t, res = timed(lambda: refine_eigensystem(box.pop(), dps=DPS, tier=tier, input_error=input_error,
                                                          checkpoint=ckpt), 1)
            else:
                t, res = timed(lambda: refine_eigensystem(A, dps=DPS, tier=tier, input_error=input_error,
                                                          checkpoint=ckpt), reps)
            if res.resumed:
                print(f"  resumed at iteration {res.resumed['iteration']} after {res.resumed['seconds']:.1f} s "
                      f"of earlier runs; this run {t:.1f} s", flush=True)
                t += res.resumed["seconds"]
            if tier not in refs and not args.no_reference:
                # one reference for both tiers: all eigenvalues to 10**-90 ‖A‖ (≥ 34 relative digits down
                # to 1e-56 ‖A‖) and the top-k vectors to 90 digits
                # (quad: the binary128 matrix itself, read to the bits dps + 60 needs)
                A_ref = A if args.gram == "mp" else FixedMatrix.from_words(words, bits=input_bits(n, DPS + 60))
                hi = refine_eigensystem(A_ref, dps=DPS + 60, tier=1, k=K)
                del A_ref
                refs[1] = refs[2] = ([v for v in hi.values], [list(hi.vectors[:, c]) for c in range(K)],
                                     "self+60", list(hi.value_error_bounds))
            noise = 2.0 ** -(bits - 24) if bits else 0.0
            if tier in refs:
                d = digits(res, refs[tier][0], refs[tier][1], tier, noise,
                           refs[tier][3] if len(refs[tier]) > 3 else None)
                d = f"{d} [{refs[tier][2]}]"
            else:
                d = "- [no reference]"
            d += f"; bounds {bound_digits(res, tier, noise)}"
            row(f"refine tier {tier} ({res.iterations} it, {res.precision_bits_used} b)", n, tier, t, d)
            if n > 1000:  # per iteration: bits of A / X and how far the bounds were from their targets
                print("  iterations: " + "; ".join(
                    f"A {h['a_bits']} b, X {h['x_bits']} b, {h['seconds']:.0f} s, bounds/target "
                    + ("-" if h["bounds_over_target"] is None else f"{h['bounds_over_target']:.2g}")
                    for h in res.history), flush=True)


if __name__ == "__main__":
    main()
