"""``precise-kpca store``: check, repair, export or back up a results store."""
from __future__ import annotations

import argparse

ACTIONS = ("check", "repair", "export", "backup")


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``store`` on the top-level sub-parsers; returns its parser."""
    parser = subparsers.add_parser(
        "store", help="check, repair, export or back up a results store",
        description="check: SQLite's integrity check and every row's checksum, value and interval (exit 1 when "
                    "damaged). repair: keep every intact row in a new store at PATH, the damaged file moved aside. "
                    "export: the points as CSV (--csv) or Parquet (--parquet). backup: a consistent copy (SQLite's "
                    "online backup, safe while sweeps write).",
    )
    parser.add_argument("action", choices=ACTIONS)
    parser.add_argument("path", metavar="PATH", nargs="?",
                        help="the store (default: $PRECISE_KPCA_STORE, else the user cache)")
    parser.add_argument("dest", metavar="DEST", nargs="?", help="backup: the new file")
    parser.add_argument("--csv", metavar="FILE", help="export: write the points as CSV")
    parser.add_argument("--parquet", metavar="FILE", help="export: write the points as Parquet")
    return parser


def run(args: argparse.Namespace) -> int:
    """Run ``precise-kpca store``; returns the exit status (errors raise, see :func:`precise_kpca.cli.main`)."""
    from ..studies.store import ResultsStore, check, default_path, repair
    from .common import UsageError

    path = args.path or str(default_path())
    if args.action == "check":
        report = check(path)
        print(report)
        return 0 if report.ok else 1
    if args.action == "repair":
        damaged, kept, dropped = repair(path)
        print(f"{path}: kept {kept} points; damaged file moved to {damaged}")
        for line in dropped:
            print(f"  dropped row {line}")
        return 0
    if args.action == "backup":
        if not args.dest:
            raise UsageError("store backup needs DEST, the new file: precise-kpca store backup PATH DEST")
        with ResultsStore(path, readonly=True) as store:
            print(f"wrote {store.backup(args.dest)}")
        return 0
    if not (args.csv or args.parquet):
        raise UsageError("store export needs --csv FILE and/or --parquet FILE")
    with ResultsStore(path, readonly=True) as store:
        written = ([store.export_csv(args.csv)] if args.csv else []) + (
            [store.export_parquet(args.parquet)] if args.parquet else [])
    print("wrote " + ", ".join(map(str, written)))
    return 0
