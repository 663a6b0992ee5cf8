"""One object per data set that owns what is derived from it: :class:`DataState` and its registry.

Every exact computation starts from X (float64, exact), and most of it does not depend on σ: the integer form,
the exact linear part and its enclosures, the eccentricity, the binary128 data side, the first-order operator.
A curve asks for the same data set at every σ, so each of these is computed once per data set and kept; the σ-
dependent ones (a Gram's words, an enclosure at one σ) are kept for the last σ or two, where the measures of one σ
meet.

Design
------
* :class:`DataState` holds X (a private read-only copy, so nothing derived from it can go stale) and a memo of
  derived values keyed by (compute function, parameters): :meth:`DataState.derived` ``(compute, *params)``
  returns ``compute(X, *params)``, computed once. The compute functions stay in the modules that own their concepts
  and ask for their values; objects derived from the data (:class:`Derived`: the exact linear part, a linear
  enclosure) own their derived values the same way.
* Memory is bounded per compute function over all data sets: ``keep`` values of one function are held at most,
  the least recently used dropped (the bound each former per-module ``lru_cache`` had, so the bounds are today's:
  e.g. the binary128 data side of one data set, the binary128 words of two bandwidths, the structured certificates
  of two). The values live in the owning :class:`DataState`, so they go with it.
* Entry points keep accepting a raw ndarray: :func:`data_state` maps it to its :class:`DataState` through one
  registry of the last :data:`REGISTRY_SIZE` data sets (by content: shape and a BLAKE2 digest, confirmed bit for bit
  against the kept copy), so a study calling ``measure(X, σ, …)`` per σ shares the work. ``data_state(state.X)``
  is found by identity without hashing, even after the registry dropped the state: ``measure`` accepts a state and
  passes its X down, and the sweeps (:func:`~precise_kpca.studies.curves.run_sweep`, behind ``curves`` and
  ``reproduce``) hold one state per data set in every worker, so they keep their values however many data sets
  interleave. A state pickles as its X: a worker derives its own values.
* :func:`clear` drops the values of given compute functions (a test that spoils one computation), or every value
  and the registry.
* Why a class of its own: :class:`~precise_kpca.numerics.exact.ExactData` is the integer form of any float64
  matrix (scaled copies, stacked pairs of sets), a value rather than the owner of one data set's state; this module
  sits below every user (numerics, certify, measures, asymptotics) and imports nothing of the package.

Memory: the registry holds :data:`REGISTRY_SIZE` copies of X, and a sweep its own data sets (the former caches held
one ``X.tobytes()`` key per cached entry, up to ~100); the derived values are bounded as above, whatever the number
of live states.
"""
from __future__ import annotations

import hashlib
import threading
import weakref
from collections import OrderedDict
from typing import Callable, TypeVar

import numpy as np

T = TypeVar("T")

REGISTRY_SIZE = 8
"""Data sets the registry keeps (least recently used dropped): as many as the former σ-independent caches kept."""

_LOCK = threading.RLock()
_REGISTRY: OrderedDict = OrderedDict()  # (shape, digest) -> DataState, least recently used first
_BY_ARRAY: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # id(state.X) -> state
_HELD: dict = {}  # compute -> OrderedDict((id(owner), params) -> weakref to owner), least recently used first


class Derived:
    """Owns values derived from itself: :meth:`derived` memoises ``compute(subject, *params)``, bounded per compute
    function over all owners (module docstring). :class:`DataState` derives from its X; an object derived from the
    data (the exact linear part, a linear enclosure) derives from itself and lives, with what it derived, as long as
    the value that holds it."""

    def _subject(self):
        return self

    def derived(self, compute: Callable[..., T], *params, keep: int) -> T:
        """``compute(subject, *params)``, computed once for this owner and kept.

        Parameters
        ----------
        compute : callable
            The owner module's compute function; with ``params`` (hashable) it is the value's key.
        keep : int
            At most this many values of ``compute`` are held over all owners (least recently used dropped).

        Failures are not kept: the next call computes again.
        """
        memo = vars(self).setdefault("_memo", {})  # through vars: frozen dataclasses derive too
        key, slot = (compute, params), (id(self), params)
        with _LOCK:
            if key in memo:
                _HELD[compute].move_to_end(slot)
                return memo[key]
        value = compute(self._subject(), *params)  # outside the lock: it may ask for other derived values
        with _LOCK:
            memo[key] = value
            held = _HELD.setdefault(compute, OrderedDict())
            held[slot] = weakref.ref(self)
            held.move_to_end(slot)
            while len(held) > keep:
                (_, old_params), ref = held.popitem(last=False)
                owner = ref()
                if owner is not None:
                    vars(owner).get("_memo", {}).pop((compute, old_params), None)
        return value

    def __getstate__(self):
        # a copy (pickle, copy.copy) starts with no derived values: the ledger counts the original's alone
        state = dict(vars(self))
        state.pop("_memo", None)
        return state


class DataState(Derived):
    """A validated float64 data matrix and the values derived from it (module docstring).

    Make one with :func:`data_state`, which shares it with every caller that passes the same data.

    Parameters
    ----------
    X : ndarray, shape (N, d)
        Validated float64 data; copied.

    Attributes
    ----------
    X : ndarray, shape (N, d)
        The data, C-contiguous float64, read-only.
    digest : bytes
        BLAKE2 digest of X's bytes (with ``X.shape``, the registry's key).
    """

    def __init__(self, X: np.ndarray):
        X = np.array(X, dtype=np.float64, order="C", copy=True)
        X.flags.writeable = False
        self.X = X
        self.digest = _digest(X)
        with _LOCK:
            _BY_ARRAY[id(X)] = self

    @property
    def shape(self) -> tuple:
        return self.X.shape

    def _subject(self) -> np.ndarray:
        return self.X

    def __reduce__(self):
        # what crosses to a worker is the data; the worker's registry gives it its own state there
        return data_state, (self.X,)


def data_state(X) -> DataState:
    """The :class:`DataState` of validated float64 data X (or X itself when it is one), shared through the registry.

    Parameters
    ----------
    X : ndarray, shape (N, d), or DataState
        Validated data (:func:`~precise_kpca.validation.check_data`); a non-contiguous or non-float64 array is
        read as ``np.ascontiguousarray(X, dtype=np.float64)``.
    """
    if isinstance(X, DataState):
        return X
    with _LOCK:
        state = _BY_ARRAY.get(id(X))
        if state is not None and state.X is X:
            _touch(state)
            return state
    X = np.ascontiguousarray(X, dtype=np.float64)
    key = (X.shape, _digest(X))
    with _LOCK:
        state = _REGISTRY.get(key)
        if state is not None and np.array_equal(state.X.view(np.uint64), X.view(np.uint64)):
            _REGISTRY.move_to_end(key)
            return state
    state = DataState(X)
    with _LOCK:
        _REGISTRY[key] = state
        while len(_REGISTRY) > REGISTRY_SIZE:
            _REGISTRY.popitem(last=False)
    return state


def clear(*computes: Callable) -> None:
    """Drop derived values: those of the given compute functions, of every owner; with none given, every value and
    the registry (a test that spoils one computation drops its values and keeps the rest)."""
    with _LOCK:
        for compute in computes or list(_HELD):
            for (_, params), ref in _HELD.pop(compute, {}).items():
                owner = ref()
                if owner is not None:
                    vars(owner).get("_memo", {}).pop((compute, params), None)
        if not computes:
            _REGISTRY.clear()


def _touch(state: DataState) -> None:
    key = (state.shape, state.digest)
    if _REGISTRY.get(key) is state:
        _REGISTRY.move_to_end(key)


def _digest(X: np.ndarray) -> bytes:
    return hashlib.blake2b(X, digest_size=16).digest()
