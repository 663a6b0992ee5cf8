"""Command-line interface: ``precise-kpca <command> ...`` (also ``python -m precise_kpca``).

Each command is a module ``precise_kpca/cli/<name>.py`` exposing ``add_parser(subparsers)`` (registers its
sub-parser, with ``help``) and ``run(args) -> int`` (the exit status). To add a command, write the module and
add it to :data:`COMMANDS` with its one-line help (a test checks that both say the same).

Start-up: only the module of the command being run is imported, and the modules import NumPy, pandas, mpmath
and the like inside ``run``, so ``precise-kpca --help`` and ``precise-kpca CMD --help`` import none of them (the
test suite checks that). The other commands appear in ``--help`` through their line in :data:`COMMANDS`.

Errors in arguments or data print ``precise-kpca <command>: error: <message>`` on stderr and exit with
status 2, without a traceback.
"""
from __future__ import annotations

import argparse
import importlib
import re
import sys

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
}
"""Command name -> (module in this package, one-line help), in ``--help`` order."""

_NEGATIVE_VALUE = re.compile(r"^-\d")


def command_module(name: str):
    """The module implementing command ``name`` (imported on first use)."""
    return importlib.import_module(f"{__name__}.{COMMANDS[name][0]}")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The top-level parser: ``command`` (if given) with its full sub-parser, the others as help lines only.

    Parameters
    ----------
    command : str, optional
        A key of :data:`COMMANDS`; None registers every command fully (imports every command module).
    """
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="precise-kpca",
        description="Gaussian kernel PCA versus linear PCA as σ → ∞, with certified digits.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
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


def _bad_task_argument(exc: BaseException) -> bool:
    """A failed task whose cause is a bad argument (reported like one), not a bug."""
    executors = sys.modules.get("precise_kpca.studies.executors")
    return executors is not None and isinstance(exc, executors.TaskError) and isinstance(exc.__cause__, ValueError)


def main(argv: list[str] | None = None) -> int:
    """Run ``precise-kpca`` with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    argv = join_negative_values(list(sys.argv[1:] if argv is None else argv))
    command = _chosen_command(argv)
    args = build_parser(command or "").parse_args(argv)
    try:
        return args.run(args)
    except (UsageError, ValueError, FileNotFoundError, PermissionError, ConnectionError, MissingExtra) as exc:
        print(f"precise-kpca {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"precise-kpca {args.command}: interrupted (finished points are kept in the results store)",
              file=sys.stderr)
        return 130
    except Exception as exc:
        if not _bad_task_argument(exc):  # a bug, not a bad argument: keep the traceback
            raise
        print(f"precise-kpca {args.command}: error: {exc}", file=sys.stderr)
        return 2
