"""Predictor inputs (asymptotics/predictor) against independent references, and the study command."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

from precise_kpca.asymptotics.predictor import boundary_gaps, comparison, ols_r2
from precise_kpca.cli import main
from precise_kpca.reports.beyond import onsets_and_values

EPS = np.finfo(float).eps


def test_boundary_gaps_match_exact_eigenvalues():
    """Relative gaps from the exact characteristic polynomial of the integer covariance (sympy roots)."""
    X = np.array([[0, 0, 1], [4, 1, 0], [1, 3, 2], [2, 2, 7], [5, 0, 3], [1, 6, 1]], dtype=float)
    Xc = sp.Matrix(X.tolist()) - sp.ones(6, 1) * sp.Matrix([[sum(X[:, j]) / 6 for j in range(3)]])
    roots = sorted((float(r) for r in (Xc.T * Xc).eigenvals(multiple=True)), reverse=True)
    gaps = boundary_gaps(X, 3)
    expected = [(roots[0] - roots[1]) / roots[0], (roots[1] - roots[2]) / roots[0], roots[2] / roots[0]]
    assert gaps == pytest.approx(expected, rel=2**10 * EPS)
    assert all(g <= e for g, e in zip(gaps, expected))  # proven lower bounds


@settings(max_examples=20, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=5, max_size=12), st.floats(0.1, 3), st.integers(0, 10**6))
def test_ols_r2_one_variable_is_squared_correlation(x, slope, seed):
    x = np.array(x)
    if np.ptp(x) < 1e-3:
        return
    y = slope * x + np.random.default_rng(seed).standard_normal(len(x))
    r2, coef = ols_r2(y, x)
    assert r2 == pytest.approx(np.corrcoef(x, y)[0, 1] ** 2, rel=2**20 * EPS, abs=2**20 * EPS)
    assert coef[1] == pytest.approx(np.polyfit(x, y, 1)[0], rel=2**20 * EPS, abs=2**20 * EPS)


def test_comparison_perfect_predictor():
    """A target that is exactly ½ log2 C_k gets r² = 1 from C_k and less from ρ."""
    rng = np.random.default_rng(0)
    C = 2.0 ** rng.uniform(0, 10, 8)
    rho = 2.0 ** rng.uniform(0, 5, 8)
    table = pd.DataFrame(dict(dataset=list("abcdefgh"), k=1, rho=rho, gap=rng.uniform(0.01, 1, 8), C_k=C,
                              log2_onset=0.5 * np.log2(C) + 1, normalized_2_7=np.log2(C) - 14))
    row = comparison(table).set_index("target").loc["onset"]
    assert row["C_k"] == pytest.approx(1, abs=2**20 * EPS) and row["rho"] < 1


def test_onsets_from_exact_power_law():
    """A curve on its σ⁻² asymptote everywhere has onset 2^-4; one that is flat below 2^2 has onset 2^2."""
    p = np.arange(-4, 9)
    on = pd.DataFrame(dict(k=1, log2_sigma=p, normalized=-2.0 * p, value=2.0 ** (-2 * p), guarantee="rigorous",
                           certified_digits=20, normalized_lower_text="", normalized_upper_text=""))
    flat = on.assign(k=2, normalized=np.where(p < 2, -4.0, -2.0 * p))
    found = onsets_and_values(pd.concat([on, flat])).set_index("k")
    assert found.loc[1, "onset"] == 2.0**-4 and found.loc[2, "onset"] == 2.0**2
    assert found.loc[1, "normalized_2_7"] == -14


def test_onset_guarantee_reads_only_the_points_the_onset_reads():
    """An undetermined point (NaN, guarantee none) below the decisive one does not touch the onset's guarantee;
    one above it does. The margin is the least distance of the read deviations from the ±0.25 band's edge."""
    p = np.arange(-4, 9)
    flat = np.where(p < 2, -4.0, -2.0 * p)  # decisive point at 2^1: onset 2^2
    base = dict(k=1, log2_sigma=p, value=2.0 ** (-2 * p), certified_digits=20, normalized_lower_text="",
                normalized_upper_text="")
    below = pd.DataFrame(dict(base, normalized=np.where(p == -4, np.nan, flat),
                              guarantee=np.where(p == -4, "none", "rigorous")))
    above = below.assign(guarantee=np.where(p == 5, "heuristic", "rigorous"))
    found = onsets_and_values(below).iloc[0]
    assert found["onset"] == 4 and found["guarantee"] == "rigorous"
    assert found["onset_margin"] == 0.25 and found["onset_digits"] == 20  # the points on the asymptote: 0 vs 0.25
    assert onsets_and_values(above).iloc[0]["guarantee"] == "heuristic"


def test_cli_ties_part(tmp_path, data_dir, capsys):
    assert main(["study", "beyond", "--data-dir", str(data_dir), "--parts", "ties", "--out", str(tmp_path)]) == 0
    certs = pd.read_csv(tmp_path / "ties_certificates.csv").set_index("dataset")
    assert certs.loc["tic-tac-toe", "forced_pairs"] == 235
    pairs = pd.read_csv(tmp_path / "ties_pairs.csv").set_index(["dataset", "log2_sigma"])
    assert pairs.loc[("tic-tac-toe", -2), "exact"] and pairs.loc[("tic-tac-toe", -2), "isolated_pairs"] == 235
    runs = pd.read_csv(tmp_path / "ties_pairs_runs.csv")
    isolated = pairs.xs("tic-tac-toe")["isolated_pairs"].sum()
    assert ((runs["dataset"] == "tic-tac-toe") & (runs["kind"] == "pair")).sum() == isolated
    assert (tmp_path / "summary.md").is_file() and "ties_splitting" in capsys.readouterr().out


def test_cli_rejects_unknown_part(tmp_path, capsys):
    assert main(["study", "beyond", "--parts", "nope", "--out", str(tmp_path)]) == 2
    assert "unknown --parts" in capsys.readouterr().err
