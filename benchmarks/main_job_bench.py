"""Wall time of the README's main job (issue 20, "the main job fast"): median of fresh-store runs.

    OPENBLAS_NUM_THREADS=1 python benchmarks/main_job_bench.py            # 3 runs of the 135-point wine job
    python benchmarks/main_job_bench.py --runs 1 --executor serial        # one run, one process

Each run is ``python -m precise_kpca.cli curves wine --log2-sigma=-4:40 --measures
metric,eigenvalue,eigenprojection --k 1 --digits 10`` in a subprocess with a new results store and output folder
(nothing reused), timed from the outside (wall clock, process start to exit: imports, pool start-up, plots and
files included) and by the CPU time of the process and its workers. Printed: every run, the median, and for the
median run the per-route split (points and summed point seconds per engine, from ``curves.csv``) and the number of
certified points with ``guarantee == "rigorous"``. The checkout this script lives in is the one measured
(``PYTHONPATH`` is set to it). Speed is measured here, never asserted in a test (CONTRIBUTING).
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
COMMAND = ["curves", "wine", "--log2-sigma=-4:40", "--measures", "metric,eigenvalue,eigenprojection", "--k", "1",
           "--digits", "10"]
CERTIFIED_POINTS = 135


def run_once(executor: str, extra: list[str]) -> dict:
    """One fresh-store run: wall and CPU seconds, and the curves.csv it wrote."""
    with tempfile.TemporaryDirectory(prefix="main-job-") as tmp:
        out = Path(tmp) / "out"
        command = [sys.executable, "-m", "precise_kpca.cli", *COMMAND, "--out", str(out), "--store",
                   str(Path(tmp) / "store.db"), "--executor", executor, "--progress", "never", *extra]
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONPATH=str(ROOT))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode:
            raise SystemExit(f"the main job failed ({done.returncode}):\n{done.stderr[-4000:]}")
        frame = pd.read_csv(out / "curves.csv")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "frame": frame}


def route_split(frame: pd.DataFrame) -> pd.DataFrame:
    """Points and summed point seconds per engine (the route's first word), certified and naive rows apart."""
    engine = frame["route"].fillna("").astype(str).str.split().str[0].replace("", "none")
    table = frame.assign(engine=engine).groupby(["requested_backend", "engine"])["seconds"].agg(["count", "sum"])
    return table.rename(columns={"count": "points", "sum": "point s"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--executor", default="local", help="local (default, the CLI's default), serial, ...")
    parser.add_argument("--no-naive", action="store_true", help="skip the float64-naive overlay")
    args = parser.parse_args()
    extra = ["--no-naive"] if args.no_naive else []
    runs = []
    for i in range(args.runs):
        runs.append(run_once(args.executor, extra))
        print(f"run {i + 1}: {runs[-1]['wall']:.2f} s wall, {runs[-1]['cpu']:.2f} s CPU", flush=True)
    median = statistics.median(r["wall"] for r in runs)
    chosen = min(runs, key=lambda r: abs(r["wall"] - median))
    frame = chosen["frame"]
    certified = frame[frame["requested_backend"] != "float64-naive"]
    rigorous = int((certified["guarantee"] == "rigorous").sum())
    print(f"median of {len(runs)}: {median:.2f} s wall (each: " + ", ".join(f"{r['wall']:.2f}" for r in runs) +
          f"; CPU " + ", ".join(f"{r['cpu']:.2f}" for r in runs) + ")")
    print(f"rigorous: {rigorous} of {len(certified)} certified points (expected {CERTIFIED_POINTS}); "
          f"fewest certified digits {int(certified['certified_digits'].min())}")
    print("per-route split of the median run (summed point seconds, as the workers timed them):")
    print(route_split(frame).to_string(float_format=lambda v: f"{v:.2f}"))
    print(f"load average during the runs: {os.getloadavg()[0]:.1f} (2 cores)")


if __name__ == "__main__":
    main()
