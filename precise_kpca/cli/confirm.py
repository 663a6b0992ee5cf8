"""The plan before a long run: printed on stderr, and put to the user on a terminal (``--yes`` skips the question).

A non-terminal (a pipe, a batch job) is never asked: the plan is printed and the run goes ahead.
"""
from __future__ import annotations

import argparse
import sys

ASK_SECONDS = 60.0
"""Predicted wall time from which a terminal user is asked before the run (shorter runs only print the plan)."""


def add_yes_argument(parser: argparse.ArgumentParser) -> None:
    """``--yes``: run without asking after the plan."""
    parser.add_argument("--yes", "-y", action="store_true",
                        help="do not ask for confirmation after printing the plan (non-terminals are never asked)")


def confirmer(args: argparse.Namespace, *, stdin=None, stderr=None):
    """A ``confirm`` callable for :func:`precise_kpca.studies.cost.ask`: prints the estimate, then asks on a
    terminal unless ``args.yes`` or the predicted wall time is below :data:`ASK_SECONDS`.

    Parameters
    ----------
    args : argparse.Namespace
        With ``yes``.
    stdin, stderr : file objects, optional
        Default: ``sys.stdin``, ``sys.stderr`` (read at call time).
    """
    def confirm(estimate) -> bool:
        source_in, out = stdin or sys.stdin, stderr or sys.stderr
        print(estimate.describe(), file=out, flush=True)
        if args.yes or estimate.wall_seconds < ASK_SECONDS or not source_in.isatty():
            return True
        print("Proceed? [y/N] ", end="", file=out, flush=True)
        return source_in.readline().strip().lower() in ("y", "yes")

    return confirm
