"""Cost and certified digits of the binary128-enclosure route (``measures/enclosed.py``) on the larger sets.

    OPENBLAS_NUM_THREADS=1 python benchmarks/binary128_bench.py --sets kc1 --log2-sigma 0 6 --json after.json
    OPENBLAS_NUM_THREADS=1 python benchmarks/binary128_bench.py --compare before.json after.json

Run it once on each tree (``PYTHONPATH=<tree>``), then ``--compare`` prints the two side by side: per σ the
CPU seconds of the σ's eigen points (eigenvalue, eigenprojection and pc for k = 1..5, the order of a study
column; they share one enclosure per σ) and per point the certified digits of each tree. A set's σ-independent
set-up (the exact squared distances and linear Gram, read into binary128 once per process) is timed apart as the
warm-up. ``--rows`` takes a seeded subsample (e.g. spambase at 3000 rows).
"""
from __future__ import annotations

import argparse
import json
import time
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np

from precise_kpca.datasets import load
from precise_kpca.measures import measure
from precise_kpca.numerics.binary128_gram import kept_words

POINTS = [("eigenvalue", 1)] + [(m, k) for m in ("eigenprojection", "pc") for k in range(1, 6)]


def _data(name: str, data_dir: str, rows: int | None) -> np.ndarray:
    X = np.asarray(load(name, data_dir=data_dir))
    if rows and rows < X.shape[0]:
        keep = np.sort(np.random.default_rng(0).choice(X.shape[0], size=rows, replace=False))
        X = np.ascontiguousarray(X[keep])
    return X


def run(args) -> dict:
    warnings.simplefilter("ignore")
    out = {}
    for name in args.sets:
        X = _data(name, args.data_dir, args.rows)
        start = time.process_time()
        for linear in (False, True):  # the σ-independent reads of D and L
            kept_words(X, Fraction(2) ** 40, linear=linear)
        label = f"{name}[{X.shape[0]}]"
        out[label] = {"warm-up": time.process_time() - start, "sigma": {}}
        print(f"{label} warm-up {out[label]['warm-up']:.1f} s", flush=True)
        for p in args.log2_sigma:
            column, seconds = {}, 0.0
            for m, k in POINTS:
                start = time.process_time()
                r = measure(X, m, sigma=Fraction(2) ** p, k=k, digits=args.digits)
                seconds += time.process_time() - start
                column[f"{m} k={k}"] = [r.certified_digits, r.route.engine]
            out[label]["sigma"][str(p)] = {"seconds": seconds, "points": column}
            digits = [d for d, _ in column.values()]
            print(f"{label} 2^{p}: {seconds:.1f} s CPU, digits {min(digits)}..{max(digits)}", flush=True)
    return out


def compare(before: dict, after: dict) -> None:
    total = [0.0, 0.0]
    for label in before:
        if label not in after:
            continue
        b, a = before[label], after[label]
        print(f"{label}: warm-up {b['warm-up']:.1f} -> {a['warm-up']:.1f} s")
        for p in b["sigma"]:
            if p not in a["sigma"]:
                continue
            sb, sa = b["sigma"][p], a["sigma"][p]
            total[0] += sb["seconds"]
            total[1] += sa["seconds"]
            drops = [f"{point} {sb['points'][point][0]}->{sa['points'][point][0]}" for point in sb["points"]
                     if sa["points"][point][0] < sb["points"][point][0]]
            digits = [(sb["points"][q][0], sa["points"][q][0]) for q in sb["points"]]
            print(f"  2^{p:>3}: {sb['seconds']:7.1f} -> {sa['seconds']:7.1f} s CPU ({sb['seconds'] / sa['seconds']:.1f}x)"
                  f"  digits min {min(d for d, _ in digits)} -> {min(d for _, d in digits)}"
                  + ("  fewer: " + ", ".join(drops) if drops else ""))
    print(f"columns: {total[0]:.1f} -> {total[1]:.1f} s CPU ({total[0] / max(total[1], 1e-9):.1f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default="../shared/datasets")
    parser.add_argument("--sets", nargs="+", default=["kc1"])
    parser.add_argument("--rows", type=int, help="a seeded subsample of this many rows")
    parser.add_argument("--log2-sigma", type=int, nargs="+", default=[0, 6])
    parser.add_argument("--digits", type=int, default=8)
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="print two runs side by side")
    args = parser.parse_args()
    if args.compare:
        compare(*(json.loads(Path(f).read_text()) for f in args.compare))
        return
    out = run(args)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
