"""``precise-kpca prove [NAME ...]``: run the symbolic verification of the paper's claims (``proofs/``).

``proofs/`` is a top-level folder of the repository, installed as ``precise_kpca.proofs``; a checkout that is
on ``sys.path`` without being installed has it as the top-level package ``proofs``.
"""
from __future__ import annotations

import argparse
import importlib

from .progress import PROGRESS, add_progress_argument, bar


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``prove`` on the top-level sub-parsers; returns its parser."""
    parser = subparsers.add_parser(
        "prove", help="verify the paper's derivations symbolically (sympy); exit 1 if an asserted claim fails",
        description="Print a table: claim, method, status (verified / sharper / refuted), evidence. "
                    "Needs sympy (the [proofs] extra); the repository's proofs/README.md maps claims to modules.",
    )
    parser.add_argument("names", nargs="*", metavar="NAME", help="proof modules to run (default: all)")
    add_progress_argument(parser)
    return parser


def proof_registry():
    """``proofs.registry``, installed (``precise_kpca.proofs``) or from a checkout (``proofs``).

    Raises
    ------
    MissingExtra
        Without sympy (the ``[proofs]`` extra).
    """
    from ..extras import require

    require("proofs", "precise-kpca prove")
    try:
        return importlib.import_module("precise_kpca.proofs.registry")
    except ModuleNotFoundError as exc:
        if exc.name not in ("precise_kpca.proofs", "precise_kpca.proofs.registry"):
            raise  # a missing dependency of the proofs, not a checkout
        return importlib.import_module("proofs.registry")


def run(args: argparse.Namespace) -> int:
    """Run ``precise-kpca prove``; returns the exit status (1 when an asserted claim fails)."""
    registry = proof_registry()
    MODULES, report, run_all = registry.MODULES, registry.report, registry.run_all
    unknown = [name for name in args.names if name not in MODULES]
    if unknown:
        raise ValueError(f"unknown proof module(s) {', '.join(unknown)}; choose from {', '.join(MODULES)}")
    results = []
    for name in bar(args.names or list(MODULES), desc="proof modules", unit="module", mode=PROGRESS[args.progress]):
        results += run_all([name])
    return report(results)
