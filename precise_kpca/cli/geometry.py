"""``precise-kpca geometry``: N, d, median distance d_X, diameter, eccentricity ρ and η of a data set."""
from __future__ import annotations

import argparse
import math

from .common import add_data_arguments, load_data


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``geometry`` on the top-level sub-parsers; returns its parser."""
    parser = subparsers.add_parser(
        "geometry", help="N, d, d_X, diameter, ρ (Eq. 4) and η of a data set",
        description="Distance geometry of the preprocessed data (paper Eq. 4 and Theorem 2).",
    )
    add_data_arguments(parser)
    parser.add_argument("--median", choices=("full", "pairs"), default="full",
                        help="median over all N² distances (full, paper-compatible) or distinct pairs")
    return parser


def run(args: argparse.Namespace) -> int:
    """Run ``precise-kpca geometry``; returns the exit status (errors raise, see :func:`precise_kpca.cli.main`)."""
    from ..numerics import geometry

    name, X = load_data(args)
    g = geometry(X, median=args.median)
    rows = [
        ("data", name),
        ("N", g.n),
        ("d", g.d),
        (f"d_X (median distance, {g.median})", _shown(g.median_distance)),
        ("diameter", _shown(g.diameter)),
        ("rho = diameter / d_X", f"{g.eccentricity:.6g}"),
        ("eta = diameter / min nonzero distance", f"{g.eta_nonzero:.6g}"),
    ]
    if math.isinf(g.eta):
        rows.append(("duplicate rows", "yes (min distance 0; eta uses the smallest nonzero distance)"))
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label:<{width}}  {value}")
    return 0


def _shown(distance) -> str:
    """10 significant digits of a float, or of an mpf beyond the float64 range."""
    if isinstance(distance, float):
        return f"{distance:.10g}"
    import mpmath  # only for distances beyond the float range: --help imports nothing heavy

    return mpmath.nstr(distance, 10)
