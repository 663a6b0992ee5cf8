"""Projected wall time of the 30-set ``precise-kpca reproduce`` on 2 cores (issue 20, "Speed"), from timed σ-columns.

    OPENBLAS_NUM_THREADS=1 python benchmarks/reproduce_bench.py --data-dir /work/shared/datasets
    python benchmarks/reproduce_bench.py --datasets wine,kc1 --max-n 800        # a subset, larger sets scaled

The study: every data set at log2 σ = −4…8 and 10, 12, …, 30 (24 bandwidths); per σ the measures metric,
eigenvalue, eigenprojection and pc for k = 1..5 (k ≤ rank L), cka, each certified to ``--digits`` (the study's 8)
and recomputed float64-naive (the overlay). A σ-column is one σ's points in one process, computed as the study's
workers compute them (:func:`precise_kpca.studies.curves.compute_bundle`, certified bundle then naive bundle),
each point timed in process CPU seconds and labelled by the engine of its result.

Which columns are timed: the route table (:func:`precise_kpca.measures.plan`, cheap probes) gives each σ of the grid
a signature — the first engine of every measure — and the middle σ of each group of equal signatures is timed for
all of them (a data set's σ-independent set-up, paid once per worker, is timed apart, as the ``warm-up``). Sets of
more than ``--max-n`` rows are timed on seeded subsamples of max-n/2 and max-n rows and each column projected to the
full N with the exponent of the two (clipped to [2, 3]: O(N²) Grams and products, O(N³) eigensolvers).

Printed: per set N, d, the warm-up, the projected seconds of its 24 columns and their split by engine; the total
CPU, its split by engine, and the projected wall on 2 cores (CPU / 2: the study's bundles are independent and
run largest N first; the largest set's share bounds the finish). Speed is measured here, never asserted in a test.
"""
from __future__ import annotations

import argparse
import json
import math
import time
import warnings
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import numpy as np

from precise_kpca.datasets import load
from precise_kpca.measures import plan
from precise_kpca.numerics.linear_exact import exact_linear
from precise_kpca.studies.curves import PointTask, compute_point
from precise_kpca.studies.store import NAIVE_BACKEND, NO_K, PointKey

GRID = tuple(range(-4, 9)) + tuple(range(10, 31, 2))
RANKED = ("eigenprojection", "pc")
MEASURES = ("metric", "eigenvalue", "eigenprojection", "pc", "cka")
KS = (1, 2, 3, 4, 5)
CORES = 2


def column_tasks(name: str, rank: int, p: int, digits: int, measures, naive: bool) -> list[PointTask]:
    """The points of one σ-column: certified ones, then the naive overlay (as the study bundles them)."""
    sigma = str(Fraction(2) ** p)
    runs = [("auto", digits)] + ([(NAIVE_BACKEND, 0)] if naive else [])
    tasks = []
    for backend, d in runs:
        for measure in measures:
            for k in ([k for k in KS if k <= rank] if measure in RANKED else [NO_K]):
                tasks.append(PointTask(PointKey(name, measure, k, sigma, backend, d), p))
    return tasks


def time_column(X: np.ndarray, tasks) -> dict:
    """CPU seconds of each task of a column, summed per engine (``naive`` for the overlay)."""
    split = defaultdict(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for task in tasks:
            start = time.process_time()
            record = compute_point(X, task)
            engine = (record["route"].split() or ["none"])[0]
            split[engine] += time.process_time() - start
    return dict(split)


def signatures(X: np.ndarray, digits: int, measures, rank: int) -> dict[int, tuple]:
    """Each grid σ's first engine per measure (k = min(5, rank) for the ranked ones)."""
    out = {}
    for p in GRID:
        sig = []
        for measure in measures:
            k = min(5, rank) if measure in RANKED else 1
            sig.append(plan(X, measure, Fraction(2) ** p, k=k, digits=digits).steps[0].engine)
        out[p] = tuple(sig)
    return out


def representatives(sig: dict[int, tuple]) -> dict[int, list[int]]:
    """Middle σ of each maximal run of grid points with one signature → the grid points it stands for."""
    groups, current = [], [GRID[0]]
    for p in GRID[1:]:
        if sig[p] == sig[current[-1]]:
            current.append(p)
        else:
            groups.append(current)
            current = [p]
    groups.append(current)
    return {g[len(g) // 2]: g for g in groups}


def subsample(X: np.ndarray, rows: int, seed: int = 0) -> np.ndarray:
    keep = np.sort(np.random.default_rng(seed).choice(X.shape[0], size=rows, replace=False))
    return np.ascontiguousarray(X[keep])


def time_set(name: str, X: np.ndarray, args) -> dict:
    """Warm-up and projected column seconds (per engine) of one data set."""
    rank = exact_linear(X).rank
    sig = signatures(X, args.digits, args.measures, rank)
    reps = representatives(sig)
    n = X.shape[0]
    sizes = [n] if n <= args.max_n else [args.max_n // 2, args.max_n]
    timed = {}
    for rows in sizes:
        Y = X if rows == n else subsample(X, rows)
        r = exact_linear(Y).rank
        start = time.process_time()
        time_column(Y, column_tasks(name, r, 40, args.digits, args.measures, args.naive))  # σ-independent parts
        warm = time.process_time() - start
        columns = {p: time_column(Y, column_tasks(name, r, p, args.digits, args.measures, args.naive)) for p in reps}
        timed[rows] = (warm, columns)
    if len(sizes) == 1:
        warm, columns = timed[n]
        scale = {p: {e: 1.0 for e in c} for p, c in columns.items()}
    else:
        (w1, c1), (w2, c2) = timed[sizes[0]], timed[sizes[1]]
        ratio = math.log(n / sizes[1])
        grow = math.log(sizes[1] / sizes[0])
        expo = lambda a, b: min(3.0, max(2.0, math.log(max(b, 1e-6) / max(a, 1e-6)) / grow))
        warm = w2 * math.exp(expo(w1, w2) * ratio)
        columns = c2
        scale = {p: {e: math.exp(expo(c1[p].get(e, 0.0), c2[p][e]) * ratio) for e in c2[p]} for p in c2}
    total = defaultdict(float)
    for p, group in reps.items():
        for engine, seconds in columns[p].items():
            total[engine] += seconds * scale[p][engine] * len(group)
    return {"n": n, "d": X.shape[1], "rank": rank, "warm": warm, "engines": dict(total),
            "timed_at": sizes, "groups": {str(p): g for p, g in reps.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default="/work/shared/datasets")
    parser.add_argument("--datasets", help="comma list (default: all of the manifest)")
    parser.add_argument("--max-n", type=int, default=1000, help="time larger sets on subsamples (default 1000)")
    parser.add_argument("--digits", type=int, default=8)
    parser.add_argument("--measures", default=",".join(MEASURES))
    parser.add_argument("--no-naive", dest="naive", action="store_false")
    parser.add_argument("--json", help="also write the per-set results here")
    args = parser.parse_args()
    args.measures = args.measures.split(",")
    if args.datasets:
        names = args.datasets.split(",")
    else:
        manifest = json.loads((Path(args.data_dir) / "manifest.json").read_text())
        names = [entry["name"] for entry in manifest["datasets"]]
    data = {name: load(name, data_dir=args.data_dir) for name in names}
    rows = {}
    for name in sorted(names, key=lambda s: data[s].shape[0]):
        rows[name] = time_set(name, data[name], args)
        r = rows[name]
        split = ", ".join(f"{e} {s:.0f}" for e, s in sorted(r["engines"].items(), key=lambda kv: -kv[1]))
        print(f"{name:<34}{r['n']:>6}{r['d']:>5}  warm-up {r['warm']:7.1f} s  columns {sum(r['engines'].values()):8.1f} s"
              f"  ({split}){'  [scaled from ' + str(r['timed_at']) + ']' if len(r['timed_at']) > 1 else ''}",
              flush=True)
    engines = defaultdict(float)
    for r in rows.values():
        for e, s in r["engines"].items():
            engines[e] += s
    warm = sum(r["warm"] for r in rows.values()) * CORES  # each worker pays a set's set-up once
    cpu = sum(engines.values()) + warm
    print(f"\nper engine (CPU s): " + ", ".join(f"{e} {s:.0f}" for e, s in sorted(engines.items(), key=lambda kv: -kv[1]))
          + f", warm-up {warm:.0f}")
    largest = max(rows.values(), key=lambda r: sum(r["engines"].values()))
    print(f"total CPU {cpu:.0f} s = {cpu / 3600:.2f} h; projected wall on {CORES} cores {cpu / CORES / 3600:.2f} h "
          f"(largest set alone {sum(largest['engines'].values()) / 3600:.2f} h CPU)")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
