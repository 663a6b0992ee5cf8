"""``precise-kpca data list`` and ``precise-kpca data fetch NAME|all``: the paper's data sets, anywhere.

``list`` prints the packaged registry (Table I values, OpenML id, licence) and which sets the data directory
holds; ``fetch`` downloads sets from OpenML (:func:`precise_kpca.datasets.fetch.fetch`), checks them against
Table I and writes those that match into the data directory. Offline, it says so in one line (exit status 2).
"""
from __future__ import annotations

import argparse


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``data`` on the top-level sub-parsers; returns its parser."""
    parser = subparsers.add_parser(
        "data", help="the paper's data sets: list them, or fetch them from OpenML into the data directory",
        description="The registry of the paper's 30 data sets ships with the package; fetch downloads them from "
                    "OpenML (through scikit-learn's download cache), checks N, the one-hot attribute count and ρ "
                    "against Table I, and writes each set that matches into the data directory, where every "
                    "command then finds it by name.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="the registry: Table I values, OpenML id, licence, and what is here",
                                 description="One line per registered data set; 'here' marks those the data "
                                             "directory holds.")
    fetching = actions.add_parser("fetch", help="download NAME (or all) from OpenML, check it against Table I",
                                  description="Exit status 0 when every set matched Table I and was written, 1 "
                                              "when one did not (it is not written), 2 when OpenML cannot be "
                                              "reached.")
    fetching.add_argument("names", nargs="+", metavar="NAME", help="registry names, or all")
    fetching.add_argument("--cache-dir", metavar="DIR",
                          help="OpenML download cache (default: the user cache); a second fetch reads it offline")
    for sub in (listing, fetching):
        sub.add_argument("--data-dir", metavar="DIR",
                         help="data directory (default: $PRECISE_KPCA_DATA, then the user cache)")
    return parser


def run(args: argparse.Namespace) -> int:
    """Run ``precise-kpca data``; returns the exit status (errors raise, see :func:`precise_kpca.cli.main`)."""
    return _list(args) if args.action == "list" else _fetch(args)


def _list(args: argparse.Namespace) -> int:
    from ..datasets import available, data_dir, manifest

    here = set(available(args.data_dir))
    entries = manifest(args.data_dir).datasets
    print(f"{'data set':<34}{'N':>6}{'d':>5}{'rho':>9}{'OpenML':>8}  here  licence")
    for name, info in entries.items():
        rho = "" if info.paper_rho is None else f"{info.paper_rho:g}"
        print(f"{name:<34}{info.paper_examples or '':>6}{info.paper_attributes_onehot or '':>5}{rho:>9}"
              f"{info.openml_id or '':>8}  {'yes ' if name in here else '-   '}  {info.licence or ''}")
    print(f"data directory: {data_dir(args.data_dir)} ({len(here)} of {len(entries)} here); "
          "N, d (after one-hot encoding) and rho as printed in Table I")
    return 0


def _fetch(args: argparse.Namespace) -> int:
    from ..datasets.fetch import fetch, fetchable
    from .common import UsageError

    names = fetchable() if args.names == ["all"] else args.names
    unknown = [name for name in names if name not in fetchable()]
    if unknown:
        raise UsageError(f"unknown data set(s) {', '.join(unknown)}; choose from {', '.join(fetchable())} or all")
    failed = 0
    for name in names:
        result = fetch(name, data_dir=args.data_dir, cache_dir=args.cache_dir)
        shown = f"{name}: N={result.n}, d={result.d}, rho={result.rho:.4f}"
        if result.matches:
            print(f"{shown}: matches Table I; wrote {result.path}")
        else:
            failed += 1
            print(f"{shown}: does NOT match Table I ({'; '.join(result.mismatches)}); not written")
    return 1 if failed else 0
