"""Progress on stderr for the long commands: bars with ETA over known steps, and an elapsed-time bar while one
opaque call runs (so no long command is silent).

``--progress auto`` shows them when stderr is a terminal, ``always`` forces them, ``never`` hides them.
"""
from __future__ import annotations

import argparse
import sys
import threading
from contextlib import contextmanager

PROGRESS = {"auto": True, "always": "always", "never": False}
HEARTBEAT_SECONDS = 0.5
"""Refresh period of the elapsed-time bar."""


def add_progress_argument(parser: argparse.ArgumentParser) -> None:
    """``--progress auto|always|never``."""
    parser.add_argument("--progress", choices=tuple(PROGRESS), default="auto",
                        help="progress on stderr: auto (when a terminal), always, never")


def _disabled(mode) -> bool:
    return not mode or (mode != "always" and not sys.stderr.isatty())


def bar(iterable, *, desc: str, mode, total: int | None = None, unit: str = "step"):
    """``iterable`` wrapped in a tqdm bar with ETA on stderr (``mode``: a :data:`PROGRESS` value)."""
    from ..extras import progress_bar_class

    tqdm = progress_bar_class()

    return tqdm(iterable, desc=desc, total=total, unit=unit, file=sys.stderr, disable=_disabled(mode),
                dynamic_ncols=True)


@contextmanager
def working(desc: str, mode):
    """An elapsed-time bar refreshed every :data:`HEARTBEAT_SECONDS` while the body runs (one call whose inner
    steps are not exposed: no ETA can be honest there, the elapsed time is)."""
    from ..extras import progress_bar_class

    tqdm = progress_bar_class()

    done = threading.Event()
    with tqdm(desc=desc, total=None, bar_format="{desc}: {elapsed} elapsed", file=sys.stderr,
              disable=_disabled(mode)) as status:
        def beat():
            while not done.wait(HEARTBEAT_SECONDS):
                status.refresh()

        thread = threading.Thread(target=beat, daemon=True)
        thread.start()
        try:
            yield status
        finally:
            done.set()
            thread.join()
