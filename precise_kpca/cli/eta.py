"""``precise-kpca eta``: is Theorem 2's η tight? C(σ), the sharp constant 1/8, η's overshoot, Theorem 3's limits."""
from __future__ import annotations

import argparse
from pathlib import Path

from .common import add_data_arguments, load_data
from .progress import PROGRESS, add_progress_argument, bar

CURVE_GUARANTEE = "rigorous"
"""C(σ) of :func:`precise_kpca.asymptotics.study.metric_curve`: arb balls on exact data at every grid point.
Theorem 3's limits carry their own guarantee (rigorous enclosures unless ``--limit-guarantee heuristic``)."""


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``eta`` on the top-level sub-parsers; returns its parser."""
    parser = subparsers.add_parser(
        "eta", help="tightness of Theorem 2's η: C(σ) vs the sharp 1/8, overshoot, Theorem 3 limits",
        description="C(σ) = metric dissonance/(ρ/σ)² on σ = 2^-4..2^60 (rigorous arb), its limit 1/8, the "
                    "paper's bound (ρ/σ)²η and by how much it overshoots, and the σ→∞ eigenvalue and "
                    "eigenprojection constants (k = 1..5).",
    )
    add_data_arguments(parser)
    parser.add_argument("--out", metavar="DIR", help="write eta.png, eta_curve.csv and provenance.json here")
    parser.add_argument("--no-spectral", action="store_true", help="skip Theorem 3's limits")
    add_progress_argument(parser)
    parser.add_argument("--limit-digits", type=int, default=12, metavar="D",
                        help="digits requested of Theorem 3's limits (default 12)")
    parser.add_argument("--limit-guarantee", choices=("rigorous", "heuristic"), default="rigorous",
                        help="enclose the limits (default) or only check two evaluations agree (faster)")
    return parser


def run(args: argparse.Namespace) -> int:
    """Run ``precise-kpca eta``; returns the exit status (errors raise, see :func:`precise_kpca.cli.main`)."""
    from ..asymptotics.study import eta_study
    from ..reports.provenance import write_provenance

    name, X = load_data(args)
    study = eta_study(X, name, spectral=not args.no_spectral, paper_spectral=False,
                      guarantee=args.limit_guarantee, limit_digits=args.limit_digits,
                      progress=lambda steps, desc: bar(steps, desc=desc, mode=PROGRESS[args.progress]))
    print(format_study(study))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        study.curve.to_csv(out / "eta_curve.csv", index=False)
        plot_study(study, out / "eta.png")
        sidecar = write_provenance(out, [out / "eta_curve.csv", out / "eta.png"])
        print(f"wrote {out / 'eta.png'}, {out / 'eta_curve.csv'} and {sidecar.name}")
    return 0


def format_study(study) -> str:
    """The study as aligned text: geometry, Theorem 2 verdict, a few σ rows, Theorem 3 limits."""
    rows = [
        ("data", study.name), ("N, d", f"{study.n}, {study.d}"), ("rho", f"{study.rho:.6g}"),
        ("eta (paper)", f"{study.eta:.6g}"),
        ("sup C over sigma grid", f"{study.sup_C:.15g} ({CURVE_GUARANTEE} at all {len(study.curve)} grid points, "
                                  f"fewest certified digits {study.curve['C_digits'].min()}; from below: C < 1/8 at "
                                  "every σ)"),
        ("lim C (sigma -> inf)", "1/8 (sharp, proofs/theorem2)"),
        ("overshoot of (rho/sigma)^2 eta, limit", f"{study.overshoot_limit:.6g} = 8 eta"),
        ("overshoot, largest on grid (sigma = 2^-4)", f"{study.curve['overshoot'].max():.6g}"),
    ]
    if study.eigenvalue is not None:
        e = study.eigenvalue
        rows.append(("lim sigma^2 * eigenvalue (Eq. 18)",
                     _limit_text(e.value, e.certified_digits, e.guarantee, study.rho)))
        for _, r in study.spectral.iterrows():
            rows.append((f"lim sigma^2 * eigenprojection k={int(r['k'])}",
                         _limit_text(r["eigenprojection"], int(r["digits"]), r["guarantee"], study.rho)))
    width = max(len(label) for label, _ in rows)
    lines = [f"{label:<{width}}  {value}" for label, value in rows]
    picks = study.curve[study.curve["log2_sigma"].isin([-4, 0, 4, 7, 10, 20, 40, 60])]
    lines.append("")
    lines.append(picks.to_string(index=False, float_format=lambda v: f"{v:.6g}"))
    lines.extend(f"note: {note}" for note in study.notes)
    return "\n".join(lines)


def _limit_text(value: float, digits: int, guarantee: str, rho: float) -> str:
    """The value to its certified digits (at most a float's 15), how many and how certified, and value / ρ²."""
    shown = min(max(digits, 3), 15)
    return f"{value:.{shown}g} ({digits} {guarantee} digits; / rho^2 = {value / rho**2:.4g})"


def plot_study(study, path) -> None:
    """C(σ) against log2 σ with the sharp 1/8 and the paper's constant η (log scale), saved as PNG."""
    from matplotlib.figure import Figure  # no pyplot: no backend is selected

    fig = Figure(figsize=(7, 4.2))
    ax = fig.subplots()
    curve = study.curve
    ax.semilogy(curve["log2_sigma"], curve["C"], "o-", ms=3, label="C(σ) = dissonance / (ρ/σ)² (certified)")
    ax.axhline(1 / 8, color="k", ls="--", label="sharp constant 1/8")
    ax.axhline(study.eta, color="tab:red", ls=":", label=f"paper's constant η = {study.eta:.3g}")
    ax.set_xlabel("log2 σ (standardized bandwidth)")
    ax.set_ylabel("constant (log scale)")
    ax.set_title(f"{study.name}: Theorem 2 constant (ρ = {study.rho:.3g}); η overshoots 1/8 by {8 * study.eta:.3g}×")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
