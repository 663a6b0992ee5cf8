"""Cost and certified digits of the rigorous measures where Rayleigh–Ritz on exact g×g products dominates.

    OPENBLAS_NUM_THREADS=1 python benchmarks/ritz_bench.py --data-dir ../shared/datasets
    OPENBLAS_NUM_THREADS=1 python benchmarks/ritz_bench.py --sets wine boston --log2-sigma 0 8 20

Run it once on each tree (``PYTHONPATH=<tree>``) and compare: one line per point with the route, certified digits
and wall seconds (fresh process state per run; the first measure of a set pays for the shared work). The
hill-valley points are the lead's: a 500-row subsample (seed 0) of the 1212×100 set, the eigenvalue measure (at σ = 1
a g = 100 Li–Li block: 196 s with exact rational solves, 192 s of them in ``perturbed_enclosure._ritz``).
"""
from __future__ import annotations

import argparse
import time
import warnings
from fractions import Fraction

import numpy as np

from precise_kpca.datasets import load
from precise_kpca.measures import measure

MEASURES = (("eigenvalue", None), ("eigenprojection", 5), ("pc", 5))


def _data(name: str, data_dir: str) -> np.ndarray:
    X = np.asarray(load(name, data_dir=data_dir))
    if name == "hill-valley":
        keep = np.sort(np.random.default_rng(0).choice(X.shape[0], size=500, replace=False))
        X = np.ascontiguousarray(X[keep])
    return X


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default="../shared/datasets")
    parser.add_argument("--sets", nargs="+", default=["hill-valley", "wine", "boston"])
    parser.add_argument("--log2-sigma", type=int, nargs="+", default=[0, 8, 20])
    parser.add_argument("--digits", type=int, default=8)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print(f"{'set':>12} {'log2 σ':>6} {'measure':>16} {'digits':>6} {'wall s':>8}  route")
    for name in args.sets:
        X = _data(name, args.data_dir)
        measures = MEASURES[:1] if name == "hill-valley" else MEASURES  # its eigenvectors alone take minutes
        points = [(p, m, k) for p in args.log2_sigma for m, k in measures]
        for p, m, k in points:
            start = time.perf_counter()
            r = measure(X, m, sigma=Fraction(2) ** p, digits=args.digits, **({"k": k} if k else {}))
            print(f"{name:>12} {p:>6} {m + (f' k={k}' if k else ''):>16} {r.certified_digits:>6} "
                  f"{time.perf_counter() - start:>8.1f}  {r.route.engine}", flush=True)


if __name__ == "__main__":
    main()
