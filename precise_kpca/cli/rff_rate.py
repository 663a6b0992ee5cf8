"""``precise-kpca rff-rate``: the seed article's random-Fourier-feature convergence protocol.

Runs :func:`precise_kpca.approx.rff.rff_convergence` (200 pairs in R^5, γ = 0.5, 10 trials per D, D = 10 … 20000,
the article's seeds) and prints the RMSE of the kernel estimate against D with the fitted log-log slope (the
article reports −0.4998; the exact expected rate is −1/2). Every column says its guarantee: float64 (``none``) by
default, Arb enclosures of the same draws (``rigorous``) with ``--enclose``.
"""
from __future__ import annotations

import argparse
import time

QUICK = {"Ds": (10, 20, 50, 100, 200, 500, 1000), "n_trials": 3}
"""``--quick``: D up to 1000 and 3 trials per D (same seeds as the full protocol for those draws)."""

ARTICLE_SLOPE = -0.4998
"""Slope printed by the seed article for the full protocol."""


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``rff-rate`` on the top-level sub-parsers; returns its parser."""
    parser = subparsers.add_parser(
        "rff-rate", help="random Fourier features: RMSE versus D and the fitted O(D^-1/2) slope (seed article)",
        description="The seed article's protocol: RMSE over 200 pairs of the D-feature estimate of "
                    "exp(-0.5|x-y|^2), averaged over trials, for D = 10 ... 20000; least-squares slope of "
                    "log10 RMSE on log10 D with its standard error, and the exact prediction sqrt(E[MSE]).",
    )
    parser.add_argument("--quick", action="store_true",
                        help=f"D = {', '.join(map(str, QUICK['Ds']))} and {QUICK['n_trials']} trials (under a "
                             "second) instead of the full protocol (about 20 s)")
    parser.add_argument("--enclose", action="store_true",
                        help="also enclose every RMSE, prediction and the slope rigorously (Arb balls for the same "
                             "draws; about 30 s with --quick, 10 min for the full protocol)")
    return parser


def run(args: argparse.Namespace) -> int:
    """Run ``precise-kpca rff-rate``; returns the exit status."""
    from ..approx.rff import rff_convergence

    start = time.perf_counter()
    result = rff_convergence(**(QUICK if args.quick else {}), enclose=args.enclose)
    seconds = time.perf_counter() - start
    trials = result.rmse.shape[1]
    enclosed = result.enclosure
    label = "rigorous" if enclosed else "none"
    print(f"{'D':>6}  {'RMSE (mean of ' + str(trials) + ' trials)':>26}  {'predicted sqrt(E[MSE])':>22}  "
          f"{'ratio':>6}  {'guarantee':>9}")
    for j, D in enumerate(result.Ds):
        rmse, predicted = result.rmse_mean[j], result.predicted_rmse[j]
        if enclosed:
            rmse_text, predicted_text = enclosed.rmse_mean[j].text(6), enclosed.predicted_rmse[j].text(6)
        else:
            rmse_text, predicted_text = f"{rmse:.6g}", f"{predicted:.6g}"
        print(f"{int(D):>6}  {rmse_text:>26}  {predicted_text:>22}  {rmse / predicted:>6.3f}  {label:>9}")
    if enclosed:
        print(f"guarantee: rigorous (Arb enclosures of the same draws; digits shown are certified); ratio is "
              f"float64 (none); slope enclosure {enclosed.slope.text(8)} ({enclosed.slope.digits} digits, rigorous)")
    else:
        print("guarantee: none (float64 throughout: libm cosines and sums are not bounded; --enclose encloses them)")
    reference = "quick protocol; the full one gives the article's" if args.quick else "article:"
    print(f"slope {result.slope:.4f} ± {result.slope_se:.4f} (± is the standard error over trials, a statistical "
          f"estimate, not a numerical bound; exact rate -0.5; {reference} {ARTICLE_SLOPE}); intercept "
          f"{result.intercept:.4f}; {seconds:.1f} s")
    return 0
