"""Every proof module runs and gives the expected verdict for every claim it covers."""
from __future__ import annotations

import subprocess
import sys

import pytest

from proofs.registry import MODULES, run_all
from proofs.result import REFUTED, SHARPER, VERIFIED, ClaimResult, format_table

EXPECTED = {
    "lemma1": {"Eq. 7": VERIFIED, "Lemma 1": VERIFIED, "Lemma 1, Note": VERIFIED},
    "lemma2": {"Lemma 2": VERIFIED, "Corollary 1": VERIFIED},
    "expansions": {"Eq. 9": VERIFIED, "Eq. 10": VERIFIED, "Eq. 11": VERIFIED, "Eq. 12": VERIFIED},
    "bounds": {"Eq. 12 bound": SHARPER, "Eq. 13": SHARPER, "Eq. 14 (as printed)": REFUTED, "Eq. 14": SHARPER},
    "theorem2": {"Theorem 2": SHARPER, "Theorem 2, Note 2": VERIFIED},
    "corollary2": {"Corollary 2": VERIFIED},
    "perturbation": {"Eq. 15": VERIFIED, "Theorem 3": VERIFIED},
    "theorem1": {"Theorem 1 (L = K_lin), rate": SHARPER, "Theorem 1 (L = K_lin), uniform C": REFUTED,
                 "Theorem 1, C(X) certified over σ ≥ ρ/2": VERIFIED},
    "predictor": {"Issue 24: first-order angle = coupling/gap": VERIFIED,
                  "Issue 24: second order scales as 1/gap^3": VERIFIED},
    "symmetry": {"Issue 24: symmetry commutes with every Gaussian Gram": VERIFIED, "Issue 24: D4 characters": VERIFIED,
                 "Issue 24: psi1 multiplicity per orbit type": VERIFIED,
                 "Issue 24: Schur (ties within psi1 component)": VERIFIED},
}


@pytest.mark.parametrize("name", list(MODULES))
def test_module_verdicts(name):
    results = run_all([name])
    assert {r.claim: r.status for r in results} == EXPECTED[name]
    assert not [r.claim for r in results if r.failed]


def test_expected_covers_every_module():
    assert set(EXPECTED) == set(MODULES)


def test_refuted_claims_are_not_asserted():
    refuted = [r for name in ("bounds",) for r in run_all([name]) if r.status == REFUTED]
    assert refuted and not any(r.asserted for r in refuted)


def test_unknown_module_rejected():
    with pytest.raises(ValueError, match="unknown proof module"):
        run_all(["lemma9"])


def test_status_validated():
    with pytest.raises(ValueError, match="status must be one of"):
        ClaimResult("Lemma 1", "m", "probably", "e")


def test_format_table_rows():
    rows = [ClaimResult("Lemma 1", "symbolic", VERIFIED, "ok"), ClaimResult("Eq. 14", "limit", REFUTED, "typo", False)]
    table = format_table(rows).splitlines()
    assert table[0].split()[:3] == ["claim", "status", "asserted"]
    assert table[2].startswith("Lemma 1") and "verified" in table[2]
    assert "refuted" in table[3] and " no " in table[3]


def test_cli_exit_status_fails_on_asserted_refutation(monkeypatch, capsys):
    from proofs import __main__ as cli

    bad = [ClaimResult("Lemma 1", "symbolic", REFUTED, "counterexample")]
    monkeypatch.setattr(cli, "run_all", lambda names: bad)
    assert cli.main([]) == 1
    monkeypatch.setattr(cli, "run_all", lambda names: [ClaimResult("Eq. 14", "x", REFUTED, "typo", False)])
    assert cli.main([]) == 0
    assert "Eq. 14" in capsys.readouterr().out


@pytest.mark.parametrize("argv, code", [(["lemma1"], 0), (["nosuch"], 2)])
def test_python_dash_m(argv, code):
    run = subprocess.run([sys.executable, "-m", "proofs", *argv], capture_output=True, text=True)
    assert run.returncode == code, run.stderr
