"""Command-line interface: ``precise-kpca <command> ...``.

Each command is a module ``precise_kpca/cli/<name>.py`` exposing ``add_parser(subparsers)`` (registers its
sub-parser, with ``help``) and ``run(args) -> int`` (the exit status). To add a command, write the module and
add it to :data:`COMMANDS`.

Errors in arguments or data print ``precise-kpca <command>: error: <message>`` on stderr and exit with
status 2, without a traceback.
"""
from __future__ import annotations

import argparse
import re
import sys

from . import certify, curves, eta, geometry, neighbours, onset, plan, prove, reproduce, rff_rate
from ..studies.executors import TaskError
from .common import UsageError

COMMANDS = [curves, onset, plan, geometry, prove, certify, rff_rate, neighbours, reproduce, eta]
"""Command modules, in ``--help`` order."""

_NEGATIVE_VALUE = re.compile(r"^-\d")


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every command of :data:`COMMANDS` registered."""
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="precise-kpca",
        description="Gaussian kernel PCA versus linear PCA as σ → ∞, with certified digits.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMANDS:
        module.add_parser(subparsers).set_defaults(run=module.run)
    return parser


def join_negative_values(argv: list[str]) -> list[str]:
    """Turn ``--opt -4:40`` into ``--opt=-4:40`` (argparse would read ``-4:40`` as an option)."""
    joined: list[str] = []
    for token in argv:
        if joined and joined[-1].startswith("--") and "=" not in joined[-1] and _NEGATIVE_VALUE.match(token):
            joined[-1] = f"{joined[-1]}={token}"
        else:
            joined.append(token)
    return joined


def main(argv: list[str] | None = None) -> int:
    """Run ``precise-kpca`` with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(join_negative_values(list(sys.argv[1:] if argv is None else argv)))
    try:
        return args.run(args)
    except (UsageError, ValueError, FileNotFoundError) as exc:
        print(f"precise-kpca {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except TaskError as exc:
        if not isinstance(exc.__cause__, ValueError):  # a bug, not a bad argument: keep the traceback
            raise
        print(f"precise-kpca {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"precise-kpca {args.command}: interrupted (finished points are kept in the results store)",
              file=sys.stderr)
        return 130
