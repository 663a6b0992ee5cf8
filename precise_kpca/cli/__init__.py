"""Command-line interface: ``precise-kpca <command> ...`` (also ``python -m precise_kpca``).

Each command is a module ``precise_kpca/cli/<name>.py`` exposing ``add_parser(subparsers)`` (registers its
sub-parser, with ``help``) and ``run(args) -> int`` (the exit status). To add a command, write the module and
add it to :data:`COMMANDS` with its one-line help (a test checks that both say the same).

Start-up: only the module of the command being run is imported, and the modules import NumPy, pandas, mpmath
and the like inside ``run``, so ``precise-kpca --help`` and ``precise-kpca CMD --help`` import none of them (the
test suite checks that). The other commands appear in ``--help`` through their line in :data:`COMMANDS`.

Every failure prints one line on stderr, ``precise-kpca <command>: error: <message>``, saying what is wrong and
what to do, without a traceback (``--debug``, anywhere on the command line, or ``PRECISE_KPCA_DEBUG=1`` shows it):

* status 2 — a bad argument, bad data, a file or folder that is missing or not writable, a damaged results store, a
  request beyond a resource limit (:mod:`precise_kpca.limits`), no network for ``openml:``;
* status 1 — the computation could not finish: a worker process died (the points finished before it are kept), a
  value the arithmetic could not separate, out of memory;
* status 3 — an internal error (a bug: please report it with the command);
* status 130 — interrupted (finished points are kept in the results store).

Warnings are printed as one line each, ``precise-kpca <command>: warning: <message>``.
"""
from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
import warnings

from ..errors import InternalCheckFailed, PreciseKPCAError
from ..extras import MissingExtra
from .common import UsageError

COMMANDS = {
    "curves": ("curves", "convergence curves (Figs 3, 5, 6, 8) with certified digits"),
    "onset": ("onset", "convergence-onset bandwidth σ*₀ of a measure (Table II)"),
    "plan": ("plan", "which engine computes a measure and what certifies it, before running it"),
    "geometry": ("geometry", "N, d, d_X, diameter, ρ (Eq. 4) and η of a data set"),
    "prove": ("prove", "verify the paper's derivations symbolically (sympy); exit 1 if an asserted claim fails"),
    "certify": ("certify", "certified inertia of a kernel Gram (Mercer check); no DATA: the article's Experiment 1"),
    "rff-rate": ("rff_rate", "random Fourier features: RMSE versus D and the fitted O(D^-1/2) slope (seed article)"),
    "neighbours": ("neighbours", "large-σ convergence of Nyström / random-feature KPCA to linear PCA: rates, constants"),
    "reproduce": ("reproduce", "the paper's study: Tables I-IV, Figs 1-8 and report.md, extended past 2^7"),
    "eta": ("eta", "tightness of Theorem 2's η: C(σ) vs the sharp 1/8, overshoot, Theorem 3 limits"),
    "data": ("data", "the paper's data sets: list them, or fetch them from OpenML into the data directory"),
    "study": ("study", "studies beyond the paper (beyond: eigenprojection predictor, CKA constant, ties)"),
    "store": ("store", "check, repair, export or back up a results store"),
}
"""Command name -> (module in this package, one-line help), in ``--help`` order."""

_NEGATIVE_VALUE = re.compile(r"^-\d")


def command_module(name: str):
    """The module implementing command ``name`` (imported on first use)."""
    return importlib.import_module(f"{__name__}.{COMMANDS[name][0]}")


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``prog: error: message (see prog --help)``), like every other failure."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The top-level parser: ``command`` (if given) with its full sub-parser, the others as help lines only.

    Parameters
    ----------
    command : str, optional
        A key of :data:`COMMANDS`; None registers every command fully (imports every command module).
    """
    from .. import __version__

    parser = _Parser(
        prog="precise-kpca",
        description="Gaussian kernel PCA versus linear PCA as σ → ∞, with certified digits.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error (also anywhere after the "
                                                            "command, or PRECISE_KPCA_DEBUG=1)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (_, help_text) in COMMANDS.items():
        if command is None or name == command:
            module = command_module(name)
            module.add_parser(subparsers).set_defaults(run=module.run)
        else:
            subparsers.add_parser(name, help=help_text, add_help=False)
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


def _chosen_command(argv: list[str]) -> str:
    """The command named in ``argv`` ("" when none is): the first word that is not an option (the top-level
    options, --help and --version, take no value)."""
    for token in argv:
        if not token.startswith("-"):
            return token if token in COMMANDS else ""
    return ""


def main(argv: list[str] | None = None) -> int:
    """Run ``precise-kpca`` with ``argv`` (default ``sys.argv[1:]``); returns the exit status (module docstring)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv or os.environ.get("PRECISE_KPCA_DEBUG", "") not in ("", "0")
    argv = [a for a in argv if a != "--debug"]
    try:
        argv = join_negative_values(argv)
        args = build_parser(_chosen_command(argv)).parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error already printed
        return int(exc.code or 0)
    prefix = f"precise-kpca {args.command}"
    with warnings.catch_warnings():
        warnings.showwarning = lambda message, category, *_, **__: print(
            f"{prefix}: warning: {_one_line(message)}", file=sys.stderr)
        try:
            return args.run(args)
        except KeyboardInterrupt:
            print(f"{prefix}: interrupted (finished points are kept in the results store)", file=sys.stderr)
            return 130
        except Exception as exc:
            if debug:
                raise
            status, message = classify(exc)
            print(f"{prefix}: error: {message}", file=sys.stderr)
            return status


def classify(exc: BaseException) -> tuple[int, str]:
    """Exit status and one-line message of a failure (module docstring)."""
    from ..studies.executors import TaskError, WorkerLost  # only on failure: start-up imports nothing heavy

    if isinstance(exc, WorkerLost):
        return 1, _one_line(exc)
    if isinstance(exc, TaskError):
        status, message = classify(exc.__cause__) if exc.__cause__ is not None else (3, _one_line(exc))
        return status, f"{exc.task.describe() if hasattr(exc.task, 'describe') else 'a task'}: {message}"
    if isinstance(exc, InternalCheckFailed):
        return 3, _one_line(exc) + "; rerun with --debug for the traceback"
    if isinstance(exc, (UsageError, MissingExtra)):
        return 2, _one_line(exc)
    if isinstance(exc, (ValueError, ConnectionError, FileNotFoundError, NotADirectoryError, IsADirectoryError,
                        PermissionError, FileExistsError)):
        return 2, _one_line(exc) if not isinstance(exc, OSError) or exc.filename is None or str(exc.filename) in str(
            exc) else f"{exc.strerror}: {exc.filename}"
    if isinstance(exc, (PreciseKPCAError, ArithmeticError)):
        return 1, _one_line(exc)
    if isinstance(exc, MemoryError):
        return 1, "out of memory; use a smaller data set (--max-rows), fewer workers, or fewer digits"
    if isinstance(exc, OSError):
        return 1, f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else "")
    return 3, (f"internal error (a bug in precise_kpca; please report it with this command): {type(exc).__name__}: "
               f"{_one_line(exc)}; rerun with --debug for the traceback")


def _one_line(exc) -> str:
    return " ".join(str(exc).split())
