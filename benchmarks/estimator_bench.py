"""PreciseKernelPCA against scikit-learn's KernelPCA: wall time of fit and transform, and their ratio.

Both estimators get the same data, the same bandwidth (KernelPCA's gamma = PreciseKernelPCA's gamma_) and the same
number of components; scikit-learn keeps its default ``eigen_solver="auto"``. At σ = 1 both are valid; at σ = 2^30
scikit-learn's exp(−u) has rounded to 1 (its components are noise) while ours are not: the ratio there is the
price of staying right. Each configuration runs twice: with ``enclose=True`` (the eigenvalues
rigorously enclosed: one more N×N eigensystem and exact products) and with the default ``enclose=False`` (what KernelPCA
computes, no proof). Each figure is the median of ``--repeat`` runs; the machine's other load is not controlled
(run with OPENBLAS_NUM_THREADS=1 for a like-for-like single-thread comparison).

    python benchmarks/estimator_bench.py                       # wine (178 rows) and a 1000-row Gaussian cloud
    python benchmarks/estimator_bench.py --rows 2000 --components 5 --repeat 5
"""
from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np
from scipy.sparse.linalg import ArpackError
from sklearn.decomposition import KernelPCA

from precise_kpca import PreciseKernelPCA
from precise_kpca.datasets import load

SIGMAS = ("1", "2**30")


def _median_seconds(action, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def compare(name: str, X: np.ndarray, sigma: str, components: int, repeat: int, enclose: bool) -> str:
    """One line: fit and transform seconds of both estimators and ours / theirs."""
    train, test = X[::2], X[1::2]
    ours = PreciseKernelPCA(components, sigma=sigma, enclose=enclose)
    fit_ours = _median_seconds(lambda: ours.fit(train), repeat)
    theirs, note = KernelPCA(components, kernel="rbf", gamma=ours.gamma_), ""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # at 2^30 scikit-learn warns about its all-zero spectrum
        try:
            fit_theirs = _median_seconds(lambda: theirs.fit(train), repeat)
        except ArpackError:  # its centered Gram is exactly 0 at 2^30: ARPACK cannot start
            theirs, note = KernelPCA(components, kernel="rbf", gamma=ours.gamma_, eigen_solver="dense"), \
                "  (sklearn: ARPACK failed on its all-zero Gram; dense)"
            fit_theirs = _median_seconds(lambda: theirs.fit(train), repeat)
        transform_theirs = _median_seconds(lambda: theirs.transform(test), repeat)
    transform_ours = _median_seconds(lambda: ours.transform(test), repeat)
    return (f"{name:<14}{train.shape[0]:>6}{sigma:>7}{components:>4}{str(enclose):>8}  {ours.backend_:<8}"
            f"{fit_ours:>9.4f}{fit_theirs:>9.4f}{fit_ours / fit_theirs:>7.2f}"
            f"{transform_ours:>9.4f}{transform_theirs:>9.4f}{transform_ours / transform_theirs:>7.2f}{note}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2000, help="rows of the Gaussian cloud (half train, half test)")
    parser.add_argument("--components", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cloud = np.random.default_rng(0).normal(size=(args.rows, 8)) * np.linspace(1, 3, 8)
    print(f"{'data':<14}{'N':>6}{'sigma':>7}{'k':>4}{'enclose':>8}  {'backend':<8}{'fit ours':>9}{'sklearn':>9}{'ratio':>7}"
          f"{'tr ours':>9}{'sklearn':>9}{'ratio':>7}   (seconds, median of {args.repeat})")
    for name, X in (("wine", load("wine")), ("gaussian-8d", cloud)):
        for sigma in SIGMAS:
            for enclose in (True, False):
                print(compare(name, X, sigma, args.components, args.repeat, enclose), flush=True)


if __name__ == "__main__":
    main()
