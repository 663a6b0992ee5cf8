"""``precise-kpca reproduce``: the paper's whole study (Tables I–IV, Figs 1–8, report.md), resumable."""
from __future__ import annotations

import argparse
import sys
import time

from .common import UsageError, open_store, output_folder, parse_list, parse_positive_ints, parse_range
from .confirm import add_yes_argument, confirmer

PROGRESS = {"auto": True, "always": "always", "never": False}


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``reproduce`` on the top-level sub-parsers; returns its parser."""
    parser = subparsers.add_parser(
        "reproduce", help="the paper's study: Tables I-IV, Figs 1-8 and report.md, extended past 2^7",
        description="Every (data set, σ, measure) point certified and recomputed in float64-naive, kept in the "
                    "results store (a rerun computes only missing points); then tables (CSV), figures (PNG) and "
                    "report.md with the paper's numbers side by side, in --out.",
    )
    parser.add_argument("--datasets", metavar="LIST", help="comma-separated names (default: every available set)")
    parser.add_argument("--max-log2-sigma", type=int, default=40, metavar="P",
                        help="largest log2 σ of the grid -4..P (default 40; at least 8, the paper's grid)")
    parser.add_argument("--log2-sigma", metavar="RANGE",
                        help="explicit grid instead of -4..P, e.g. 5:9 (the paper protocol needs 7)")
    parser.add_argument("--k", default="1,2,3,4,5", metavar="LIST", help="eigenprojection ranks (default 1,2,3,4,5)")
    parser.add_argument("--k-counts", choices=("eigenvectors", "distinct"), default="eigenvectors",
                        help="read --k as top linear eigenvectors (default) or top distinct linear eigenvalues (the "
                             "paper's text); both readings are computed and compared in report.md")
    parser.add_argument("--digits", type=int, default=8, help="certified digits per point (default 8)")
    parser.add_argument("--max-rows", type=int, metavar="M", help="subsample larger sets to M rows (seeded)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the subsample (default 0)")
    parser.add_argument("--executor", default="local", metavar="EXEC",
                        help="local (process pool, default), serial, or dask://HOST:PORT")
    parser.add_argument("--out", default="report", metavar="DIR", help="report directory (default ./report)")
    parser.add_argument("--store", metavar="PATH",
                        help="results database (default: $PRECISE_KPCA_STORE, else the user cache)")
    parser.add_argument("--data-dir", metavar="DIR", help="data directory (default: $PRECISE_KPCA_DATA, then the "
                                                          "user cache)")
    parser.add_argument("--retry-uncertified", action="store_true",
                        help="recompute every stored point that is not rigorous to the requested digits (the "
                             "study's requests are backend auto, whose stored points are reused only when rigorous "
                             "to the requested digits in any case)")
    parser.add_argument("--progress", choices=tuple(PROGRESS), default="auto",
                        help="progress bar on stderr: auto (when a terminal), always, never")
    add_yes_argument(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    """Run ``precise-kpca reproduce``; returns the exit status (errors raise, see :func:`precise_kpca.cli.main`)."""
    from ..datasets import available
    from ..reports import reproduce
    from ..studies.cost import Declined
    from ..studies.curves import NAIVE_BACKEND, guarantee_summary

    names = parse_list(args.datasets, what="data set", choices=available(args.data_dir)) if args.datasets else None
    if args.log2_sigma:
        grid = parse_range(args.log2_sigma)
    else:
        if args.max_log2_sigma < 8:
            raise UsageError(f"--max-log2-sigma must be at least 8 (the paper's grid is -4..8), got {args.max_log2_sigma}")
        grid = list(range(-4, args.max_log2_sigma + 1))
    ks = parse_positive_ints(args.k, what="--k")
    if args.digits < 1:
        raise UsageError(f"--digits must be a positive integer, got {args.digits}")
    if args.max_rows is not None and args.max_rows < 3:
        raise UsageError(f"--max-rows must be at least 3, got {args.max_rows}")
    output_folder(args.out)
    start = time.perf_counter()
    try:
        with open_store(args.store) as store:
            result = reproduce(names, out_dir=args.out, log2_sigmas=grid, ks=ks, digits=args.digits,
                               max_rows=args.max_rows, seed=args.seed, data_dir=args.data_dir, store=store,
                               executor=args.executor, progress=PROGRESS[args.progress],
                               retry_uncertified=args.retry_uncertified, k_counts=args.k_counts,
                               confirm=confirmer(args))
    except Declined as exc:
        print(f"precise-kpca reproduce: {exc}", file=sys.stderr)
        return 1
    stats, table2 = result.stats, result.table2
    print(f"Table I: {int(result.table1['match'].sum())}/{len(result.table1)} data sets match the paper")
    if not table2.empty:
        for column, rows in table2.groupby("column", sort=False):
            print(f"Table II {column}: {int(rows['match'].sum())}/{len(rows)} cells match (certified), "
                  f"{int(rows['naive_match'].sum())}/{len(rows)} (float64-naive)")
    certified = result.curves[result.curves["requested_backend"] != NAIVE_BACKEND]
    print(f"certified points: {len(certified)}, of which {guarantee_summary(certified)}")
    speedup = f", parallel speed-up {stats.speedup:.2f}" if stats.computed else ""
    print(f"points: computed {stats.computed}, reused {stats.reused} from the store; compute wall {stats.wall_seconds:.1f} s "
          f"on {stats.executor}, serial sum {stats.point_seconds:.1f} s{speedup}; total {time.perf_counter() - start:.1f} s")
    print(f"wrote {len(result.files)} files to {args.out} (report.md, tables, figures)")
    return 0
