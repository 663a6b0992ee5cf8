"""``precise-kpca neighbours``: large-σ convergence of Nyström and random-feature KPCA to linear PCA.

Wraps :func:`precise_kpca.approx.convergence.large_sigma_convergence`: per σ, the relative errors
``|σ_X² λ_l / μ_l − 1|`` against the linear limits μ_l and the Gram approximation error; per component, the limit,
the fitted rate p and constant C (error ≈ C σ^p). Every column says its guarantee, and every value is printed with
no more digits than its interval supports (an interval that supports none is printed as the interval).
"""
from __future__ import annotations

import argparse
import time

from .common import UsageError, add_data_arguments, load_data, parse_range
from .progress import PROGRESS, add_progress_argument, bar

METHODS = ("exact", "nystrom", "rf-cos", "rf-sincos")
"""``--method`` choices: :data:`precise_kpca.approx.convergence.METHODS`, spelled out so that building the parser
imports nothing heavy (a test checks that both agree)."""

GUARANTEES = ("rigorous", "heuristic")
"""``--guarantee`` choices: :data:`precise_kpca.approx.convergence.GUARANTEES`, spelled out for the same reason."""

DEFAULT_LANDMARKS = 10
"""Nyström landmarks m when ``--landmarks`` is not given: max(10, d + 1), at most N."""

ROUTES = {
    "arb-enclosure": "rigorous (Arb ball enclosures from the exact data and the seeded draws)",
    "agreement": "heuristic (agreement of the mp backend at two precisions: NOT an enclosure, not certified)",
}


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``neighbours`` on the top-level sub-parsers; returns its parser."""
    parser = subparsers.add_parser(
        "neighbours", help="large-σ convergence of Nyström / random-feature KPCA to linear PCA: rates, constants",
        description="Do Theorems 2-3 carry over to approximate KPCA? For σ = 2**p, the eigenvalues σ_X² λ_l of "
                    "exact, Nyström or random-feature KPCA against their σ → ∞ limit μ_l (linear PCA of the "
                    "sample, or of the random projection): relative errors with their guarantee, the Gram "
                    "approximation error, fitted rate p and constant C in error ≈ C σ^p.",
    )
    add_data_arguments(parser)
    parser.add_argument("--method", required=True, choices=METHODS,
                        help="exact (empirical KPCA), nystrom, rf-cos or rf-sincos (random features)")
    parser.add_argument("--sigmas", default="-2:20", metavar="RANGE",
                        help="exponents p of σ = 2**p: START:STOP (inclusive), START:STOP:STEP or a comma list, "
                             "increasing (default -2:20; write --sigmas=-2:20)")
    parser.add_argument("--landmarks", type=int, metavar="M",
                        help=f"nystrom: landmarks m, d+1 <= m <= N (default max({DEFAULT_LANDMARKS}, d+1), at most N)")
    parser.add_argument("--features", type=int, metavar="D",
                        help="rf-cos, rf-sincos: random features D (even for rf-sincos; default 100)")
    parser.add_argument("--seed", type=int, default=0, metavar="S",
                        help="seed of the landmarks or of the random features (default 0)")
    parser.add_argument("--guarantee", choices=GUARANTEES, default="rigorous",
                        help="rigorous (default): Arb enclosures; heuristic: agreement of two mp precisions, "
                             "labelled so")
    parser.add_argument("--digits", type=int, default=10, metavar="K",
                        help="digits asked of every rigorous error (default 10)")
    parser.add_argument("--no-gram-error", action="store_true",
                        help="skip the Gram approximation error (it costs O(N^2) balls per σ)")
    add_progress_argument(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    """Run ``precise-kpca neighbours``; returns the exit status (errors raise, see :func:`precise_kpca.cli.main`)."""
    from ..approx.convergence import large_sigma_convergence

    exponents = parse_range(args.sigmas)
    if args.landmarks is not None and args.method != "nystrom":
        raise UsageError(f"--landmarks applies to --method nystrom only, not {args.method}")
    if args.features is not None and not args.method.startswith("rf-"):
        raise UsageError(f"--features applies to --method rf-cos or rf-sincos only, not {args.method}")
    if args.features is not None and args.features < 1:
        raise UsageError(f"--features must be a positive integer, got {args.features}")
    if args.digits < 1:
        raise UsageError(f"--digits must be a positive integer, got {args.digits}")
    name, X = load_data(args)
    n, d = X.shape
    landmarks = min(n, max(DEFAULT_LANDMARKS, d + 1)) if args.landmarks is None else args.landmarks
    features = 100 if args.features is None else args.features
    start = time.perf_counter()
    study = large_sigma_convergence(X, [f"2**{p}" for p in exponents], method=args.method, n_landmarks=landmarks,
                                    n_features=features, random_state=args.seed, digits=args.digits,
                                    guarantee=args.guarantee, gram_error=not args.no_gram_error,
                                    progress=lambda steps: bar(steps, desc=f"{args.method} σ points", unit="σ",
                                                               mode=PROGRESS[args.progress]))
    seconds = time.perf_counter() - start

    setting = {"exact": "empirical KPCA", "nystrom": f"Nyström KPCA, m={landmarks} landmarks",
               "rf-cos": f"RF-KPCA cos, D={features} features", "rf-sincos": f"RF-KPCA sincos, D={features} features"}
    print(f"{name} (N={n}, d={d}): {setting[args.method]}, seed {args.seed}; sigma = 2**{exponents[0]} .. "
          f"2**{exponents[-1]} ({len(exponents)} points), {study.limit.shape[0]} components")
    print(f"guarantee: {ROUTES[study.route]}")
    _sigma_table(study, exponents)
    _component_table(study)
    print(f"error = |sigma_X^2 lambda_l / mu_l - 1|; Gram error = ||sigma_X^2 H (K_approx - K) H||_F / "
          f"||sigma_X^2 H K H||_F; digits: significant digits every point of the interval shares with its midpoint "
          f"(values are printed to at most those digits); rate p: least-squares slope of log error on log sigma over "
          f"the largest {study.fit_points} sigmas, enclosed from the errors' intervals; C = error * sigma^-round(p) "
          f"at the largest sigma; {seconds:.1f} s")
    return 0


def _weakest(guarantees) -> str:
    """The weakest guarantee among entries: none < heuristic < rigorous."""
    for level in ("none", "heuristic", "rigorous"):
        if level in set(guarantees):
            return level
    return "none"


def _sigma_table(study, exponents) -> None:
    import numpy as np

    errors, gram = study.relative_error, study.gram_error
    unit = "bits" if study.route == "arb-enclosure" else "dps"
    header = (f"{'log2 sigma':>10}  {'min_l error':>22}  {'max_l error':>22}  {'digits':>6}  {'guarantee':>9}  "
              f"{'Gram error':>22}  {'digits':>6}  {'guarantee':>9}  {unit:>5}  {'seconds':>7}")
    print(header)
    notes = []
    for s, p in enumerate(exponents):
        row = errors[s]
        values = row.value
        low = row[int(np.nanargmin(values))] if not np.all(np.isnan(values)) else row[0]
        high = row[int(np.nanargmax(values))] if not np.all(np.isnan(values)) else row[0]
        g = gram[s]
        print(f"{p:>10}  {low.text():>22}  {high.text():>22}  {int(row.digits.min()):>6}  "
              f"{_weakest(row.guarantee):>9}  {g.text():>22}  {g.digits:>6}  {g.guarantee:>9}  "
              f"{study.precision[s]:>5}  {study.seconds[s]:>7.2f}")
        notes += [f"  sigma=2**{p}, l={l + 1}: {e.reason}" for l, e in enumerate(row.entries)
                  if e.guarantee == "none" or (e.reason and e.guarantee == "rigorous")]
    if notes:
        print("short or undetermined errors:")
        print("\n".join(notes))


def _component_table(study) -> None:
    print(f"{'l':>3}  {'limit mu_l':>14}  {'guarantee':>9}  {'rate p':>9}  {'constant C':>12}  {'guarantee':>9}  "
          f"{'min digits':>10}")
    notes = []
    for l in range(study.limit.shape[0]):
        mu, rate, constant = study.limit[l], study.rate[l], study.constant[l]
        digits = int(study.relative_error.digits[:, l].min())
        print(f"{l + 1:>3}  {mu.text(8):>14}  {mu.guarantee:>9}  {rate.text():>9}  {constant.text():>12}  "
              f"{rate.guarantee:>9}  {digits:>10}")
        if rate.guarantee == "none":
            notes.append(f"  l={l + 1}: {rate.reason}")
    if notes:
        print("rates not reported:")
        print("\n".join(notes))
