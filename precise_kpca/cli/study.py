"""``precise-kpca study beyond``: issue 24's findings (eigenprojection predictor, Theorem 1's constant, repeated
eigenvalues) as CSV tables and a summary, regenerated from the results store."""
from __future__ import annotations

import argparse
from pathlib import Path

from .common import UsageError, parse_list

PARTS = ("predictor", "cka", "ties")


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``study`` on the top-level sub-parsers; returns its parser."""
    parser = subparsers.add_parser(
        "study", help="studies beyond the paper (beyond: eigenprojection predictor, CKA constant, ties)",
        description="Run a named study and write its tables. 'beyond' (issue 24): r² of ρ, ρ + spectral gap and "
                    "the first-order constant C_k for the eigenprojection onset and dissonance (k = 1..5); the "
                    "certified Theorem 1 ratio per data set, its counterexample family and an adversarial "
                    "search; the dihedral tie certificates, the forced pairs located in the certified spectrum per σ, "
                    "and the splitting of linear ties.")
    parser.add_argument("name", choices=("beyond",), help="the study")
    parser.add_argument("--data-dir", metavar="DIR", help="folder of the paper's data sets")
    parser.add_argument("--datasets", metavar="A,B,...", help="data sets for the predictor and CKA parts "
                        "(default: every available one)")
    parser.add_argument("--max-rows", type=int, default=150, metavar="N",
                        help="subsample larger sets to N rows, seeded (default 150; the curves cost O(N³))")
    parser.add_argument("--store", metavar="PATH", help="results store (default $PRECISE_KPCA_STORE or the cache)")
    parser.add_argument("--parts", default=",".join(PARTS), metavar="P,...", help=f"subset of {', '.join(PARTS)}")
    parser.add_argument("--out", metavar="DIR", required=True, help="write the CSV tables and summary.md here")
    return parser


def run(args: argparse.Namespace) -> int:
    """Run ``precise-kpca study``; returns the exit status (errors raise, see :func:`precise_kpca.cli.main`)."""
    from ..datasets import available, load
    from ..reports import beyond
    from ..reports.study import load_study_data

    parts = parse_list(args.parts, what="--parts", choices=PARTS)
    if args.max_rows < 3:
        raise UsageError(f"--max-rows must be at least 3, got {args.max_rows}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    names = parse_list(args.datasets, what="--datasets") if args.datasets else available(args.data_dir)
    tables, detail = {}, {}  # detail: CSV only (one row per run of a spectrum), not in summary.md
    if "predictor" in parts or "cka" in parts:
        data = load_study_data(names, data_dir=args.data_dir, max_rows=args.max_rows)
        if "predictor" in parts:
            table = beyond.predictor_table(data, store=args.store)
            tables["predictor_inputs"] = table
            tables["predictor_r2"] = beyond.predictor_comparison(table)
        if "cka" in parts:
            tables["cka_sets"] = beyond.cka_table(data)
            tables["cka_family"] = beyond.cka_family()
            tables["cka_search"] = beyond.cka_search()
    if "ties" in parts:
        ttt = load("tic-tac-toe", data_dir=args.data_dir) if "tic-tac-toe" in available(args.data_dir) else None
        tables["ties_certificates"] = beyond.ties_table(ttt)
        tables["ties_pairs"], detail["ties_pairs_runs"] = beyond.pairs_tables(ttt)
        tables["ties_splitting"] = beyond.splitting_table()
        tables["ties_eigenprojection"] = beyond.tie_measure_table(
            beyond.square_orbits(beyond.SQUARE_POINTS), 2, (-2, 2, 6, 10, 30), "square orbits")
    lines = [f"# study beyond ({', '.join(parts)})", ""]
    for label, table in detail.items():
        table.to_csv(out / f"{label}.csv", index=False)
    for label, table in tables.items():
        table.to_csv(out / f"{label}.csv", index=False)
        lines += [f"## {label}", "", table.to_string(index=False, float_format=lambda v: f"{v:.6g}"), ""]
    (out / "summary.md").write_text("\n".join(lines))
    print("\n".join(lines))
    print(f"wrote {len(tables) + len(detail)} tables and summary.md to {out}")
    return 0
