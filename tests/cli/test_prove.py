from precise_kpca.cli import main


def test_prove_runs_a_module_and_prints_its_claims(capsys):
    assert main(["prove", "lemma2"]) == 0
    out = capsys.readouterr().out
    assert "Lemma 2" in out and "verified" in out


def test_prove_rejects_unknown_modules(capsys):
    assert main(["prove", "lemma9"]) == 2
    assert "unknown proof module(s) lemma9" in capsys.readouterr().err
