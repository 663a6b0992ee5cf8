"""Typed failures: what went wrong, and what would fix it.

Every failure the library reports has one of these types, so a caller (and the measure layer) can tell a value
that does not exist from one that needs more work, and both from a bug:

* :class:`Undetermined` — the quantity has no value: it depends on an arbitrary choice (a basis inside a
  repeated eigenvalue). No precision changes that. ``proof`` says how the tie is known (exact proof or the
  enclosures that overlap).
* :class:`InsufficientPrecision` — the quantity exists but this evaluation could not separate what it must
  separate (a near-tie, a gap below the enclosures' width). ``needed_dps`` estimates the precision that would.
* :class:`NoConvergence` — an iteration did not settle; ``remedy`` says what to change.
* :class:`RouteUnavailable` — no route with the requested guarantee applies to this input (e.g. a rigorous
  enclosure cannot reach the requested digits); ``remedy`` names the alternatives.
* :class:`InternalCheckFailed` — a consistency check of the library failed: a bug. It is never caught and turned
  into "not determined"; report it with the input that caused it.
* :class:`ResourceLimitExceeded` — a request would cost more than a resource limit allows (:mod:`precise_kpca.limits`);
  the message names the limit, the estimated cost and how to lift it. Raised before the work starts.
* :class:`StoreError` — a results store cannot be used as asked (read-only, locked, full); its subclass
  :class:`StoreCorrupted` — rows or pages fail their checks; the message names them and the repair
  (``precise-kpca store repair``).

The first four are :class:`ArithmeticError` subclasses (they are about numbers); :class:`InternalCheckFailed` is
not, so an ``except ArithmeticError`` never swallows a bug. The last two are :class:`ValueError` subclasses: a request
beyond the limits and a damaged store are faults of the input, reported like bad arguments.
"""
from __future__ import annotations


class PreciseKPCAError(Exception):
    """Base class of every failure the library raises on purpose."""


class Undetermined(PreciseKPCAError, ArithmeticError):
    """The value depends on an arbitrary choice and is not a number.

    Parameters
    ----------
    reason : str
        What is not determined and why.
    proof : str, optional
        How the tie is established (e.g. "exact: multiplicity 2 root of the integer characteristic polynomial").
    """

    def __init__(self, reason: str, *, proof: str = ""):
        super().__init__(reason + (f" ({proof})" if proof else ""))
        self.reason = reason
        self.proof = proof


class InsufficientPrecision(PreciseKPCAError, ArithmeticError):
    """The value exists but could not be separated at this precision.

    Parameters
    ----------
    reason : str
    needed_dps : int, optional
        Decimal digits estimated to resolve it (None when unknown).
    """

    def __init__(self, reason: str, *, needed_dps: int | None = None):
        super().__init__(reason + (f"; about {needed_dps} digits of working precision would resolve it"
                                   if needed_dps else ""))
        self.reason = reason
        self.needed_dps = needed_dps


class NoConvergence(PreciseKPCAError, ArithmeticError):
    """An iteration did not settle.

    Parameters
    ----------
    reason : str
    remedy : str, optional
    """

    def __init__(self, reason: str, *, remedy: str = ""):
        super().__init__(reason + (f"; {remedy}" if remedy else ""))
        self.reason = reason
        self.remedy = remedy


class RouteUnavailable(PreciseKPCAError, ArithmeticError):
    """No route with the requested guarantee applies.

    Parameters
    ----------
    reason : str
    remedy : str, optional
    """

    def __init__(self, reason: str, *, remedy: str = ""):
        super().__init__(reason + (f"; {remedy}" if remedy else ""))
        self.reason = reason
        self.remedy = remedy


class InternalCheckFailed(PreciseKPCAError, RuntimeError):
    """A consistency check of the library failed: a bug, never a property of the input.

    Parameters
    ----------
    check : str
        What was checked and what was found.
    """

    def __init__(self, check: str):
        super().__init__(f"internal check failed (a bug in precise_kpca; please report it with the input): {check}")
        self.check = check


class ResourceLimitExceeded(PreciseKPCAError, ValueError):
    """A request would exceed a resource limit; nothing has been computed.

    Parameters
    ----------
    parameter : str
        The argument at fault (e.g. ``"dps"``, ``"sigma"``, ``"log2_sigmas"``).
    limit : str
        The limit's name in :mod:`precise_kpca.limits` (``"max_dps"``...).
    value, allowed : object
        What was asked and what the limit allows.
    estimate : str
        The estimated cost of the request (time, memory).
    """

    def __init__(self, parameter: str, limit: str, value, allowed, estimate: str):
        from .limits import lift_hint

        super().__init__(f"{parameter}={value} exceeds the limit {limit}={allowed} ({estimate}); {lift_hint(limit)}")
        self.parameter = parameter
        self.limit = limit
        self.value = value
        self.allowed = allowed
        self.estimate = estimate


class StoreError(PreciseKPCAError, ValueError):
    """A results store cannot be used as asked (read-only, locked, full, not a store); the message says why."""


class StoreCorrupted(StoreError):
    """A results store has rows or pages that fail their checks.

    Parameters
    ----------
    path : str
    problems : list of str
        One line per bad row or page (rowid and key, or SQLite's report).
    """

    def __init__(self, path: str, problems: list[str]):
        shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
        super().__init__(f"results store {path!r} is damaged: {shown}. Run 'precise-kpca store check {path}' for the "
                         f"full report and 'precise-kpca store repair {path}' to keep every intact row")
        self.path = path
        self.problems = list(problems)


__all__ = ["InsufficientPrecision", "InternalCheckFailed", "NoConvergence", "PreciseKPCAError", "ResourceLimitExceeded",
           "RouteUnavailable", "StoreCorrupted", "StoreError", "Undetermined"]
