"""Issue 19's acceptance sweep: every data set at σ = 2^-4, 2^0, 2^8, 2^20, 2^40, 2^100, rigorous by default.

For each data set of ``--data-dir`` (default ``../shared/datasets``) it computes metric, eigenvalue and
eigenprojection k = 1, 2, 5 (``--k``; those above rank(HX) are left out, as they have no linear counterpart) through :func:`precise_kpca.studies.curves.convergence_curve` with the
results store, so an interrupted run resumes where it stopped; then prints one row per set: points, how many are
rigorous / undetermined / other, the fewest certified digits among determined points, the short points (fewer
digits than requested, which the measurement itself says), the wall time of this call and the stored compute
seconds of its points (which survive a resumed run), and the engines used.

Usage::

    OPENBLAS_NUM_THREADS=1 python benchmarks/rigorous_sweep.py --store sweep.sqlite [--sets wine,kc2] [--max-n 2000]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from precise_kpca import datasets
from precise_kpca.numerics.linear_exact import exact_linear
from precise_kpca.studies.curves import convergence_curve

EXPONENTS = (-4, 0, 8, 20, 40, 100)
MEASURES = ("metric", "eigenvalue", "eigenprojection")


def summarise(name: str, frame: pd.DataFrame, digits: int, seconds: float) -> dict:
    """One table row for a set's points (``frame`` from :func:`convergence_curve`)."""
    determined = frame[frame["guarantee"] == "rigorous"]
    undetermined = frame["normalized"].isna() & (frame["guarantee"] != "rigorous")
    return {
        "set": name,
        "points": len(frame),
        "rigorous": int((frame["guarantee"] == "rigorous").sum()),
        "undetermined": int(undetermined.sum()),
        "other": int(len(frame) - (frame["guarantee"] == "rigorous").sum() - undetermined.sum()),
        "min_digits": float(determined["certified_digits"].min()) if len(determined) else float("nan"),
        "short": int((determined["certified_digits"] < digits).sum()),
        "computed": frame.attrs.get("computed", 0),
        "seconds": round(seconds, 1),
        "point_seconds": round(float(frame["seconds"].sum()), 1),  # as stored: survives a resumed run
        "engines": ",".join(sorted(set(frame["route"].dropna().astype(str).str.split(" (", regex=False).str[0]) - {""})),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets"))
    parser.add_argument("--store", required=True, help="results store (resumable)")
    parser.add_argument("--sets", default="", help="comma list (default: every set in the data directory)")
    parser.add_argument("--k", default="1,2,5")
    parser.add_argument("--digits", type=int, default=10)
    parser.add_argument("--max-n", type=int, default=0, help="skip sets with more rows (0: none skipped)")
    parser.add_argument("--executor", default="local")
    parser.add_argument("--csv", default="", help="also write the table here")
    args = parser.parse_args()
    names = args.sets.split(",") if args.sets else datasets.available(args.data_dir)
    ks = [int(k) for k in args.k.split(",")]
    rows = []
    for name in names:
        X = datasets.load(name, data_dir=args.data_dir)
        if args.max_n and X.shape[0] > args.max_n:
            print(f"{name}: N = {X.shape[0]} > --max-n {args.max_n}, skipped", flush=True)
            continue
        rank = exact_linear(X).rank
        valid = [k for k in ks if k <= rank]  # beyond the rank eigenprojection has no linear counterpart
        start = time.perf_counter()
        frame = convergence_curve(X, EXPONENTS, measures=MEASURES, k=valid, digits=args.digits, store=args.store,
                                  executor=args.executor, progress=False, name=name)
        row = summarise(name, frame, args.digits, time.perf_counter() - start)
        row["N"], row["d"] = X.shape
        row["k"] = ",".join(map(str, valid))
        rows.append(row)
        print(row, flush=True)
    table = pd.DataFrame(rows)
    print(table.to_string(index=False))
    if args.csv:
        table.to_csv(args.csv, index=False)


if __name__ == "__main__":
    main()
