"""``precise-kpca prove [NAME ...]``: run the symbolic verification of the paper's claims (``proofs/``)."""
from __future__ import annotations

import argparse

from .progress import PROGRESS, add_progress_argument, bar


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "prove", help="verify the paper's derivations symbolically (sympy); exit 1 if an asserted claim fails",
        description="Print a table: claim, method, status (verified / sharper / refuted), evidence. "
                    "See proofs/README.md for the claim-to-module map.",
    )
    parser.add_argument("names", nargs="*", metavar="NAME", help="proof modules to run (default: all)")
    add_progress_argument(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    from proofs.registry import MODULES, report, run_all

    unknown = [name for name in args.names if name not in MODULES]
    if unknown:
        raise ValueError(f"unknown proof module(s) {', '.join(unknown)}; choose from {', '.join(MODULES)}")
    results = []
    for name in bar(args.names or list(MODULES), desc="proof modules", unit="module", mode=PROGRESS[args.progress]):
        results += run_all([name])
    return report(results)
