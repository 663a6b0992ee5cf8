"""Machine checks of the paper's derivations (sympy, with mp cross-checks through ``precise_kpca``).

One module per claim family, each runnable alone (``python -m proofs.lemma1``); ``python -m proofs`` runs
them all. See ``proofs/README.md`` for the claim-to-module map and the verdicts.
"""
from .result import ClaimResult, format_table
from .registry import run_all

__all__ = ["ClaimResult", "format_table", "run_all"]
