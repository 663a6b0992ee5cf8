"""The verdict on one claim of the paper, and the table that prints verdicts."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Iterable

VERIFIED = "verified"
SHARPER = "sharper"
REFUTED = "refuted"
STATUSES = (VERIFIED, SHARPER, REFUTED)


@dataclass(frozen=True)
class ClaimResult:
    """Outcome of checking one claim.

    Attributes
    ----------
    claim : str
        The paper's label, e.g. ``"Lemma 1"``, ``"Eq. 10"``, ``"Corollary 2"``.
    method : str
        How the claim was checked (symbolic identity, series, sign analysis, mp numerics, ...).
    status : str
        ``"verified"`` (holds as stated), ``"sharper"`` (holds, and a strictly better constant or rate is
        proved here) or ``"refuted"`` (false as stated; ``evidence`` holds the counterexample).
    evidence : str
        One-line summary of what was shown.
    asserted : bool
        True when the library asserts the claim holds (status verified or sharper); a refuted asserted
        claim makes ``python -m proofs`` exit non-zero.
    """

    claim: str
    method: str
    status: str
    evidence: str
    asserted: bool = True

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")

    @property
    def failed(self) -> bool:
        """True when the library asserts this claim and it did not verify."""
        return self.asserted and self.status == REFUTED


def verdict(holds: bool, sharper: bool = False) -> str:
    """Status string for a claim that ``holds`` (optionally with a sharper constant proved)."""
    if not holds:
        return REFUTED
    return SHARPER if sharper else VERIFIED


def format_table(results: Iterable[ClaimResult]) -> str:
    """Plain-text table with one row per claim: claim, status, asserted, method, evidence."""
    rows = [("claim", "status", "asserted", "method", "evidence")]
    rows += [(r.claim, r.status, "yes" if r.asserted else "no", r.method, r.evidence) for r in results]
    widths = [max(len(row[c]) for row in rows) for c in range(4)]
    lines = []
    for k, row in enumerate(rows):
        head = "  ".join(cell.ljust(w) for cell, w in zip(row[:4], widths))
        lines.append(f"{head}  {row[4]}")
        if k == 0:
            lines.append("-" * (sum(widths) + 2 * 4 + len("evidence")))
    return "\n".join(lines)


def report(results: list[ClaimResult]) -> int:
    """Print the table; return the exit status (1 if an asserted claim failed, else 0)."""
    print(format_table(results))
    failed = [r.claim for r in results if r.failed]
    if failed:
        print(f"\nasserted claims that failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0
