"""``precise-kpca certify [DATA]``: certified inertia (Mercer check) of a kernel Gram matrix.

Without DATA: the seed article's Experiment 1 (:func:`precise_kpca.certify.psd.experiment1`). With DATA: the
Gram of the chosen kernel on the preprocessed data (:func:`precise_kpca.certify.psd.certify_kernel_psd`).
Printed bounds are rounded outward, so each printed interval still encloses the eigenvalue.
"""
from __future__ import annotations

import argparse
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction

from .common import DATA_HELP, UsageError, add_data_options, load_data
from .progress import PROGRESS, add_progress_argument, working

KERNELS = {"rbf": "gaussian", "poly": "polynomial", "linear": "linear", "neg-distance": "neg_distance"}
"""CLI kernel name -> :func:`~precise_kpca.certify.psd.certify_kernel_psd` kernel."""

DEFAULT_GAMMA = {"rbf": Fraction(1, 2), "poly": Fraction(1)}
"""γ when neither ``--gamma`` nor (rbf) ``--sigma`` is given: the article's RBF γ = 0.5, and the polynomial
default 1."""

ARTICLE = {"rbf": ("0.000181", "15.644640"), "poly": ("-0.000000", "254.878312"),
           "invalid": ("-98.802080", "22.587837")}
"""Experiment 1's smallest and largest eigenvalues as printed in the seed article (float64 eigensolver)."""

DIGITS = 12
"""Significant digits of the printed (outward-rounded) enclosures."""


def _fraction(text: str) -> Fraction:
    """An exact rational from ``"0.1"`` (= 1/10), ``"1/3"`` or ``"2e-3"``; argparse reports a bad value."""
    try:
        return Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (e.g. 0.5, 1/3, 2e-3)") from None


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``certify`` on the top-level sub-parsers; returns its parser."""
    parser = subparsers.add_parser(
        "certify", help="certified inertia of a kernel Gram (Mercer check); no DATA: the article's Experiment 1",
        description="Rigorous counts of positive, zero and negative eigenvalues of a kernel Gram matrix and "
                    "enclosures of its extreme eigenvalues (exact rational arithmetic for linear and poly, Arb "
                    "balls for rbf and neg-distance). Without DATA, reproduces the seed article's Experiment 1 "
                    "(50 points, seed 42: rbf, poly and the invalid -|x-y| kernel). With DATA, the exit status "
                    "is 1 when the Gram certifiably has a negative eigenvalue.",
    )
    parser.add_argument("data", metavar="DATA", nargs="?", help="optional: " + DATA_HELP)
    add_data_options(parser)
    parser.add_argument("--kernel", choices=tuple(KERNELS),
                        help="kernel for DATA (default rbf): rbf exp(-gamma|x-y|^2), poly (gamma x.y + coef0)^degree, "
                             "linear x.y, neg-distance -|x-y|")
    parser.add_argument("--gamma", type=_fraction, metavar="G",
                        help="rbf/poly gamma, read exactly (0.1 is 1/10); default 0.5 for rbf, 1 for poly")
    parser.add_argument("--sigma", type=_fraction, metavar="S",
                        help="rbf: the paper's standardized bandwidth instead of --gamma, sigma_X = S·d_X with d_X the "
                             "median distance of DATA (float64; the certificate is for exactly that sigma_X)")
    parser.add_argument("--degree", type=int, metavar="P", help="poly degree (default 2)")
    parser.add_argument("--coef0", type=_fraction, metavar="C", help="poly coef0, read exactly (default 1)")
    add_progress_argument(parser)
    return parser


def _interval(lo: float, hi: float) -> str:
    """``[lo, hi]`` to :data:`DIGITS` significant digits, lo rounded down and hi up (still an enclosure)."""
    ends = []
    for value, rounding in ((lo, ROUND_FLOOR), (hi, ROUND_CEILING)):
        with localcontext() as context:
            context.rounding = rounding
            ends.append(format(Decimal(value), f".{DIGITS}g"))
    return f"[{ends[0]}, {ends[1]}]"


def _verdict(cert) -> str:
    if cert.is_psd:
        return "PSD" if cert.inertia[1] else "PD"
    return f"NOT PSD ({cert.inertia[2]} negative)"


def _kernel_params(args: argparse.Namespace) -> dict:
    """Keyword parameters of :func:`certify_kernel_psd` for ``args.kernel``; options it does not take raise."""
    takes = {"rbf": {"gamma", "sigma"}, "poly": {"gamma", "degree", "coef0"}, "linear": set(),
             "neg-distance": set()}[args.kernel]
    given = {name for name in ("gamma", "sigma", "degree", "coef0") if getattr(args, name) is not None}
    if given - takes:
        options = ", ".join(f"--{name}" for name in sorted(given - takes))
        raise UsageError(f"{options} does not apply to --kernel {args.kernel}")
    if {"gamma", "sigma"} <= given:
        raise UsageError("give --gamma or --sigma, not both")
    params = {}
    if args.sigma is not None:
        params["sigma"] = args.sigma  # standardized: run() turns it into the raw sigma_X
    elif "gamma" in takes:
        params["gamma"] = DEFAULT_GAMMA[args.kernel] if args.gamma is None else args.gamma
    if args.kernel == "poly":
        params["degree"] = 2 if args.degree is None else args.degree
        params["coef0"] = Fraction(1) if args.coef0 is None else args.coef0
    return params


def _describe(kernel: str, params: dict) -> str:
    shown = ", ".join(f"{name}={value}" for name, value in params.items())
    return f"{kernel} ({shown})" if shown else kernel


def run(args: argparse.Namespace) -> int:
    """Run ``precise-kpca certify``; returns the exit status (errors raise, see :func:`precise_kpca.cli.main`)."""
    from ..certify.psd import certify_kernel_psd, experiment1

    if args.data is None:
        options = [f"--{name.replace('_', '-')}" for name in ("kernel", "gamma", "sigma", "degree", "coef0", "data_dir",
                                                                  "target", "categorical")
                   if getattr(args, name) is not None]
        if options:
            raise UsageError(f"{', '.join(options)} need(s) DATA; without DATA the command runs Experiment 1")
        with working("Experiment 1 (three certificates)", PROGRESS[args.progress]):
            certificates = experiment1()
        return _experiment1(certificates)
    args.kernel = args.kernel or "rbf"
    params = _kernel_params(args)
    name, X = load_data(args)
    shown = _describe(args.kernel, params)
    if "sigma" in params:
        from ..numerics import geometry

        d_x = geometry(X).median_distance
        params["sigma"] = params["sigma"] * Fraction(d_x)
        shown = f"rbf (sigma={args.sigma} standardized: sigma_X = sigma·d_X, d_X = {d_x!r})"
    with working(f"certifying the {args.kernel} Gram of {name} (N={X.shape[0]})", PROGRESS[args.progress]):
        cert = certify_kernel_psd(X, KERNELS[args.kernel], **params)
    rows = [
        ("data", f"{name} (N={X.shape[0]}, d={X.shape[1]})"),
        ("kernel", shown),
        ("inertia (+, 0, -)", str(cert.inertia)),
        ("rank", str(cert.rank)),
        ("min eigenvalue in", _interval(*cert.min_eigenvalue)),
        ("max eigenvalue in", _interval(*cert.max_eigenvalue)),
        ("verdict", _verdict(cert) + ("" if cert.is_psd else ": not a Mercer kernel on these points")),
        ("method", cert.method + (f" (Arb precision {cert.precision_bits} bits)" if cert.precision_bits else "")),
    ]
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label:<{width}}  {value}")
    return 0 if cert.is_psd else 1


def _experiment1(certificates: dict) -> int:
    labels = {"rbf": "rbf (gamma=0.5)", "poly": "poly (degree=2, gamma=1, coef0=1)", "invalid": "neg-distance -|x-y|"}
    rows = [("kernel", "inertia (+,0,-)", "min eigenvalue in", "max eigenvalue in", "article min / max", "verdict",
             "method")]
    for key, cert in certificates.items():
        rows.append((labels[key], str(cert.inertia), _interval(*cert.min_eigenvalue), _interval(*cert.max_eigenvalue),
                     " / ".join(ARTICLE[key]), _verdict(cert), cert.method))
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    print("Experiment 1 of the seed article: 50 points ~ N(0, I_3), numpy default_rng(42); certified enclosures")
    for row in rows:
        print("  ".join(f"{cell:<{width}}" for cell, width in zip(row, widths)).rstrip())
    return 0
