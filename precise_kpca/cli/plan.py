"""``precise-kpca plan``: the routes a measurement would take (the route table's decision), without running it."""
from __future__ import annotations

import argparse

from .common import add_data_arguments, load_data


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``plan`` on the top-level sub-parsers; returns its parser."""
    parser = subparsers.add_parser(
        "plan", help="which engine computes a measure and what certifies it, before running it",
        description="Print the route table's plan for one measurement: the engines in order, why, and the cheap "
                    "probes they were chosen from (see precise_kpca.measures.routes).",
    )
    add_data_arguments(parser)
    parser.add_argument("--measure", default="eigenvalue",
                        choices=("metric", "eigenvalue", "eigenprojection", "pc", "cka"),
                        help="measure (default eigenvalue)")
    parser.add_argument("--sigma", default="1", help="standardized bandwidth, exact: 2**40, 1/16, 0.25 (default 1)")
    parser.add_argument("--k", type=int, default=1, help="top eigenvalues (eigenprojection, pc)")
    parser.add_argument("--digits", type=int, default=10, help="certified digits requested (default 10)")
    parser.add_argument("--guarantee", choices=("rigorous", "heuristic"), default="rigorous",
                        help="heuristic also accepts the agreement of two precisions as a last resort")
    return parser


def run(args: argparse.Namespace) -> int:
    """Run ``precise-kpca plan``; returns the exit status (errors raise, see :func:`precise_kpca.cli.main`)."""
    from ..measures import plan

    name, X = load_data(args)
    print(f"{name} (N={X.shape[0]}, d={X.shape[1]})")
    print(plan(X, args.measure, args.sigma, k=args.k, digits=args.digits, guarantee=args.guarantee).describe())
    return 0
