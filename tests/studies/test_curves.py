"""convergence_curve: the frame's shape, exact σ and values, resuming, and agreement with an independent
mpmath computation at twice the digits up to σ = 2**40."""
from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from precise_kpca.studies import ResultsStore, convergence_curve
from precise_kpca.studies.curves import COLUMNS, exact_text, guarantee_summary, to_float

X_SMALL = np.random.default_rng(3).normal(size=(8, 3))


def test_frame_columns_rows_and_exact_sigma(tmp_path):
    frame = convergence_curve(X_SMALL, [-2, 0, 7], measures=("metric", "eigenprojection"), k=[1, 2], digits=8,
                              store=tmp_path / "s.sqlite", executor="serial", progress=False, naive_overlay=True)
    assert list(frame.columns) == COLUMNS
    certified = frame[frame["requested_backend"] == "auto"]
    naive = frame[frame["requested_backend"] == "float64-naive"]
    assert len(certified) == len(naive) == 3 * 3  # metric once, eigenprojection for k = 1 and 2
    assert list(certified["measure"]) == ["metric"] * 3 + ["eigenprojection"] * 6
    assert certified["k"].isna().sum() == 3 and list(certified["k"].dropna()) == [1, 1, 1, 2, 2, 2]
    assert list(certified["sigma"][:3]) == ["1/4", "1", "128"] and list(certified["log2_sigma"][:3]) == [-2, 0, 7]
    assert (certified["certified_digits"] >= 8).all() and (naive["certified_digits"] == 0).all()
    assert (naive["backend"] == "float64-naive").all()
    assert (certified.loc[certified["measure"] == "metric", "guarantee"] == "rigorous").all()
    assert set(certified["guarantee"]) <= {"rigorous", "heuristic"} and (certified["lower_text"] != "").all()
    assert (naive["guarantee"] == "none").all() and (naive[["lower_text", "upper_text"]] == "").all().all()
    assert naive["route"].str.startswith("naive").all() and (frame["reason"] == "").all()
    for text, value in zip(frame["value_text"], frame["value"]):
        assert float(text) == value


def test_rerun_reuses_the_store_and_adding_points_computes_only_those(tmp_path):
    store = tmp_path / "s.sqlite"
    options = dict(measures=("eigenvalue",), digits=6, store=store, executor="serial", progress=False)
    first = convergence_curve(X_SMALL, [0, 1], **options)
    assert first.attrs == {"computed": 2, "reused": 0}
    second = convergence_curve(X_SMALL, [0, 1], **options)
    assert second.attrs == {"computed": 0, "reused": 2}
    pd.testing.assert_frame_equal(first, second)
    wider = convergence_curve(X_SMALL, [1, 0, 2], **options)  # unsorted, overlapping
    assert wider.attrs == {"computed": 1, "reused": 2} and list(wider["log2_sigma"]) == [0, 1, 2]
    more_digits = convergence_curve(X_SMALL, [0], **dict(options, digits=9))  # a different key
    assert more_digits.attrs["computed"] == 1
    with ResultsStore(store) as db:
        assert len(db.frame()) == 4


def test_store_false_keeps_nothing_and_an_open_store_is_left_open(tmp_path):
    frame = convergence_curve(X_SMALL, [0], measures="metric", store=False, executor="serial", progress=False)
    assert len(frame) == 1
    with ResultsStore(tmp_path / "s.sqlite") as db:
        convergence_curve(X_SMALL, [0], measures="metric", store=db, executor="serial", progress=False, name="small")
        assert list(db.frame()["data_name"]) == ["small"]


def test_bad_arguments_are_clear_errors():
    call = dict(store=False, executor="serial", progress=False)
    with pytest.raises(ValueError, match="integers"):
        convergence_curve(X_SMALL, [0.5], **call)
    with pytest.raises(ValueError, match="empty"):
        convergence_curve(X_SMALL, [], **call)
    with pytest.raises(ValueError, match="unknown measure 'entropy'"):
        convergence_curve(X_SMALL, [0], measures=("entropy",), **call)
    with pytest.raises(ValueError, match="k must be"):
        convergence_curve(X_SMALL, [0], measures=("eigenprojection",), k=[1, 0], **call)
    with pytest.raises(ValueError, match="digits"):
        convergence_curve(X_SMALL, [0], digits=0, **call)
    with pytest.raises(ValueError, match="row 1, column 2"):
        convergence_curve(np.array([[0, 0, 0], [1, 1, np.nan], [2, 0, 1.0]]), [0], **call)


def test_progress_bar_goes_to_stderr_when_forced(capsys):
    convergence_curve(X_SMALL, [0, 1], measures="metric", store=False, executor="serial", progress="always")
    captured = capsys.readouterr()
    assert "2/2" in captured.err and captured.out == ""


def _fraction(x) -> Fraction:
    """The exact value of an mpf, from its (sign, mantissa, exponent) alone."""
    sign, man, exp, _ = x._mpf_
    return (-1) ** sign * int(man) * Fraction(2) ** exp


def test_interval_columns_hold_the_measurements_ends_exactly(tmp_path, monkeypatch):
    """Every text column read back exactly (as a Fraction, and as an mpf at its mantissa's bits) is the end the
    Measurement carried, through the store; None ends are empty; guarantee, route and reason as they were."""
    import precise_kpca.measures as measures

    made = {}
    real = measures.measure

    def recording(X, name, sigma, **options):
        made[name, str(sigma), options["backend"]] = m = real(X, name, sigma, **options)
        return m

    monkeypatch.setattr(measures, "measure", recording)
    frame = convergence_curve(X_SMALL, [-1, 0, 7], measures=("metric", "eigenvalue", "eigenprojection"), digits=8,
                              store=tmp_path / "s.sqlite", executor="serial", progress=False, naive_overlay=True)
    assert len(made) == len(frame) == 18
    ends = {"lower_text": "lower", "upper_text": "upper", "normalized_lower_text": "normalized_lower",
            "normalized_upper_text": "normalized_upper"}
    seen = set()
    for row in frame.itertuples():
        m = made[row.measure, row.sigma, row.requested_backend]
        assert (row.guarantee, row.route, row.reason, row.certified_digits) == (
            m.guarantee, str(m.route), m.reason, m.certified_digits)
        for column, attribute in ends.items():
            text, end = getattr(row, column), getattr(m, attribute)
            seen.add((column, end is None))
            if end is None:
                assert text == ""
                continue
            assert Fraction(text) == _fraction(end), (row, column)
            assert _parse(text, max(int(end._mpf_[3]), 1)) == end
    assert seen == {(column, none) for column in ends for none in (False, True)}  # both cases were exercised
    assert {"rigorous", "none"} <= set(frame["guarantee"])


def test_guarantee_summary_counts_and_takes_the_fewest_digits_of_rigorous_points_only():
    frame = pd.DataFrame(dict(guarantee=["rigorous", "heuristic", "rigorous", "none", "unknown"],
                              certified_digits=[12, 3, 9, 0, 40]))
    summary = guarantee_summary(frame)
    assert summary.counts == {"rigorous": 2, "heuristic": 1, "none": 1, "unknown": 1} and summary.points == 5
    assert summary.fewest_rigorous_digits == 9
    assert str(summary) == "2 rigorous (fewest certified digits 9), 1 heuristic, 1 none, 1 unknown"
    nothing = guarantee_summary(frame[frame["guarantee"] == "heuristic"])
    assert nothing.fewest_rigorous_digits is None and str(nothing) == "0 rigorous, 1 heuristic, 0 none"


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=-(2**400), max_value=2**400).filter(bool), st.integers(min_value=-4000, max_value=4000))
def test_exact_text_of_an_mpf_is_its_exact_decimal_value(mantissa, exponent):
    x = mpmath.mp.make_mpf(mpmath.libmp.from_man_exp(mantissa, exponent))
    assert Fraction(exact_text(x)) == mantissa * Fraction(2) ** exponent


def _parse(text: str, bits: int):
    ctx = mpmath.MPContext()
    ctx.prec = bits
    return mpmath.mp.make_mpf(ctx.mpf(text)._mpf_)


def test_exact_text_gives_back_the_number_at_its_precision_also_beyond_the_float_range():
    tiny = mpmath.mpf(2) ** -5000 * 3
    assert to_float(tiny) != to_float(tiny)  # NaN: not representable
    assert _parse(exact_text(tiny), 2) == tiny
    ctx = mpmath.MPContext()
    ctx.prec = 300
    third = mpmath.mp.make_mpf((ctx.mpf(1) / 3)._mpf_)
    assert len(exact_text(third)) > 90 and _parse(exact_text(third), 300) == third
    assert to_float(third) == 1 / 3
    assert exact_text(0.1) == "0.1" and to_float(0.1) == 0.1


# --- independent reference: Eqs. 17 and 18 straight from the definitions, in plain mpmath -------------------
def _reference(X: np.ndarray, sigma: Fraction, dps: int) -> tuple[mpmath.mpf, mpmath.mpf]:
    ctx = mpmath.MPContext()
    ctx.dps = dps
    n = X.shape[0]
    x = [[ctx.mpf(float(v)) for v in row] for row in X]  # floats convert exactly
    sq = [[sum((a - b) ** 2 for a, b in zip(x[i], x[j])) for j in range(n)] for i in range(n)]
    dist = sorted(ctx.sqrt(sq[i][j]) for i in range(n) for j in range(n))
    d_x = (dist[n * n // 2 - 1] + dist[n * n // 2]) / 2  # median of all N² entries, zeros included
    s_x = ctx.mpf(sigma.numerator) / sigma.denominator * d_x
    # Eq. 17: max |σ_X d_G − d_L| / diam, with d_G² = K_ii + K_jj − 2K_ij = −2 expm1(−u)
    metric = max(abs(s_x * ctx.sqrt(-2 * ctx.expm1(-sq[i][j] / (2 * s_x**2))) - ctx.sqrt(sq[i][j]))
                 for i in range(n) for j in range(n)) / dist[-1]

    def centered(a):
        rows = [sum(r) / n for r in a]
        grand = sum(rows) / n
        return ctx.matrix([[a[i][j] - rows[i] - rows[j] + grand for j in range(n)] for i in range(n)])

    gauss = centered([[s_x**2 * ctx.expm1(-sq[i][j] / (2 * s_x**2)) for j in range(n)] for i in range(n)])
    linear = centered([[sum(a * b for a, b in zip(x[i], x[j])) for j in range(n)] for i in range(n)])
    lam_g = sorted(ctx.eigsy(gauss, eigvals_only=True), reverse=True)
    lam_l = sorted(ctx.eigsy(linear, eigvals_only=True), reverse=True)
    eigen = max(abs(g - l) for g, l in zip(lam_g, lam_l)) / max(abs(v) for v in lam_l)
    return metric, eigen


def test_curve_agrees_with_an_independent_mp_computation_at_twice_the_digits_up_to_2_40():
    X = np.random.default_rng(21).normal(size=(6, 2))
    digits = 10
    frame = convergence_curve(X, [-3, 2, 12, 25, 40], measures=("metric", "eigenvalue"), digits=digits,
                              store=False, executor="serial", progress=False)
    assert (frame["certified_digits"] >= digits).all()
    for row in frame.itertuples():
        # twice the digits (of the request, or of a rigorous interval beyond), plus what Eq. 18 loses to
        # cancellation (2·log10 σ) and some guard digits
        wanted = digits + (row.certified_digits if row.guarantee == "rigorous" else digits)
        metric, eigen = _reference(X, Fraction(row.sigma), dps=wanted + int(0.61 * max(row.log2_sigma, 0)) + 10)
        reference = metric if row.measure == "metric" else eigen
        value = _parse(row.value_text, 1000)
        assert abs(value - reference) <= abs(reference) * mpmath.mpf(10) ** (1 - row.certified_digits), row
        if row.guarantee == "rigorous":  # the interval read back from its text holds the reference
            wide = mpmath.MPContext()
            wide.prec = 4000  # exact for the ends and the reference; the slack is far below the interval's width
            lower, upper, ref = wide.mpf(row.lower_text), wide.mpf(row.upper_text), wide.mpf(reference)
            slack = abs(ref) * wide.mpf(10) ** -(row.certified_digits + digits)
            assert lower - slack <= ref <= upper + slack, row
    assert (frame["guarantee"] == "rigorous").sum() >= 5  # every metric point at least


def test_naive_overlay_that_float64_cannot_evaluate_is_marked_per_point():
    """σ = 2^1000: float64 cannot hold u = |x_i − x_j|²/2σ_X² (σ_X² overflows, or u underflows once X is rescaled
    by 2^s), so the overlay point is NaN with its reason; the sweep goes on."""
    from precise_kpca.studies.curves import NAIVE_FAILURE

    X = np.random.default_rng(3).normal(size=(12, 3))
    frame = convergence_curve(X, [0, 1000], measures="metric", naive_overlay=True, store=False, executor="serial",
                              progress=False)
    naive = frame[frame["requested_backend"] == "float64-naive"].set_index("log2_sigma")
    assert naive.loc[1000, "reason"].startswith(NAIVE_FAILURE + ": ") and any(
        word in naive.loc[1000, "reason"] for word in ("underflows float64", "overflows float64"))
    assert np.isnan(naive.loc[1000, "normalized"]) and naive.loc[1000, "guarantee"] == "none"
    assert np.isfinite(naive.loc[0, "normalized"]) and naive.loc[0, "reason"] == ""
    certified = frame[frame["requested_backend"] != "float64-naive"].set_index("log2_sigma")
    assert certified.loc[1000, "guarantee"] == "rigorous" and certified.loc[1000, "certified_digits"] >= 10
