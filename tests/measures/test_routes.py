"""The route table (measures/routes.py): every engine is reachable with natural inputs, labelled, and checked.

Each test records the engines :func:`precise_kpca.measure` runs (a spy on ``engines.ENGINES``) and checks the
result against the independent reference (tests/reference.py) with :func:`tests.rigorous_check.check_measurement`:
rigorous intervals contain it, heuristic values agree with it to the digits they claim.
"""
import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

import precise_kpca
from precise_kpca.cli import main
from precise_kpca.measures import engines, plan, routes

from ..reference import reference
from ..rigorous_check import check_measurement, compare_context, in_context

EIGEN = [("eigenvalue", 1), ("eigenprojection", 2), ("pc", 2)]


def _data():
    """Well-separated linear eigenvalues; the structured range starts at σ ≈ 2⁴."""
    return np.random.default_rng(7).normal(size=(10, 3)) * np.array([3.0, 1.5, 0.5])


def _tied_boards():
    """12 one-hot boards of 3 cells × 3 states (the orbits of 012, 001, 112 under the cells' permutations): the
    symmetric group of the cells makes λ_1 = λ_2 and λ_3 = λ_4 exactly, in L and in the Gaussian Gram alike."""
    boards = [b for b in itertools.product(range(3), repeat=3) if sorted(b) in ([0, 1, 2], [0, 0, 1], [1, 1, 2])]
    return np.array([[float(b[c] == s) for c in range(3) for s in range(3)] for b in boards])


@pytest.fixture
def ran(monkeypatch):
    """The engines measure() runs, in order: (engine, certified digits or the exception's type name)."""
    calls = []
    for engine, run in list(engines.ENGINES.items()):
        def spy(*args, _engine=engine, _run=run, **kwargs):
            try:
                m = _run(*args, **kwargs)
            except Exception as exc:
                calls.append((_engine, type(exc).__name__))
                raise
            calls.append((_engine, m.certified_digits))
            return m
        monkeypatch.setitem(engines.ENGINES, engine, spy)
    return calls


def _quiet_measure(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return precise_kpca.measure(*args, **kwargs)


def _agrees_to_its_digits(m, X, aggregate="mean"):
    """A heuristic value: no enclosure, but on well-separated data it must agree with the reference."""
    ref = reference(X, m.measure, m.sigma, digits=max(m.certified_digits, 10), k=m.k or 1, aggregate=aggregate)
    ctx = compare_context()
    value, want = in_context(ctx, m.value), in_context(ctx, ref.value)
    assert m.certified_digits >= 1
    assert abs(value - want) <= abs(want) * ctx.mpf(10) ** (1 - m.certified_digits)


@pytest.mark.parametrize("backend", ["auto", "arb"])
@pytest.mark.parametrize("p", [-4, 20, 100])
def test_metric_is_enclosed_by_arb_balls(ran, backend, p):
    X = _data()
    m = precise_kpca.measure(X, "metric", Fraction(2) ** p, backend=backend)
    assert m.route.engine == "arb-ball" and m.backend == "arb" and ran == [("arb-ball", m.certified_digits)]
    assert check_measurement(m, X) == "rigorous"


def test_arb_is_refused_for_eigen_measures():
    with pytest.raises(ValueError, match="metric measure only"):
        precise_kpca.measure(_data(), "eigenvalue", 4, backend="arb")


@pytest.mark.skipif("frobenius-enclosure" not in engines.ENGINES, reason="the cka engine is not in the route table")
@pytest.mark.parametrize("p", [-4, 8, 40])
def test_cka_is_enclosed_by_frobenius_sums(ran, p):
    X = _data()
    m = precise_kpca.measure(X, "cka", Fraction(2) ** p)
    assert m.route.engine == "frobenius-enclosure" and [engine for engine, _ in ran] == ["frobenius-enclosure"]
    assert check_measurement(m, X) == "rigorous"


@pytest.mark.parametrize("name, k", EIGEN)
@pytest.mark.parametrize("p, engine", [(-4, "binary128-enclosure"), (0, "binary128-enclosure"),
                                       (20, "structured-enclosure"), (100, "structured-enclosure")])
def test_eigen_measures_small_sigma_binary128_large_sigma_structured(ran, name, k, p, engine):
    """The plan's first step is the engine of the result, and the only one run: it certifies the 10 digits."""
    X = _data()
    steps = plan(X, name, Fraction(2) ** p, k=k).steps
    assert ran == []  # planning runs no engine
    m = precise_kpca.measure(X, name, Fraction(2) ** p, k=k)
    assert steps[0].engine == engine == m.route.engine and ran == [(engine, m.certified_digits)]
    other = ({"binary128-enclosure", "structured-enclosure"} - {engine}).pop()
    # each rigorous route the other's fallback, the refined route last (N = 10 ≤ REFINED_MAX_N)
    assert [step.engine for step in steps] == [engine, other, "refined-enclosure"]
    assert check_measurement(m, X) == "rigorous"


def test_a_short_route_hands_over_to_the_next(ran):
    """pc k=2 at σ = 2⁴ with 28 digits: the structured route (first: its top block holds both vectors) certifies
    ~18, the binary128 enclosure the 28; the result is the second's, not short, no warning."""
    X = _data()
    assert [step.engine for step in plan(X, "pc", 16, k=2, digits=28).steps] == [
        "structured-enclosure", "binary128-enclosure", "refined-enclosure"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        m = precise_kpca.measure(X, "pc", 16, k=2, digits=28)
    (first, short_digits), (second, digits) = ran
    assert (first, second) == ("structured-enclosure", "binary128-enclosure") and short_digits < 28 <= digits
    assert m.route.engine == "binary128-enclosure" and not m.short
    assert check_measurement(m, X) == "rigorous"


@pytest.fixture
def without_refined(monkeypatch):
    """The route table without its last rigorous step (refined-enclosure), to test what happens when all are short."""
    monkeypatch.setattr(routes, "REFINED_MAX_N", 0)


@pytest.mark.parametrize("name, p, digits", [("eigenprojection", 6, 28), ("eigenvalue", 8, 34)])
def test_all_routes_short_returns_the_best_rigorous_one_with_a_warning(ran, without_refined, name, p, digits):
    """Both enclosures short of the request: eigenprojection at σ = 2⁶ (~18 structured, ~25 binary128: the best is
    the second) and the eigenvalue at σ = 2⁸ (~31 structured, ~25 binary128: the best is the first)."""
    X = _data()
    with pytest.warns(RuntimeWarning, match="routes tried"):
        m = precise_kpca.measure(X, name, Fraction(2) ** p, digits=digits)
    assert [engine for engine, _ in ran] == ["structured-enclosure", "binary128-enclosure"]
    assert all(certified < digits for _, certified in ran) and ran[0][1] != ran[1][1]
    best_engine, best_digits = max(ran, key=lambda call: call[1])
    assert m.short and m.guarantee == "rigorous" and m.route.engine == best_engine
    assert m.certified_digits == best_digits and "routes tried" in m.reason
    assert check_measurement(m, X) == "short"


def test_the_refined_route_certifies_what_both_enclosures_leave_short(ran):
    """The same eigenprojection request with the whole table: the refined route (arb Gram, refinement to 200
    digits) certifies the 28 digits after both enclosures fell short; no warning."""
    X = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        m = precise_kpca.measure(X, "eigenprojection", 64, digits=28)
    assert [engine for engine, _ in ran][:2] == ["structured-enclosure", "binary128-enclosure"]
    assert all(certified < 28 for _, certified in ran[:2])
    assert ran[2][0] == "refined-enclosure" and m.route.engine == "refined-enclosure"
    assert not m.short and m.certified_digits >= 28
    assert check_measurement(m, X) == "rigorous"


def test_heuristic_digits_only_when_asked_and_labelled(ran, without_refined):
    """The same request with guarantee="heuristic": both enclosures short, then the agreement of two precisions."""
    X = _data()
    steps = plan(X, "eigenprojection", 64, digits=28, guarantee="heuristic").steps
    assert [step.engine for step in steps][-1] == "agreement"
    m = _quiet_measure(X, "eigenprojection", 64, digits=28, guarantee="heuristic")
    assert [engine for engine, _ in ran] == ["structured-enclosure", "binary128-enclosure", "agreement"]
    assert m.guarantee == "heuristic" and m.route.engine == "agreement" and m.certified_digits >= 28
    _agrees_to_its_digits(m, X)


@pytest.mark.parametrize("backend, dps", [("float64", None), ("mp", 40)])
@pytest.mark.parametrize("name, p", [("eigenvalue", 20), ("eigenprojection", 0), ("metric", 8)])
def test_explicit_backends_are_the_heuristic_agreement(ran, backend, dps, name, p):
    X = _data()
    m = _quiet_measure(X, name, Fraction(2) ** p, backend=backend, dps=dps)
    assert ran == []  # the route table is not consulted
    assert m.guarantee == "heuristic" and m.route.engine == "agreement" and f"at {backend}(dps=" in m.route.detail
    _agrees_to_its_digits(m, X)


@pytest.mark.parametrize("name", ["metric", "eigenvalue", "eigenprojection", "pc"])
def test_float64_naive_is_unchecked(ran, name):
    m = precise_kpca.measure(_data(), name, 4, backend="float64-naive")
    assert ran == [] and m.route.engine == "naive" and m.guarantee == "none" and m.certified_digits == 0
    assert m.lower is None and isinstance(m.value, float)


@pytest.mark.parametrize("name, k", [("eigenprojection", 1), ("eigenprojection", 3), ("pc", 2)])
@pytest.mark.parametrize("p", [0, 20])
def test_an_exact_tie_stops_the_plan_with_its_proof(ran, name, k, p):
    """k cuts an exact tie of the boards' linear spectrum (k = 1, 3; pc k=2 takes the first vector alone): NaN, the
    exact proof in ``reason``, and no second route tried (none could give a value that does not exist)."""
    X = _tied_boards()
    assert not reference(X, name, Fraction(2) ** p, k=k).determined  # the reference finds the tie too
    first = plan(X, name, Fraction(2) ** p, k=k).steps[0].engine
    with pytest.warns(RuntimeWarning, match="not determined"):
        m = precise_kpca.measure(X, name, Fraction(2) ** p, k=k)
    assert not m.determined and m.guarantee == "none" and m.route.engine == first
    assert ran == [(first, "Undetermined")]
    assert "are equal" in m.reason and "root of multiplicity 2 of the integer characteristic polynomial" in m.reason


def test_a_group_holding_a_whole_tie_is_a_number(ran):
    """k = 2 takes the whole tied pair: the eigenprojection is invariant under rotations inside it."""
    X = _tied_boards()
    m = precise_kpca.measure(X, "eigenprojection", 1, k=2)
    assert check_measurement(m, X) == "rigorous"


@pytest.mark.parametrize("guarantee", ["rigorous", "heuristic"])
@pytest.mark.parametrize("measure, sigma, k", [("metric", "1/16", 1), ("eigenvalue", "1", 1),
                                               ("pc", "2**30", 2), ("eigenprojection", "2**100", 2)])
def test_cli_plan_prints_the_steps(tmp_path, capsys, ran, guarantee, measure, sigma, k):
    X = _data()
    path = tmp_path / "data.npy"
    np.save(path, X)
    status = main(["plan", str(path), "--measure", measure, "--sigma", sigma, "--k", str(k), "--guarantee", guarantee])
    out = capsys.readouterr().out
    assert status == 0 and ran == []
    the_plan = plan(X, measure, sigma, k=k, guarantee=guarantee)
    assert the_plan.describe() in out
    for i, step in enumerate(the_plan.steps):
        assert f"  {i + 1}. {step.engine}: " in out
    assert ("agreement" in out) == (guarantee == "heuristic" and measure != "metric")


def test_the_eigenvalue_measure_past_the_float64_residual_is_enclosed(ran):
    """σ = 2^400: E's entries (~2^-800) underflow float64, so the structured approximation is built at σ·2^-m and
    scaled back exactly (it was a ValueError); the enclosure still certifies the digits and holds the reference."""
    X = _data()
    m = precise_kpca.measure(X, "eigenvalue", Fraction(2) ** 400)
    assert m.route.engine == "structured-enclosure" and not m.short and m.certified_digits >= 10
    assert check_measurement(m, X) == "rigorous"


def test_a_linear_tie_is_named_where_every_route_fails_first_on_the_gaussian_side(data_dir):
    """tic-tac-toe at σ = 2⁻⁴: the binary128 enclosure of every group up to k = 5 meets the board's forced Gaussian
    pairs and the structured range has not begun, but k = 2 cuts an exact linear tie (eigenvalues 1 and 2), so the
    refusal carries that proof (it said "no rigorous route applies"); k = 1 cuts no linear tie and keeps the routes'
    reasons, with the route the plan left out (N = 958 is past the refined route's rows) and what it would take."""
    from precise_kpca.datasets import load

    X = load("tic-tac-toe", data_dir=data_dir)
    for name in ("eigenprojection", "pc"):
        m = _quiet_measure(X, name, sigma=Fraction(1, 16), k=2, digits=10)
        assert m.guarantee == "none" and math.isnan(m.normalized)
        assert m.reason.startswith("not determined: linear eigenvalues 1 and 2 are equal"), m.reason
        assert "multiplicity 2 of the integer characteristic polynomial" in m.reason
    m = _quiet_measure(X, "eigenprojection", sigma=Fraction(1, 16), k=1, digits=10)
    assert m.guarantee == "none" and m.reason.startswith("no rigorous route applies"), m.reason
    assert "refined-enclosure (arb Gram refined up to 200 digits, which separates near-ties) not tried: N = 958 > " \
           "REFINED_MAX_N = 400" in m.reason, m.reason
