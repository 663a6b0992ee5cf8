"""Issue 19's independent audit: the default ``measure(...)`` against plain mpmath on data the tests never see.

Every seed draws one input (a row subsample of one of the paper's 30 sets, preprocessed as the paper does, or a
hard synthetic case: a square's or a cube's orbit, mirrored data, duplicate rows, rank-deficient integers, a row
2^20 away, integers, dyadics; N 8…60, some with N ≤ d + 1), one σ (log-uniform over 2^-4…2^100, a few at
2^200…2^1000), the digits asked (10…40) and :data:`SPECS_PER_SEED` measures (metric, eigenvalue,
eigenprojection mean/max, pc, cka; k 1…5, also above the rank). Each library call runs in a forked child with a
timeout, so a hang is counted, not waited for; the reference (``tests/reference.py``: mpmath eigsy from the exact
data at 2·digits + 20 digits, None where the value depends on a basis) runs in another child. Classes:

* ``ok`` — rigorous, and the reference (widened by its own error) lies in ``[lower, upper]``; ``short-flagged``
  the same with fewer digits than asked and the measurement saying so (``short``, a ``reason``);
* ``refused-tie`` — NaN with a reason where the reference finds the value basis-dependent;
  ``refused-determined`` — NaN where the reference finds it determined (not a failure of rigour: counted);
  ``k-beyond-rank`` — the documented ``ValueError`` for k above rank(HX); ``reference-failed`` — the reference
  itself timed out or failed (not the library's fault);
* findings: ``overclaim`` (the reference outside the interval, confirmed by a reference at doubled digits, or the
  midpoint off by more than its certified digits, or the normalized interval missing log2 ref/ref_f0),
  ``short`` (fewer digits than asked, unflagged), ``basis-dependent-number`` (a number where the reference,
  escalated to 480 digits, still finds a tie), ``heuristic`` (a default call not rigorous yet not NaN),
  ``crash`` (any exception but the documented ValueError), ``hang`` (past ``--timeout``).

Rows are appended to the CSV per seed as it completes; a rerun skips the seeds already there (resumable).

Usage::

    OPENBLAS_NUM_THREADS=1 nice -n 5 python benchmarks/audit.py --seeds 0:200 --csv audit.csv   # run (resumes)
    python benchmarks/audit.py --seeds 0:400:2 --csv audit.csv    # a shard: every other seed (run 0:400:2 and 1:400:2)
    python benchmarks/audit.py --summary --csv audit.csv          # the tables from the CSV alone
    python benchmarks/audit.py --seeds 6,53 --csv rerun.csv       # rerun the seeds of two findings
    python benchmarks/audit.py --seeds 0:600 --only metric --csv metric.csv   # only the metric calls of each seed
    python benchmarks/audit.py --show 17                          # the input and calls of seed 17
"""
from __future__ import annotations

import argparse
import csv
import math
import multiprocessing
import os
import sys
import time
import traceback
import warnings
from collections import Counter
from fractions import Fraction
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # a shared machine: threaded BLAS spins under load

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout (and its tests/ package), not another installed copy

import precise_kpca  # noqa: E402
from precise_kpca import datasets  # noqa: E402
from precise_kpca.backends.base import as_fraction  # noqa: E402
from precise_kpca.measures.measurement import EXACT_DIGITS  # noqa: E402
from tests.reference import exact_rank, exact_rows, reference  # noqa: E402

MASTER_SEED = 19  # issue 19: every case is drawn from default_rng([MASTER_SEED, seed])
SPECS_PER_SEED = 3
REFERENCE_MAX_DIGITS = 60  # the reference is asked for min(max(requested, certified), 60) digits
REFERENCE_MAX_ESCALATION = 480  # a tie floor of 10^-490 (the tests' rigorous_check uses the same)
FINDINGS = ("overclaim", "short", "basis-dependent-number", "heuristic", "crash", "hang")
CLASSES = ("ok", "short-flagged", "refused-tie", "refused-determined", "k-beyond-rank", "reference-failed") + FINDINGS
FIELDS = ("seed", "call", "source", "N", "d", "rank", "log2_sigma", "sigma", "measure", "k", "aggregate", "digits",
          "class", "guarantee", "certified", "flagged_short", "value", "lower", "upper", "reference",
          "reference_digits", "margin", "lib_seconds", "ref_seconds", "engine", "note")
SYNTHETIC = ("square-orbit", "cube-orbit", "mirrored", "duplicates", "rank-deficient", "outlier", "integer",
             "dyadic", "wide")


# ---------------------------------------------------------------- inputs

def draw_case(seed: int, data: dict) -> dict:
    """The input, σ, digits and measure calls of ``seed`` (deterministic given the data sets)."""
    rng = np.random.default_rng([MASTER_SEED, seed])
    for _ in range(100):  # redraw the rare input whose median distance is 0 (invalid, not a finding)
        if rng.random() < 0.55:
            name = sorted(data)[rng.integers(len(data))]
            X, source = _subsample(rng, data[name]), name
        else:
            family = SYNTHETIC[rng.integers(len(SYNTHETIC))]
            X, source = _synthetic(rng, family), family
        if _median_positive(X):
            break
    if rng.random() < 0.07:
        sigma, n_cap = Fraction(2) ** int(rng.choice([200, 300, 500, 700, 1000])), 24
    else:
        sigma, n_cap = Fraction(2) ** int(rng.integers(-4, 101)) * Fraction(8 + int(rng.integers(8)), 8), 60
    if len(X) > n_cap:  # σ ≥ 2^200: the reference works at ~2·log10 σ digits; keep its eigsy to seconds
        X = X[:n_cap]
        source += f"[:{n_cap}]"
    specs = [("metric", 1, "mean"), ("eigenvalue", 1, "mean"), ("eigenprojection", 0, "mean"),
             ("eigenprojection", 0, "max"), ("pc", 0, "mean"), ("cka", 1, "mean")]
    chosen = rng.choice(len(specs), SPECS_PER_SEED, replace=False)
    calls = [(specs[i][0], specs[i][1] or int(rng.integers(1, 6)), specs[i][2]) for i in sorted(chosen)]
    return {"seed": seed, "source": source, "X": np.ascontiguousarray(X, dtype=np.float64), "sigma": sigma,
            "digits": int(rng.integers(10, 41)), "calls": calls, "call_ids": list(range(len(calls)))}


def _subsample(rng, X: np.ndarray) -> np.ndarray:
    n_total, d = X.shape
    if d >= 7 and rng.random() < 0.25:
        n = int(rng.integers(8, min(60, d + 1) + 1))  # N ≤ d + 1: rank(HX) ≤ N − 1
    else:
        n = int(round(math.exp(rng.uniform(math.log(8), math.log(60)))))
    return X[np.sort(rng.choice(n_total, min(n, n_total), replace=False))]


def _synthetic(rng, family: str) -> np.ndarray:
    n = int(round(math.exp(rng.uniform(math.log(8), math.log(60)))))
    if family in ("square-orbit", "cube-orbit"):
        dim = 2 if family == "square-orbit" else 3
        bases = max(1, n // (8 if dim == 2 else 48))
        base = rng.integers(-4, 5, size=(bases, dim)) * (2.0 ** -int(rng.integers(0, 4)))
        X = _signed_permutation_orbit(base)
        return np.hstack([X, np.zeros((len(X), int(rng.integers(0, 3))))])  # zero columns: the same geometry
    d = int(rng.integers(1, 9))
    if family == "mirrored":
        half = rng.normal(size=(max(n // 2, 4), d))
        mirror = -half if rng.random() < 0.5 else half * np.where(np.arange(d) == 0, -1.0, 1.0)
        return np.vstack([half, mirror])
    if family == "duplicates":
        X = rng.normal(size=(n, d))
        copies = int(rng.integers(1, max(2, n // 6)))
        X[rng.choice(n, copies, replace=False)] = X[rng.choice(n, copies)]
        return X
    if family == "rank-deficient":
        r = int(rng.integers(1, 4))
        return (rng.integers(-3, 4, size=(n, r)) @ rng.integers(-3, 4, size=(r, max(d, r + 1)))).astype(float)
    if family == "outlier":
        X = rng.normal(size=(n, d))
        X[rng.integers(n)] += 2.0**20 * rng.choice([-1.0, 1.0], size=d)
        return X
    if family == "integer":
        return rng.integers(-5, 6, size=(n, d)).astype(float)
    if family == "dyadic":
        scale = 2.0 ** int(rng.integers(-40, 41))
        return rng.integers(-2**20, 2**20, size=(n, d)) * 2.0 ** -int(rng.integers(0, 31)) * scale
    wide_d = int(rng.integers(n - 1, n + 6))  # "wide": N ≤ d + 1
    return rng.normal(size=(n, max(wide_d, 1)))


def _signed_permutation_orbit(base: np.ndarray) -> np.ndarray:
    """The orbit of the rows under all coordinate permutations and sign flips (exact: copies and negations)."""
    from itertools import permutations, product
    dim = base.shape[1]
    seen = set()
    for row in base:
        for perm in permutations(range(dim)):
            for signs in product((1.0, -1.0), repeat=dim):
                seen.add(tuple(float(s * row[p]) for s, p in zip(signs, perm)))
    return np.array(sorted(seen), dtype=np.float64)


def _median_positive(X: np.ndarray) -> bool:
    """The full median (N² entries, zeros of equal rows included) is positive: at most N²//2 zero entries."""
    n = len(X)
    _, counts = np.unique(X, axis=0, return_counts=True)
    return n >= 2 and int((counts**2).sum()) <= (n * n) // 2


# ---------------------------------------------------------------- children

def _in_child(fn, args, timeout: float):
    """(status, payload, seconds): fn(*args) in a forked child; status "ok", "error" (payload: the exception's
    type, message and traceback) or "timeout" (the child is killed)."""
    receive, send = multiprocessing.Pipe(duplex=False)

    def target():
        try:
            send.send(("ok", fn(*args)))
        except BaseException as exc:  # noqa: BLE001 - every exception is the audit's data
            send.send(("error", (type(exc).__name__, str(exc)[:500], traceback.format_exc()[-2000:])))

    child = multiprocessing.get_context("fork").Process(target=target, daemon=True)
    start = time.perf_counter()
    child.start()
    send.close()
    status, payload = ("timeout", None)
    if receive.poll(timeout):
        try:
            status, payload = receive.recv()
        except EOFError:
            status, payload = "error", ("ChildDied", f"exit code {child.exitcode}", "")
    seconds = time.perf_counter() - start
    if child.is_alive():
        child.kill()
    child.join()
    if status == "timeout" and child.exitcode not in (None, -9):
        status, payload = "error", ("ChildDied", f"exit code {child.exitcode}", "")
    return status, payload, seconds


def _library_call(X, name, sigma, k, aggregate, digits) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # short and undetermined points warn: the audit reads fields
        m = precise_kpca.measure(X, name, sigma, k=k, aggregate=aggregate, digits=digits)
    return {"value": _fraction(m.value), "lower": _fraction(m.lower), "upper": _fraction(m.upper),
            "normalized_lower": _fraction(m.normalized_lower), "normalized_upper": _fraction(m.normalized_upper),
            "determined": m.determined, "guarantee": m.guarantee, "certified": m.certified_digits,
            "requested": m.requested_digits, "short": m.short, "reason": m.reason,
            "engine": m.route.engine if m.route else ""}


def _references(case: dict, results: list) -> list:
    """Per call, the reference that decides it: at min(max(asked, most certified), 60) digits; doubled while it finds a
    tie the library resolved, or while it lies outside the library's interval (its own error shrinks with it)."""
    out = []
    certified = [lib["certified"] if lib["determined"] and lib["guarantee"] == "rigorous" else 0
                 for lib in results if lib is not None]
    common = min(max([case["digits"]] + certified), REFERENCE_MAX_DIGITS)  # one eigsy serves every call
    for (name, k, aggregate), lib in zip(case["calls"], results):
        if lib is None:
            out.append(None)
            continue
        start = time.perf_counter()
        digits = common
        ref = reference(case["X"], name, case["sigma"], digits=digits, k=k, aggregate=aggregate)
        while lib["determined"] and digits < REFERENCE_MAX_ESCALATION and (
                not ref.determined or (lib["lower"] is not None and not _contains(lib, ref, digits)[0])):
            digits = min(2 * digits, REFERENCE_MAX_ESCALATION)
            ref = reference(case["X"], name, case["sigma"], digits=digits, k=k, aggregate=aggregate)
        out.append({"value": _fraction(ref.value), "normalized": _fraction(ref.normalized), "digits": digits,
                    "ties": "; ".join(ref.ties), "seconds": time.perf_counter() - start})
    return out


# ---------------------------------------------------------------- classification

def _contains(lib: dict, ref, digits: int) -> tuple[bool, bool]:
    """(value inside, normalized inside): the reference (a ReferenceValue or its dict) within the library's
    intervals widened by the reference's error, 10^-(2·digits + 10) relative (it carries ≥ 2·digits + 20)."""
    value = _fraction(ref["value"] if isinstance(ref, dict) else ref.value)
    normalized = _fraction(ref["normalized"] if isinstance(ref, dict) else ref.normalized)
    rel = Fraction(1, 10 ** (2 * digits + 10))
    if value is None or lib["lower"] is None:
        return False, False
    value = max(value, Fraction(0))  # every measure is ≥ 0: a negative reference is its rounding of ~0
    slack = abs(value) * rel + Fraction(1, 10 ** (2 * digits + 20))
    inside = lib["lower"] - slack <= value <= lib["upper"] + slack
    n_inside = True
    if lib["normalized_lower"] is not None:
        n_slack = 2 * rel + Fraction(1, 10 ** (2 * digits + 20))  # log2 of a relative error ε is ≈ 1.45 ε
        n_inside = normalized is not None and lib["normalized_lower"] - n_slack <= normalized <= (
            lib["normalized_upper"] + n_slack)
    return inside, n_inside


def margin_digits(lib: dict, value: Fraction) -> float:
    """Digits the midpoint agrees with the reference beyond those it certifies (≥ log10 2 when contained)."""
    error = abs(lib["value"] - value)
    if error == 0 or value == 0:
        return math.inf
    return _log10(abs(value) / error) - lib["certified"]


def classify(case: dict, call: tuple, lib_status: str, lib, ref_status: str, ref) -> tuple[str, str, float]:
    """(class, note, margin) of one call (module docstring)."""
    name, k, _ = call
    if lib_status == "timeout":
        return "hang", "", math.nan
    if lib_status == "error":
        kind, message, _ = lib
        if kind == "ValueError" and name in ("eigenprojection", "pc") and k > case["rank"] and "rank" in message:
            return "k-beyond-rank", message, math.nan
        return "crash", f"{kind}: {message}", math.nan
    if name in ("eigenprojection", "pc") and k > case["rank"]:
        return "crash", f"k={k} above the rank {case['rank']} was not refused", math.nan
    if lib["determined"] and lib["guarantee"] != "rigorous":
        return "heuristic", f"guarantee {lib['guarantee']}: {lib['reason']}", math.nan
    if ref_status != "ok" or ref is None:
        return "reference-failed", f"reference {ref_status}", math.nan
    if not lib["determined"]:
        if ref["value"] is None:
            return "refused-tie", lib["reason"], math.nan
        return "refused-determined", lib["reason"], math.nan
    if ref["value"] is None:
        return "basis-dependent-number", ref["ties"], math.nan
    inside, n_inside = _contains(lib, ref, ref["digits"])
    margin = margin_digits(lib, max(ref["value"], Fraction(0)))
    if not inside or (lib["certified"] and margin < 0):  # no digit is claimed of an interval holding 0
        return "overclaim", f"reference outside the interval (margin {margin:.2f})", margin
    if not n_inside:
        return "overclaim", "log2(ref/ref_f0) outside the normalized interval", margin
    if lib["certified"] < case["digits"]:
        flagged = lib["short"] and bool(lib["reason"])
        return ("short-flagged" if flagged else "short"), lib["reason"], margin
    return "ok", "", margin


# ---------------------------------------------------------------- the run

def audit_seed(case: dict, timeout: float, ref_timeout: float) -> list[dict]:
    """Run and classify every call of one seed; returns its CSV rows."""
    X = case["X"]
    case["rank"] = exact_rank(exact_rows(X))
    outcomes = [_in_child(_library_call, (X, name, case["sigma"], k, aggregate, case["digits"]), timeout)
                for name, k, aggregate in case["calls"]]
    results = [payload if status == "ok" else None for status, payload, _ in outcomes]
    ref_status, refs, _ = _in_child(_references, (case, results), ref_timeout)
    if ref_status == "error":
        print(f"  seed {case['seed']}: reference failed: {refs[0]}: {refs[1]}", flush=True)
    refs = refs if ref_status == "ok" else [None] * len(results)
    rows = []
    for i, call, (status, payload, seconds), ref in zip(case["call_ids"], case["calls"], outcomes, refs):
        kind, note, margin = classify(case, call, status, payload, ref_status, ref)
        lib = payload if status == "ok" else {}
        rows.append({
            "seed": case["seed"], "call": i, "source": case["source"], "N": X.shape[0], "d": X.shape[1],
            "rank": case["rank"], "log2_sigma": f"{_log2(case['sigma']):.3f}", "sigma": str(case["sigma"]),
            "measure": call[0], "k": call[1], "aggregate": call[2], "digits": case["digits"], "class": kind,
            "guarantee": lib.get("guarantee", ""), "certified": min(lib.get("certified", 0), EXACT_DIGITS),
            "flagged_short": lib.get("short", ""), "value": _short(lib.get("value")),
            "lower": _short(lib.get("lower")), "upper": _short(lib.get("upper")),
            "reference": _short(ref["value"]) if ref else "", "reference_digits": ref["digits"] if ref else "",
            "margin": f"{margin:.3f}", "lib_seconds": f"{seconds:.2f}",
            "ref_seconds": f"{ref['seconds']:.2f}" if ref else "", "engine": lib.get("engine", ""),
            "note": " ".join(str(note).split())[:300]})
    return rows


def load_data(data_dir: str) -> dict:
    return {name: np.asarray(datasets.load(name, data_dir=data_dir)) for name in datasets.available(data_dir)}


def done_seeds(path: Path) -> set:
    if not path.exists():
        return set()
    with path.open() as f:
        return {int(row["seed"]) for row in csv.DictReader(f)}


def summary(path: Path) -> None:
    """The tables of the module docstring, from the CSV alone."""
    with path.open() as f:
        rows = list(csv.DictReader(f))
    if not rows:
        print("no rows yet")
        return
    counts = Counter(r["class"] for r in rows)
    print(f"{len(rows)} calls on {len({r['seed'] for r in rows})} seeds ({path})")
    print("| class | calls |\n| --- | --- |")
    for kind in CLASSES:
        print(f"| {kind}{' (finding)' if kind in FINDINGS else ''} | {counts.get(kind, 0)} |")
    measures = sorted({r["measure"] for r in rows})
    shown = [c for c in CLASSES if counts.get(c)]
    print("\n| measure | " + " | ".join(shown) + " |\n| --- |" + " --- |" * len(shown))
    for name in measures:
        per = Counter(r["class"] for r in rows if r["measure"] == name)
        print(f"| {name} | " + " | ".join(str(per.get(c, 0)) for c in shown) + " |")
    margins = [(float(r["margin"]), r) for r in rows if r["class"] in ("ok", "short-flagged")
               and r["margin"] not in ("nan", "inf") and int(r["certified"])]
    if margins:
        worst, r = min(margins, key=lambda t: t[0])
        print(f"\nworst margin {worst:+.2f} digits: seed {r['seed']} call {r['call']} {r['measure']} k={r['k']} "
              f"{r['source']} N={r['N']} log2σ={r['log2_sigma']} ({r['certified']} certified digits)")
    lib_times = [float(r["lib_seconds"]) for r in rows if r["lib_seconds"]]
    ref_times = [float(r["ref_seconds"]) for r in rows if r["ref_seconds"]]
    slow = max(rows, key=lambda r: float(r["lib_seconds"] or 0))
    print(f"library {sum(lib_times):.0f} s in all, slowest call {float(slow['lib_seconds']):.1f} s (seed "
          f"{slow['seed']} {slow['measure']} {slow['source']} N={slow['N']} log2σ={slow['log2_sigma']}); "
          f"reference {sum(ref_times):.0f} s")
    digits = [int(r["certified"]) for r in rows if r["class"] in ("ok", "short-flagged")]
    if digits:
        print(f"certified digits of the determined points: fewest {min(digits)}, median {int(np.median(digits))}")
    odd = [r for r in rows if r["class"] not in ("ok", "k-beyond-rank")]
    if odd:
        print("\nnot ok:")
    for r in odd:
        print(f"  seed {r['seed']} call {r['call']} {r['class']}: {r['measure']} k={r['k']} {r['aggregate']} "
              f"{r['source']} N={r['N']} d={r['d']} rank={r['rank']} σ={r['sigma']} digits={r['digits']} "
              f"certified={r['certified']} engine={r['engine']} | {r['note']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--csv", default="audit.csv")
    parser.add_argument("--seeds", default="0:200", help="start:stop[:step] or a,b,c (resumes: done seeds are skipped)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per library call (past it: hang)")
    parser.add_argument("--ref-timeout", type=float, default=900.0, help="seconds for a seed's references")
    parser.add_argument("--summary", action="store_true", help="print the tables from --csv and stop")
    parser.add_argument("--show", type=int, default=None, help="print seed SHOW's input and calls and stop")
    parser.add_argument("--redo", action="store_true", help="recompute seeds already in the CSV (rows appended)")
    parser.add_argument("--only", default="", help="comma list of measures: run only these calls of each seed")
    args = parser.parse_args()
    path = Path(args.csv)
    if args.summary:
        summary(path)
        return
    data = load_data(args.data_dir)
    if args.show is not None:
        case = draw_case(args.show, data)
        np.set_printoptions(precision=17, threshold=100000, linewidth=150)
        print({key: value for key, value in case.items() if key != "X"})
        print(repr(case["X"]))
        return
    seeds = range(*map(int, args.seeds.split(":"))) if ":" in args.seeds else [int(x) for x in args.seeds.split(",")]
    skip = set() if args.redo else done_seeds(path)
    start = time.perf_counter()
    for seed in seeds:
        if seed in skip:
            continue
        case = draw_case(seed, data)
        if args.only:
            kept = [(i, c) for i, c in zip(case["call_ids"], case["calls"]) if c[0] in args.only.split(",")]
            case["call_ids"], case["calls"] = [i for i, _ in kept], [c for _, c in kept]
            if not kept:
                continue
        rows = audit_seed(case, args.timeout, args.ref_timeout)
        new = not path.exists()
        with path.open("a", newline="") as f:  # one write per seed: shards may share the file
            writer = csv.DictWriter(f, fieldnames=FIELDS)
            if new:
                writer.writeheader()
            writer.writerows(rows)
        for r in rows:
            print(f"seed {seed} {r['class']:>22} {r['measure']:>15} k={r['k']} {r['source']} N={r['N']} d={r['d']} "
                  f"log2σ={r['log2_sigma']} digits={r['digits']} certified={r['certified']} "
                  f"lib {r['lib_seconds']} s ref {r['ref_seconds']} s {r['note'][:120]}", flush=True)
    print(f"done in {time.perf_counter() - start:.0f} s", flush=True)


# ---------------------------------------------------------------- small helpers

def _fraction(x):
    """The exact rational of a float, int, Fraction or mpf; None for None, NaN or ±inf."""
    if x is None:
        return None
    try:
        return as_fraction(x)
    except (ValueError, OverflowError):
        return None  # NaN or ±inf


def _log10(x: Fraction) -> float:
    return math.log10(x.numerator) - math.log10(x.denominator)


def _log2(x: Fraction) -> float:
    return math.log2(x.numerator) - math.log2(x.denominator)


def _short(x) -> str:
    if x is None:
        return ""
    if x == 0:
        return "0"
    exponent = math.floor(_log10(abs(x)))
    mantissa = float(x / Fraction(10) ** exponent)
    return f"{mantissa:.15f}e{exponent}"


if __name__ == "__main__":
    main()
