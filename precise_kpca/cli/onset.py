"""``precise-kpca onset``: convergence-onset bandwidth σ*₀ (paper Section IV-A4, Table II)."""
from __future__ import annotations

import argparse
import math

from .common import UsageError, add_data_arguments, load_data


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``onset`` on the top-level sub-parsers; returns its parser."""
    parser = subparsers.add_parser(
        "onset", help="convergence-onset bandwidth σ*₀ of a measure (Table II)",
        description="Smallest tested σ from which the measure stays within 25 % of its 1/σ² asymptote "
                    "(paper Section IV-A4).",
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
    return parser


def run(args: argparse.Namespace) -> int:
    """Run ``precise-kpca onset``; returns the exit status (errors raise, see :func:`precise_kpca.cli.main`)."""
    from ..measures import MEASURES, convergence_onset

    if args.measure not in MEASURES:
        raise UsageError(f"unknown measure {args.measure!r}; choose from {', '.join(MEASURES)}")
    if args.k < 1:
        raise UsageError(f"--k must be a positive integer, got {args.k}")
    if args.digits < 1:
        raise UsageError(f"--digits must be a positive integer, got {args.digits}")
    name, X = load_data(args)
    onset = convergence_onset(X, args.measure, k=args.k, protocol=args.protocol, digits=args.digits,
                              backend=args.backend)
    shown = "256+ (no onset within the tested range)" if math.isinf(onset) else f"{onset:g} (log2 = {math.log2(onset):g})"
    print(f"{name}: {args.measure}{f' k={args.k}' if args.measure in ('eigenprojection', 'pc') else ''} "
          f"onset sigma*_0 = {shown} [protocol {args.protocol}, backend {args.backend}]")
    return 0
