"""``precise-kpca neighbours``: large-σ convergence of Nyström and random-feature KPCA to linear PCA.

Wraps :func:`precise_kpca.approx.convergence.large_sigma_convergence` (mp backend, each σ evaluated at two
precisions): per component l, the relative error ``|σ_X² λ_l / μ_l − 1|`` against the linear limit μ_l, its
fitted rate p and constant C (error ≈ C σ^p), and the certified digits of ``σ_X² λ_l``.
"""
from __future__ import annotations

import argparse
import time

from .common import UsageError, add_data_arguments, load_data, parse_range

METHODS = ("exact", "nystrom", "rf-cos", "rf-sincos")
"""``--method`` choices: :data:`precise_kpca.approx.convergence.METHODS`, spelled out so that building the parser
imports nothing heavy (a test checks that both agree)."""

DEFAULT_LANDMARKS = 10
"""Nyström landmarks m when ``--landmarks`` is not given: max(10, d + 1), at most N."""


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``neighbours`` on the top-level sub-parsers; returns its parser."""
    parser = subparsers.add_parser(
        "neighbours", help="large-σ convergence of Nyström / random-feature KPCA to linear PCA: rates, constants",
        description="Do Theorems 2-3 carry over to approximate KPCA? For σ = 2**p, the eigenvalues σ_X² λ_l of "
                    "exact, Nyström or random-feature KPCA (mp backend, certified by two precisions) against "
                    "their σ → ∞ limit μ_l (linear PCA of the sample, or of the random projection): relative "
                    "errors, fitted rate p and constant C in error ≈ C σ^p.",
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
                        help="rf-cos, rf-sincos: random features D (even for rf-sincos; default 100, which costs "
                             "about 20 s per σ: two D×D mp eigenproblems)")
    parser.add_argument("--seed", type=int, default=0, metavar="S",
                        help="seed of the landmarks or of the random features (default 0)")
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
    name, X = load_data(args)
    n, d = X.shape
    landmarks = min(n, max(DEFAULT_LANDMARKS, d + 1)) if args.landmarks is None else args.landmarks
    features = 100 if args.features is None else args.features
    start = time.perf_counter()
    study = large_sigma_convergence(X, [f"2**{p}" for p in exponents], method=args.method, n_landmarks=landmarks,
                                    n_features=features, random_state=args.seed)
    seconds = time.perf_counter() - start

    setting = {"exact": "empirical KPCA", "nystrom": f"Nyström KPCA, m={landmarks} landmarks",
               "rf-cos": f"RF-KPCA cos, D={features} features", "rf-sincos": f"RF-KPCA sincos, D={features} features"}
    print(f"{name} (N={n}, d={d}): {setting[args.method]}, seed {args.seed}; sigma = 2**{exponents[0]} .. "
          f"2**{exponents[-1]} ({len(exponents)} points), {study.limit.size} components")
    print(f"{'log2 sigma':>10}  {'min_l error':>12}  {'max_l error':>12}  {'min digits':>10}")
    for p, errors, digits in zip(exponents, study.relative_error, study.certified_digits):
        print(f"{p:>10}  {errors.min():>12.4e}  {errors.max():>12.4e}  {digits.min():>10.1f}")
    print(f"{'l':>3}  {'limit mu_l':>14}  {'rate p':>8}  {'constant C':>12}  {'min digits':>10}")
    for l in range(study.limit.size):
        print(f"{l + 1:>3}  {study.limit[l]:>14.8g}  {study.rate[l]:>8.4f}  {study.constant[l]:>12.6g}  "
              f"{study.certified_digits[:, l].min():>10.1f}")
    print(f"error = |sigma_X^2 lambda_l / mu_l - 1|; rate p: least-squares slope of log error on log sigma over the "
          f"largest {study.fit_points} sigmas; C = error * sigma^-round(p) at the largest sigma; digits: agreement "
          f"of two precisions (17 = identical as float64); {seconds:.1f} s")
    return 0
