"""``precise-kpca onset``: convergence-onset bandwidth σ*₀ (paper Section IV-A4, Table II).

The points go through the results store like ``curves`` (same keys), so an onset after a curves or reproduce run
of the same data reuses their points, and a second onset computes nothing.
"""
from __future__ import annotations

import argparse
import math
import sys

from .common import UsageError, add_data_arguments, load_data
from .confirm import add_yes_argument, confirmer
from .progress import PROGRESS, add_progress_argument


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``onset`` on the top-level sub-parsers; returns its parser."""
    parser = subparsers.add_parser(
        "onset", help="convergence-onset bandwidth σ*₀ of a measure (Table II)",
        description="Smallest tested σ from which the measure stays within 25 % of its 1/σ² asymptote "
                    "(paper Section IV-A4). Points are kept in (and reused from) the results store.",
    )
    add_data_arguments(parser)
    parser.add_argument("--measure", default="metric", help="measure (default metric)")
    parser.add_argument("--k", type=int, default=1, help="rank for eigenprojection/pc (default 1)")
    parser.add_argument("--protocol", choices=("paper", "extended"), default="paper",
                        help="paper: the paper's grid 2^-4..2^8 and asymptote at 2^7; extended: asymptote "
                             "from the largest certified σ of an extended grid")
    parser.add_argument("--digits", type=int, default=6, help="certified digits per point (default 6)")
    parser.add_argument("--backend", choices=("auto", "float64-naive"), default="auto",
                        help="auto (certified) or float64-naive (what the paper's float64 computation gives)")
    parser.add_argument("--store", metavar="PATH",
                        help="results database (default: $PRECISE_KPCA_STORE, else the user cache)")
    parser.add_argument("--executor", default="local", metavar="EXEC",
                        help="local (process pool, default), serial, or dask://HOST:PORT")
    add_progress_argument(parser)
    add_yes_argument(parser)
    return parser


def stored_onset(X, name: str, args: argparse.Namespace) -> float:
    """σ*₀ from the points of the protocol's grid, computed through the results store (as
    :func:`precise_kpca.measures.convergence_onset` defines it).

    Raises
    ------
    Undetermined
        A point the onset depends on has no value (its reason is the proof).
    """
    from ..errors import Undetermined
    from ..measures.onset import EXTENDED_GRID, PAPER_FIT_LOG2_SIGMA, PAPER_GRID, onset_from_curve
    from ..studies import convergence_curve

    grid, fit = (PAPER_GRID, PAPER_FIT_LOG2_SIGMA) if args.protocol == "paper" else (EXTENDED_GRID, max(EXTENDED_GRID))
    frame = convergence_curve(X, list(grid), measures=[args.measure], k=args.k, digits=args.digits,
                              backend=args.backend, store=args.store, executor=args.executor,
                              progress=PROGRESS[args.progress], name=name, confirm=confirmer(args))
    frame = frame.sort_values("log2_sigma")
    values = frame["normalized"].astype(float).tolist()
    onset = onset_from_curve(frame["log2_sigma"].tolist(), values, fit)
    if math.isnan(onset):
        missing = frame[frame["normalized"].astype(float).isna()]
        where = ", ".join(f"2**{p}" for p in missing["log2_sigma"])
        raise Undetermined(f"the convergence onset of {args.measure} (k={args.k}, protocol {args.protocol!r}) depends "
                           f"on points that are not determined, at sigma = {where}",
                           proof=missing["reason"].iloc[0] if len(missing) else "")
    return onset


def run(args: argparse.Namespace) -> int:
    """Run ``precise-kpca onset``; returns the exit status (errors raise, see :func:`precise_kpca.cli.main`)."""
    from ..measures import MEASURES
    from ..studies.cost import Declined

    if args.measure not in MEASURES:
        raise UsageError(f"unknown measure {args.measure!r}; choose from {', '.join(MEASURES)}")
    if args.k < 1:
        raise UsageError(f"--k must be a positive integer, got {args.k}")
    if args.digits < 1:
        raise UsageError(f"--digits must be a positive integer, got {args.digits}")
    name, X = load_data(args)
    try:
        onset = stored_onset(X, name, args)
    except Declined as exc:
        print(f"precise-kpca onset: {exc}", file=sys.stderr)
        return 1
    shown = "256+ (no onset within the tested range)" if math.isinf(onset) else f"{onset:g} (log2 = {math.log2(onset):g})"
    print(f"{name}: {args.measure}{f' k={args.k}' if args.measure in ('eigenprojection', 'pc') else ''} "
          f"onset sigma*_0 = {shown} [protocol {args.protocol}, backend {args.backend}]")
    return 0
