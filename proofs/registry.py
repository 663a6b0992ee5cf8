"""All claim families, run together or by name: ``run_all(names=None) -> list[ClaimResult]``."""
from __future__ import annotations

import importlib

from .result import ClaimResult, format_table, report

__all__ = ["MODULES", "ClaimResult", "format_table", "report", "run_all"]

# name -> module (in proofs/), in the paper's order
MODULES = {
    "lemma1": "Eq. 7, Lemma 1 and its Note",
    "lemma2": "Lemma 2, Corollary 1",
    "expansions": "Eqs. 9-12",
    "bounds": "Eqs. 12-14 (inequalities and constants)",
    "theorem2": "Theorem 2 (closed form, sharp constant), Note 2",
    "corollary2": "Corollary 2 (angles)",
    "perturbation": "Eq. 15, Theorem 3",
    "theorem1": "Theorem 1 (Gaussian CKA): rate and constant",
    "predictor": "Issue 24: first-order eigenprojection angle",
    "symmetry": "Issue 24: ties forced by a dihedral symmetry",
}


def run_all(names=None) -> list[ClaimResult]:
    """Run the claim families ``names`` (all of them by default) and return their verdicts in order.

    Parameters
    ----------
    names : iterable of str, optional
        Keys of :data:`MODULES`.

    Raises
    ------
    ValueError
        For an unknown name.
    """
    chosen = list(MODULES) if names is None else list(names)
    unknown = [name for name in chosen if name not in MODULES]
    if unknown:
        raise ValueError(f"unknown proof module(s) {unknown}; choose from {sorted(MODULES)}")
    results: list[ClaimResult] = []
    for name in chosen:
        results.extend(importlib.import_module(f"{__package__}.{name}").claims())
    return results
