"""precise-kpca certify / rff-rate / neighbours: the neighbouring systems of issue 7 on small inputs."""
from __future__ import annotations

import re
from decimal import Decimal

import numpy as np
import pytest

from precise_kpca.approx.convergence import large_sigma_convergence
from precise_kpca.approx.rff import rff_convergence
from precise_kpca.certify.psd import certify_kernel_psd, experiment1
from precise_kpca.cli import COMMANDS, main
from precise_kpca.cli.certify import ARTICLE, _interval
from precise_kpca.cli.rff_rate import QUICK

INTERVAL = re.compile(r"\[(-?[\d.e+-]+), (-?[\d.e+-]+)\]")


@pytest.fixture
def points(tmp_path):
    """12 generic points in R^3 (degree-2 polynomial Gram of rank 10, linear Gram of rank 3)."""
    path = tmp_path / "pts.npy"
    np.save(path, np.random.default_rng(3).normal(size=(12, 3)))
    return path


def intervals(line: str) -> list[tuple[Decimal, Decimal]]:
    return [(Decimal(lo), Decimal(hi)) for lo, hi in INTERVAL.findall(line)]


def test_commands_are_registered():
    names = {module for module, _ in COMMANDS.values()}
    assert {"certify", "rff_rate", "neighbours"} <= names


def test_printed_enclosures_are_rounded_outward():
    rng = np.random.default_rng(0)
    for lo, hi in np.sort(rng.normal(scale=10.0 ** rng.integers(-8, 8, size=(200, 1)), size=(200, 2)), axis=1):
        (plo, phi), = intervals(_interval(lo, hi))
        assert plo <= Decimal(lo) and Decimal(hi) <= phi


def test_certify_without_data_is_experiment1(capsys):
    assert main(["certify"]) == 0
    lines = capsys.readouterr().out.splitlines()
    certificates = experiment1()
    for key, inertia, verdict in [("rbf", (50, 0, 0), "PD"), ("poly", (10, 40, 0), "PSD"),
                                  ("invalid", (49, 0, 1), "NOT PSD (1 negative)")]:
        cert = certificates[key]
        assert cert.inertia == inertia
        line = next(line for line in lines if str(inertia) in line)
        assert verdict in line and cert.method in line
        (min_lo, min_hi), (max_lo, max_hi) = intervals(line)
        assert min_lo <= Decimal(cert.min_eigenvalue[0]) and Decimal(cert.min_eigenvalue[1]) <= min_hi
        assert max_lo <= Decimal(cert.max_eigenvalue[0]) and Decimal(cert.max_eigenvalue[1]) <= max_hi
        # the article's 6-decimal values lie within rounding of the certified enclosures
        article_min, article_max = (Decimal(v) for v in ARTICLE[key])
        half_ulp = Decimal("5e-7")
        assert min_lo - half_ulp <= article_min <= min_hi + half_ulp
        assert max_lo - half_ulp <= article_max <= max_hi + half_ulp


@pytest.mark.parametrize("argv, inertia, status", [
    (["--kernel", "linear"], (3, 9, 0), 0),
    (["--kernel", "poly"], (10, 2, 0), 0),
    (["--kernel", "poly", "--degree", "1", "--coef0", "0"], (3, 9, 0), 0),
    (["--kernel", "rbf", "--gamma", "0.1"], (12, 0, 0), 0),
    ([], (12, 0, 0), 0),
    (["--kernel", "neg-distance"], (11, 0, 1), 1),
])
def test_certify_data(argv, inertia, status, points, capsys):
    assert main(["certify", str(points), *argv]) == status
    out = capsys.readouterr().out
    assert f"inertia (+, 0, -)  {inertia}" in out
    assert ("NOT PSD" in out) == (status == 1)


def test_certify_reads_gamma_exactly(points, capsys):
    assert main(["certify", str(points), "--kernel", "rbf", "--gamma", "0.1"]) == 0
    out = capsys.readouterr().out
    assert "rbf (gamma=1/10)" in out
    from fractions import Fraction

    cert = certify_kernel_psd(np.load(points), "gaussian", gamma=Fraction(1, 10))
    (lo, hi), = intervals(next(line for line in out.splitlines() if line.startswith("min eigenvalue")))
    assert lo <= Decimal(cert.min_eigenvalue[0]) and Decimal(cert.min_eigenvalue[1]) <= hi


def test_certify_standardized_sigma_is_the_papers_gram(points, capsys):
    from fractions import Fraction

    from precise_kpca.numerics import geometry

    X = np.load(points)
    assert main(["certify", str(points), "--sigma", "2"]) == 0
    out = capsys.readouterr().out
    d_x = geometry(X).median_distance
    assert f"rbf (sigma=2 standardized: sigma_X = sigma·d_X, d_X = {d_x!r})" in out
    cert = certify_kernel_psd(X, "rbf", sigma=2 * Fraction(d_x))  # scikit-learn's name for the Gaussian
    (lo, hi), = intervals(next(line for line in out.splitlines() if line.startswith("max eigenvalue")))
    assert lo <= Decimal(cert.max_eigenvalue[0]) and Decimal(cert.max_eigenvalue[1]) <= hi
    assert main(["certify", str(points), "--sigma", "2", "--gamma", "0.1"]) == 2
    assert "--gamma or --sigma, not both" in capsys.readouterr().err
    assert main(["certify", str(points), "--kernel", "poly", "--sigma", "2"]) == 2


def test_rff_rate_quick(capsys):
    assert main(["rff-rate", "--quick"]) == 0
    out = capsys.readouterr().out
    expected = rff_convergence(**QUICK)
    rows = [line.split() for line in out.splitlines() if line.strip() and line.split()[0].isdigit()]
    assert [int(row[0]) for row in rows] == list(QUICK["Ds"])
    np.testing.assert_allclose([float(row[1]) for row in rows], expected.rmse_mean, rtol=1e-5)
    assert f"slope {expected.slope:.4f} ± {expected.slope_se:.4f}" in out
    assert abs(expected.slope + 0.5) < 3 * expected.slope_se + 0.01
    assert all(row[-1] == "none" for row in rows) and "guarantee: none (float64" in out
    assert "statistical estimate, not a numerical bound" in out


def test_rff_rate_enclosed_columns_are_rigorous(monkeypatch, capsys):
    monkeypatch.setattr("precise_kpca.cli.rff_rate.QUICK", {"Ds": (10, 20, 40), "n_trials": 2, "n_pairs": 20})
    assert main(["rff-rate", "--quick", "--enclose"]) == 0
    out = capsys.readouterr().out
    expected = rff_convergence(Ds=(10, 20, 40), n_trials=2, n_pairs=20, enclose=True).enclosure
    rows = [line.split() for line in out.splitlines() if line.strip() and line.split()[0].isdigit()]
    assert [row[-1] for row in rows] == ["rigorous"] * 3
    for row, rmse, predicted in zip(rows, expected.rmse_mean.entries, expected.predicted_rmse.entries):
        assert row[1] == rmse.text(6) and row[2] == predicted.text(6)
    assert f"slope enclosure {expected.slope.text(8)}" in out and "rigorous" in out


def _component_rows(out: str) -> list[list[str]]:
    return [line.split() for line in out.splitlines() if re.match(r"^\s+\d+\s+\S+e[+-]\d+\s+(rigorous|heuristic|none)", line)]


def _sigma_rows(out: str) -> dict[int, list[str]]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("log2 sigma"))
    rows = {}
    for line in lines[start + 1:]:
        if not re.match(r"^\s+-?\d+\s", line) or len(line.split()) != 10:
            break
        rows[int(line.split()[0])] = line.split()
    return rows


def test_neighbours_nystrom_matches_the_library(points, capsys):
    argv = ["neighbours", str(points), "--method", "nystrom", "--sigmas", "4:10:2", "--landmarks", "6", "--seed", "1"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    study = large_sigma_convergence(np.load(points), ["2**4", "2**6", "2**8", "2**10"], method="nystrom",
                                    n_landmarks=6, random_state=1)
    assert "m=6 landmarks, seed 1" in out and "guarantee: rigorous (Arb ball enclosures" in out
    rows = _component_rows(out)
    assert [int(row[0]) for row in rows] == [1, 2, 3]
    for l, row in enumerate(rows):
        assert float(row[1]) == pytest.approx(study.limit.value[l], rel=1e-7) and row[2] == "rigorous"
        assert float(row[3]) == pytest.approx(study.rate.value[l], rel=1e-4)
        assert float(row[4]) == pytest.approx(study.constant.value[l], rel=1e-4) and row[5] == "rigorous"
        assert int(row[6]) == study.relative_error.digits[:, l].min()
    for s, (p, row) in enumerate(sorted(_sigma_rows(out).items())):
        errors = study.relative_error[s]
        assert float(row[1]) == pytest.approx(errors.value.min(), rel=1e-4)
        assert float(row[2]) == pytest.approx(errors.value.max(), rel=1e-4)
        assert int(row[3]) == errors.digits.min() >= 10 and row[4] == "rigorous"
        assert float(row[5]) == pytest.approx(study.gram_error.value[s], rel=1e-4) and row[7] == "rigorous"
        for printed, digits in ((row[1], row[3]), (row[2], row[3]), (row[5], row[6])):
            assert len(printed.split("e")[0].replace(".", "").lstrip("-")) <= int(digits)


@pytest.mark.parametrize("method, extra, rate", [
    ("exact", [], -2), ("rf-cos", ["--features", "8"], -1), ("rf-sincos", ["--features", "8"], -2),
])
def test_neighbours_methods_print_their_rates(method, extra, rate, points, capsys):
    assert main(["neighbours", str(points), "--method", method, "--sigmas=6:12:2", *extra]) == 0
    out = capsys.readouterr().out
    rows = _component_rows(out)
    assert len(rows) == 3
    for row in rows:
        assert float(row[3]) == pytest.approx(rate, abs=0.05)  # Theorem 3's σ⁻² (σ⁻¹ for the cos map)
        assert row[5] == "rigorous" and int(row[6]) >= 10  # digits of the rigorous errors


def test_neighbours_at_sigma_2_28_reports_a_positive_rigorous_error_and_a_rate(points, capsys):
    """Formed in float64 these errors were 0.0 and the rates nan."""
    assert main(["neighbours", str(points), "--method", "nystrom", "--sigmas=16:28:4", "--landmarks", "5"]) == 0
    out = capsys.readouterr().out
    row = _sigma_rows(out)[28]
    assert 0 < float(row[1]) < 2.0**-50 and row[4] == "rigorous" and int(row[3]) >= 10
    for component in _component_rows(out):
        assert float(component[3]) == pytest.approx(-2, abs=0.01) and component[5] == "rigorous"
    assert "rates not reported" not in out and "nan" not in out


def test_neighbours_heuristic_columns_are_labelled_heuristic(points, capsys):
    assert main(["neighbours", str(points), "--method", "nystrom", "--sigmas=8:16:4", "--landmarks", "5",
                 "--guarantee", "heuristic"]) == 0
    out = capsys.readouterr().out
    assert "guarantee: heuristic (agreement of the mp backend at two precisions: NOT an enclosure" in out
    rows = _sigma_rows(out)
    assert sorted(rows) == [8, 12, 16]
    for row in rows.values():
        assert row[4] == "heuristic" and row[5] == "nan" and row[7] == "none"  # no Gram error on this route
    for component in _component_rows(out):
        assert component[2] == "heuristic" and component[5] == "heuristic"
    assert "rigorous" not in out and "certified" not in out.replace("not certified", "")


@pytest.mark.parametrize("argv, message", [
    (["certify", "--kernel", "linear"], "--kernel need(s) DATA"),
    (["certify", "{data}", "--kernel", "linear", "--gamma", "1"], "--gamma does not apply to --kernel linear"),
    (["certify", "{data}", "--kernel", "rbf", "--degree", "3"], "--degree does not apply to --kernel rbf"),
    (["certify", "{data}", "--kernel", "poly", "--degree", "0"], "degree must be an integer >= 1"),
    (["certify", "{missing}"], "missing.csv"),
    (["neighbours", "{data}", "--method", "nystrom", "--landmarks", "2"], "n_landmarks must be in [d+1=4, n=12]"),
    (["neighbours", "{data}", "--method", "exact", "--features", "10"], "--features applies to --method rf-cos"),
    (["neighbours", "{data}", "--method", "rf-cos", "--landmarks", "5"], "--landmarks applies to --method nystrom"),
    (["neighbours", "{data}", "--method", "rf-cos", "--features", "0"], "--features must be a positive integer"),
    (["neighbours", "{data}", "--method", "rf-sincos", "--features", "5"], "even n_components"),
    (["neighbours", "{data}", "--method", "exact", "--sigmas", "3:1:-1"], "two increasing values"),
    (["neighbours", "{data}", "--method", "exact", "--sigmas", "x"], "cannot read 'x'"),
    (["neighbours", "{data}", "--method", "exact", "--digits", "0"], "--digits must be a positive integer"),
])
def test_bad_values_exit_2_with_a_message(argv, message, points, tmp_path, capsys):
    argv = [a.format(data=points, missing=tmp_path / "missing.csv") for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"precise-kpca {argv[0]}: error: ") and message in err and "Traceback" not in err


@pytest.mark.parametrize("argv, message", [
    (["certify", "{data}", "--gamma", "abc"], "'abc' is not a number"),
    (["certify", "{data}", "--kernel", "sigmoid"], "invalid choice: 'sigmoid'"),
    (["neighbours", "{data}"], "the following arguments are required: --method"),
    (["neighbours", "{data}", "--method", "kmeans"], "invalid choice: 'kmeans'"),
    (["neighbours", "{data}", "--method", "exact", "--guarantee", "certified"], "invalid choice: 'certified'"),
    (["rff-rate", "--slow"], "unrecognized arguments: --slow"),
])
def test_bad_arguments_exit_2_from_argparse(argv, message, points, capsys):
    assert main([a.format(data=points) for a in argv]) == 2  # main returns argparse's status (issue 22)
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
