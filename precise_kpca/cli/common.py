"""Helpers shared by the commands: the DATA argument, ranges and lists, and the usage error."""
from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from .. import limits

_RANGE = re.compile(r"^\s*([+-]?\d+)\s*:\s*([+-]?\d+)\s*(?::\s*([+-]?\d+)\s*)?$")


class UsageError(ValueError):
    """A bad command-line value (reported with exit status 2)."""


def add_data_arguments(parser: argparse.ArgumentParser) -> None:
    """``DATA`` plus the options that say how to read it."""
    parser.add_argument("data", metavar="DATA", help=DATA_HELP)
    add_data_options(parser)


DATA_HELP = ("bundled data-set name (e.g. wine), a name from the data directory (see precise-kpca data list), "
             "openml:<name or id>, or a path to a .csv, .arff or .npy file")


def add_data_options(parser: argparse.ArgumentParser) -> None:
    """The options that say where named sets live and how to read a file."""
    parser.add_argument("--data-dir", metavar="DIR", help="data directory for named sets (default: $PRECISE_KPCA_DATA, "
                                                          "then the user cache)")
    parser.add_argument("--target", metavar="COLUMN", action="append",
                        help="for files: a column to drop (repeatable; default: the registry's target when the "
                             "file's name is a registered data set's, e.g. cpu.arff)")
    parser.add_argument("--categorical", metavar="COLUMN", action="append",
                        help="for files: a column to one-hot encode (repeatable; default: the registry's, else "
                             "the ARFF nominal attributes)")


def load_data(args: argparse.Namespace) -> tuple[str, "numpy.ndarray"]:
    """Resolve ``args.data`` to ``(name, X)`` with :func:`precise_kpca.datasets.resolve`; a file read with a
    registry entry's columns says so on stderr."""
    from ..datasets import resolve
    from ..datasets.registry import registry_entry, is_file_spec

    name, X = resolve(args.data, data_dir=args.data_dir, target=args.target, categorical=args.categorical)
    info = registry_entry(args.data) if is_file_spec(args.data) else None
    if info is not None and not str(args.data).lower().endswith(".npy"):
        target = args.target or info.target
        categorical = args.categorical or info.categorical
        print(f"{args.data}: read as the registry's {info.name!r}: target {target} dropped"
              + (f", {len(categorical)} categorical attribute(s) one-hot encoded" if categorical else "")
              + (f", {', '.join(info.drop)} dropped" if info.drop else ""), file=sys.stderr)
    return name, X


def parse_range(text: str) -> list[int]:
    """Integers from ``"A:B"`` (A..B inclusive), ``"A:B:STEP"``, a single ``"P"``, or a comma list of those.

    Raises
    ------
    UsageError
        Unreadable text, a zero step, or an empty range.
    ResourceLimitExceeded
        More values than ``max_points`` (:mod:`precise_kpca.limits`), refused before the list is built.
    """
    values: list[int] = []
    for part in text.split(","):
        match = _RANGE.match(part)
        if match:
            start, stop, step = int(match[1]), int(match[2]), int(match[3] or 1)
            if step == 0:
                raise UsageError(f"range {part.strip()!r} has step 0")
            stop += 1 if step > 0 else -1
            limits.check_points(len(range(start, stop, step)) + len(values), parameter=f"range {text.strip()!r}")
            chunk = list(range(start, stop, step))
            if not chunk:
                raise UsageError(f"range {part.strip()!r} is empty (start past stop for step {step})")
            values.extend(chunk)
        elif re.fullmatch(r"\s*[+-]?\d+\s*", part):
            values.append(int(part))
        else:
            raise UsageError(f"cannot read {part.strip()!r} as an integer or a range START:STOP[:STEP] (e.g. -4:40)")
    return values


def parse_list(text: str, *, what: str, choices=None) -> list[str]:
    """Comma-separated names, optionally checked against ``choices``."""
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise UsageError(f"no {what} given")
    if choices is not None:
        for item in items:
            if item not in choices:
                raise UsageError(f"unknown {what} {item!r}; choose from {', '.join(choices)}")
    return items


def parse_positive_ints(text: str, *, what: str) -> list[int]:
    """Comma-separated positive integers (ranges allowed)."""
    values = parse_range(text)
    for value in values:
        if value < 1:
            raise UsageError(f"{what} must be positive integers, got {value}")
    return values


def output_folder(path: str, *, option: str = "--out") -> Path:
    """The output folder, created and checked writable before any work (so a sweep never fails at its end)."""
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{option} {path!r} is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{option} {path!r}: cannot create the folder ({exc.strerror or exc})") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {path!r} is not writable")
    return folder


def open_store(path: str | None):
    """The results store of ``--store`` (opened now, so a bad path fails before any work)."""
    from ..studies.store import ResultsStore

    return ResultsStore(path)
