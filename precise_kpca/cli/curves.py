"""``precise-kpca curves``: convergence curves with certified digits, CSV/Parquet tables and PNG plots."""
from __future__ import annotations

import argparse
import sys
import time

from .common import (UsageError, add_data_arguments, load_data, open_store, output_folder, parse_list,
                     parse_positive_ints, parse_range)
from .confirm import add_yes_argument, confirmer

PROGRESS = {"auto": True, "always": "always", "never": False}


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``curves`` on the top-level sub-parsers; returns its parser."""
    parser = subparsers.add_parser(
        "curves",
        help="convergence curves (Figs 3, 5, 6, 8) with certified digits",
        description="Normalized log2 convergence measures at σ = 2**p, every point certified to --digits digits "
                    "and kept in the results store (a rerun computes only missing points). Writes curves.csv, "
                    "curves.parquet (with the [parquet] extra), PNG plots and provenance.json (versions, git "
                    "commit, date, machine, file hashes) into --out and prints a summary.",
    )
    add_data_arguments(parser)
    parser.add_argument("--log2-sigma", default="-4:40", metavar="RANGE",
                        help="exponents p: START:STOP (inclusive, step 1), START:STOP:STEP, or a comma list "
                             "(default -4:40; write --log2-sigma=-4:40)")
    parser.add_argument("--measures", default="metric,eigenvalue,eigenprojection", metavar="LIST",
                        help="comma-separated measures (default metric,eigenvalue,eigenprojection)")
    parser.add_argument("--k", default="1", metavar="LIST", help="ranks for eigenprojection/pc, e.g. 1,2,5 (default 1)")
    parser.add_argument("--digits", type=int, default=10, help="certified digits requested per point (default 10)")
    parser.add_argument("--backend", default="auto", choices=("auto", "arb", "float64", "mp", "float64-naive"),
                        help="measure backend (default auto: the rigorous route table)")
    parser.add_argument("--dps", type=int, metavar="DIGITS", help="working precision of --backend mp")
    parser.add_argument("--guarantee", choices=("rigorous", "heuristic"), default="rigorous",
                        help="rigorous (default): enclosures only; heuristic: also two agreeing precisions")
    parser.add_argument("--median", choices=("full", "pairs"), default="full",
                        help="median distance that standardizes sigma (default full, as the paper)")
    parser.add_argument("--out", default=".", metavar="DIR", help="output folder (default: current folder)")
    parser.add_argument("--store", metavar="PATH",
                        help="results database (default: $PRECISE_KPCA_STORE, else the user cache)")
    parser.add_argument("--executor", default="local", metavar="EXEC",
                        help="local (process pool, default), serial, or dask://HOST:PORT")
    parser.add_argument("--no-naive", action="store_true", help="skip the float64-naive overlay")
    parser.add_argument("--progress", choices=tuple(PROGRESS), default="auto",
                        help="progress bar on stderr: auto (when a terminal), always, never")
    add_yes_argument(parser)
    return parser


def summary(frame, seconds: float) -> str:
    """Text table: per curve, points, how many are rigorous, the fewest certified digits among those, backends
    and compute time; then totals by guarantee."""
    import pandas as pd

    from ..studies.curves import guarantee_summary

    certified = frame[frame["requested_backend"] != "float64-naive"]
    lines = [f"{'measure':<16}{'k':>3}{'points':>8}{'rigorous':>10}{'their min digits':>18}{'backends':>16}"
             f"{'compute s':>11}"]
    for (measure, k), rows in certified.groupby(["measure", "k"], dropna=False, sort=False):
        backends = ",".join(sorted(set(rows["backend"])))
        guarantees = guarantee_summary(rows)
        fewest = "-" if guarantees.fewest_rigorous_digits is None else guarantees.fewest_rigorous_digits
        lines.append(f"{measure:<16}{'-' if pd.isna(k) else int(k):>3}{len(rows):>8}{guarantees.counts['rigorous']:>10}"
                     f"{fewest:>18}{backends:>16}{rows['seconds'].sum():>11.1f}")
    attrs = frame.attrs
    lines.append(f"{len(certified)} certified points, of which {guarantee_summary(certified)}; "
                 f"{len(frame) - len(certified)} float64-naive; "
                 f"computed {attrs.get('computed', '?')}, reused {attrs.get('reused', '?')} from the store; "
                 f"wall time {seconds:.1f} s")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run ``precise-kpca curves``; returns the exit status (errors raise, see :func:`precise_kpca.cli.main`)."""
    from ..extras import has_extra, missing_message
    from ..measures import MEASURES
    from ..plots import save_curve_plots
    from ..reports.provenance import write_provenance
    from ..studies import convergence_curve
    from ..studies.cost import Declined

    exponents = parse_range(args.log2_sigma)
    measures = parse_list(args.measures, what="measure", choices=MEASURES)
    ks = parse_positive_ints(args.k, what="--k")
    if args.digits < 1:
        raise UsageError(f"--digits must be a positive integer, got {args.digits}")
    if args.backend == "mp" and args.dps is None:
        raise UsageError("--backend mp needs --dps DIGITS (its working precision)")
    out = output_folder(args.out)
    name, X = load_data(args)
    start = time.perf_counter()
    try:
        with open_store(args.store) as store:
            frame = convergence_curve(
                X, exponents, measures=measures, k=ks, digits=args.digits, backend=args.backend, store=store,
                executor=args.executor, progress=PROGRESS[args.progress], naive_overlay=not args.no_naive,
                name=name, dps=args.dps, guarantee=args.guarantee, median=args.median, confirm=confirmer(args),
            )
    except Declined as exc:
        print(f"precise-kpca curves: {exc}", file=sys.stderr)
        return 1
    seconds = time.perf_counter() - start
    tables = [out / "curves.csv"]
    frame.to_csv(tables[0], index=False)
    if has_extra("parquet"):
        tables.append(out / "curves.parquet")
        frame.to_parquet(tables[1], index=False)
    plots = save_curve_plots(frame, out, title=f"{name} (N={X.shape[0]}, d={X.shape[1]})", digits=args.digits)
    sidecar = write_provenance(out, [*tables, *plots])
    print(summary(frame, seconds))
    print(f"wrote {', '.join(map(str, tables))}, {len(plots)} PNG plots and {sidecar.name} in {out}")
    if not has_extra("parquet"):
        print(f"curves.parquet not written: {missing_message('parquet', 'the Parquet copy')}")
    return 0
