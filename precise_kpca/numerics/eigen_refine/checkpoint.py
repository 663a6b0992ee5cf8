"""Saving and resuming the state of a long eigen refinement (tier 2 at N = 5404 runs for hours).

The state after each iteration (basis, precision schedule, best checked basis, history) is pickled to one file,
written whole and then renamed over the previous one, so an interruption leaves either the old state or the new
one, never half of either. The file carries a fingerprint of the matrix (a BLAKE2b hash of its fixed-point
digits) and of every setting that shapes the iteration; resuming with anything else is refused. The format is
pickle: resume only from checkpoints you wrote.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import time
from pathlib import Path

import numpy as np

_FORMAT = 1


def fingerprint(digits: np.ndarray, **settings) -> str:
    """Hex digest of the digit array (its bytes, shape and dtype) and the ``settings`` (by ``repr``)."""
    h = hashlib.blake2b(digest_size=32)
    h.update(repr((_FORMAT, digits.shape, str(digits.dtype), sorted(settings.items()))).encode())
    for level in digits:  # one digit slice at a time: no copy of the whole matrix
        h.update(np.ascontiguousarray(level).data)
    return h.hexdigest()


def save(path: str | os.PathLike, key: str, state: dict) -> None:
    """Write ``state`` under the fingerprint ``key``: to a temporary file beside ``path``, synced, then renamed."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        pickle.dump({"format": _FORMAT, "key": key, "state": state}, f, protocol=5)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def load(path: str | os.PathLike, key: str) -> dict | None:
    """The state saved at ``path`` for fingerprint ``key``; None when there is no file.

    Raises
    ------
    ValueError
        If the file holds the state of another matrix or other settings (or of another format).
    """
    path = Path(path)
    if not path.exists():
        return None
    with open(path, "rb") as f:
        saved = pickle.load(f)
    if not isinstance(saved, dict) or saved.get("format") != _FORMAT or saved.get("key") != key:
        raise ValueError(f"checkpoint {str(path)!r} holds the state of another matrix or other settings "
                         "(dps, tier, k, max_bits, input_error); remove it or pass another path")
    return saved["state"]


def remove(path: str | os.PathLike) -> None:
    """Delete a finished refinement's checkpoint (and a temporary file an interruption left)."""
    path = Path(path)
    for p in (path, path.with_name(path.name + ".tmp")):
        p.unlink(missing_ok=True)


def key(ref) -> str:
    """The fingerprint of the refinement's A and settings (``ref``: its state)."""
    A = ref.A_full
    return fingerprint(
        A.digits, exponent=A.exponent, digit_bits=A.digit_bits, n=ref.n, exp2=ref.exp2, a_bits=ref.a_bits,
        dps=ref.dps, tier=ref.tier, k=ref.k, a_rounding=ref.a_rounding, input_error=ref.input_error)


def resumed_state(ref) -> dict | None:
    """The saved state to resume from (None: start afresh); sets the fingerprint and the earlier seconds."""
    ref._seconds_before = 0.0
    if ref.checkpoint is None:
        return None
    ref._key = key(ref)
    saved = load(ref.checkpoint[0], ref._key)
    if saved is not None:
        ref._seconds_before = saved["seconds"]
    return saved


def save_state(ref, state: dict) -> None:
    """Save the state after an iteration with the seconds spent so far (earlier calls' included)."""
    path, started = ref.checkpoint
    state["seconds"] = ref._seconds_before + time.perf_counter() - started
    save(path, ref._key, state)
