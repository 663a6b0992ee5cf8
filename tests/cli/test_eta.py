"""``precise-kpca eta`` on a small .npy file and on wine."""
import numpy as np
import pandas as pd

from precise_kpca.cli import main


def test_eta_on_npy_file_writes_plot_and_curve(tmp_path, capsys):
    path = tmp_path / "points.npy"
    np.save(path, np.random.default_rng(0).normal(size=(25, 3)))
    out = tmp_path / "out"
    assert main(["eta", str(path), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "lim C (sigma -> inf)" in text and "1/8" in text and "eigenprojection k=3" in text
    limits = [line for line in text.splitlines() if line.startswith("lim sigma^2")]
    assert len(limits) == 4 and all("rigorous digits" in line for line in limits)  # k ≤ rank 3
    assert (out / "eta.png").read_bytes()[:4] == b"\x89PNG"
    curve = pd.read_csv(out / "eta_curve.csv")
    assert list(curve["log2_sigma"]) == list(range(-4, 61))
    assert (curve["C"] <= 1 / 8).all() and (curve["overshoot"] >= 8).all()


def test_eta_on_wine(capsys):
    assert main(["eta", "wine", "--no-spectral"]) == 0
    text = capsys.readouterr().out
    assert "537.092" in text  # η of wine
    assert "4296.74 = 8 eta" in text


def test_eta_heuristic_limits_say_so(tmp_path, capsys):
    path = tmp_path / "points.npy"
    np.save(path, np.random.default_rng(1).normal(size=(12, 2)))
    assert main(["eta", str(path), "--limit-guarantee", "heuristic"]) == 0
    limits = [line for line in capsys.readouterr().out.splitlines() if line.startswith("lim sigma^2")]
    assert limits and all("heuristic digits" in line for line in limits)


def test_eta_bad_data_exits_2(tmp_path, capsys):
    assert main(["eta", str(tmp_path / "missing.npy")]) == 2
    assert "precise-kpca eta: error" in capsys.readouterr().err
