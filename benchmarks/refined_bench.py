"""Cost and digits of the refined-enclosure route (measures/refined_enclosed.py) against the binary128 route.

    OPENBLAS_NUM_THREADS=1 python benchmarks/refined_bench.py --n 10 100 400 --digits 30

For each N and σ: the binary128 enclosure's certified digits, then the refined route's digits, working precision
and seconds (process CPU and wall) for eigenvalue, eigenprojection (k = 3) and pc (k = 3); the first measure at
each σ pays for the Gram and the refinement, the others reuse them. Data: N rows of 5 normal attributes with
spreads 3, 2, 1, 0.5, 0.25 (seed 0).
"""
from __future__ import annotations

import argparse
import time
import warnings
from fractions import Fraction

import numpy as np

from precise_kpca.errors import InsufficientPrecision
from precise_kpca.measures import engines
from precise_kpca.measures.routes import _ROUTES

MEASURES = (("eigenvalue", 1), ("eigenprojection", 3), ("pc", 3))
SIGMAS = (Fraction(3, 32), Fraction(1), Fraction(64))


def _run(engine, X, name, sigma, k, digits):
    return engines.ENGINES[engine](X, name, sigma, k=k, digits=digits, tau=1e-6, aggregate="mean", median="full",
                                   start=time.perf_counter(), route=_ROUTES[engine])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[10, 100, 400])
    parser.add_argument("--digits", type=int, default=30)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print(f"{'N':>5} {'sigma':>6} {'measure':>16} {'b128':>5} {'refined':>8} {'dps':>4} {'cpu s':>7} {'wall s':>7}")
    for n in args.n:
        X = np.random.default_rng(0).normal(size=(n, 5)) * np.array([3.0, 2.0, 1.0, 0.5, 0.25])
        for sigma in SIGMAS:
            for name, k in MEASURES:
                try:
                    b128 = _run("binary128-enclosure", X, name, sigma, k, args.digits).certified_digits
                except InsufficientPrecision:
                    b128 = 0
                cpu, wall = time.process_time(), time.perf_counter()
                try:
                    m = _run("refined-enclosure", X, name, sigma, k, args.digits)
                    digits, dps = m.certified_digits, m.route.detail.split(" digits")[0].split()[-1]
                except InsufficientPrecision as exc:
                    digits, dps = 0, f"needs {exc.needed_dps}"
                print(f"{n:>5} {str(sigma):>6} {name + (f' k={k}' if k > 1 else ''):>16} {b128:>5} {digits:>8} "
                      f"{dps:>4} {time.process_time() - cpu:>7.1f} {time.perf_counter() - wall:>7.1f}", flush=True)


if __name__ == "__main__":
    main()
