"""Calibrate the study cost model (``precise_kpca/studies/cost.py``): time every route on subsampled real data.

Runs one study (metric, eigenvalue, eigenprojection k = 1..3, each with its float64-naive twin) on ``--datasets``
subsampled to each of ``--rows``, at log2 σ in ``--log2-sigma``, serially on one core, into a fresh store, and
writes one row per point — route, measure, N, d, log2 σ, seconds — to ``--out`` (default: the package's
calibration table). The first point of each (data set, σ) bundle pays the shared work (Gram, enclosure), as in a
real study, so the table holds what a sweep costs, not a cold single point.

    OPENBLAS_NUM_THREADS=1 python benchmarks/calibrate_cost.py --data-dir /work/shared/datasets
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout, not another installed copy

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "precise_kpca" / "studies" / "calibration.csv"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.environ.get("PRECISE_KPCA_DATA"))
    parser.add_argument("--datasets", default="phoneme,spambase")
    parser.add_argument("--rows", default="100,300,700")
    parser.add_argument("--log2-sigma", default="-2,4,12,30")
    parser.add_argument("--digits", type=int, default=8)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()

    from precise_kpca.reports.study import StudyPlan, load_study_data, run_study
    from precise_kpca.studies.executors import TaskError
    from precise_kpca.studies.store import ResultsStore

    plan = StudyPlan(tuple(int(p) for p in args.log2_sigma.split(",")), (1, 2, 3), args.digits)
    rows = []
    for n in (int(v) for v in args.rows.split(",")):
        data = load_study_data(args.datasets.split(","), data_dir=args.data_dir, max_rows=n)
        with tempfile.TemporaryDirectory() as tmp, ResultsStore(Path(tmp) / "store.sqlite") as store:
            start = time.perf_counter()
            try:
                run_study(data, plan, store, executor="serial", progress="always")
            except TaskError as exc:  # a failing point (a bug to report) stops its sweep; the stored points count
                print(f"N = {n}: {exc}", flush=True)
            print(f"N = {n}: {time.perf_counter() - start:.1f} s", flush=True)
            frame = store.frame()
        for point in frame.itertuples():
            item = data[point.data_name]
            rows.append(dict(route=(point.route or point.requested_backend).split(" ", 1)[0], measure=point.measure,
                             n=item.X.shape[0], d=item.X.shape[1], log2_sigma=int(point.log2_sigma),
                             seconds=round(float(point.seconds), 4)))
    table = pd.DataFrame(rows)
    source = (f"# source: benchmarks/calibrate_cost.py --datasets {args.datasets} --rows {args.rows} "
              f"--log2-sigma {args.log2_sigma} --digits {args.digits}; serial, OPENBLAS_NUM_THREADS="
              f"{os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}; {platform.platform()}, {os.cpu_count()} CPUs, "
              f"{platform.processor() or platform.machine()}; load average {os.getloadavg()[0]:.1f} at the end; "
              f"{time.strftime('%Y-%m-%d', time.gmtime())}\n")
    args.out.write_text(source + table.to_csv(index=False), encoding="utf-8")
    print(f"wrote {len(table)} rows to {args.out}")


if __name__ == "__main__":
    main()
