"""Process-pool speed-up of a study on independent bundles: serial vs ``LocalExecutor(workers)``, fresh stores.

The workload is one study (:func:`precise_kpca.reports.study.run_study`) on several data sets subsampled to
``--rows`` rows: its points are grouped into bundles, one per (data set, σ, backend), each independent of the
others (``studies/curves.py: bundle_tasks``). Each repetition runs the same study serially and on the pool, each
into a fresh store, and checks that both stored the same points (timing columns aside). Printed: wall times,
the speed-up serial/pool (median over ``--repeat``), the bound the largest bundle sets (a pool cannot finish before
it), and the machine's load average (a shared machine lowers both runs, not their ratio, only roughly).

    OPENBLAS_NUM_THREADS=1 python benchmarks/pool_bench.py --data-dir /work/shared/datasets
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout, not another installed copy

TIMING_COLUMNS = ["seconds", "created"]


def _run(data, plan, executor, path):
    from precise_kpca.reports.study import run_study
    from precise_kpca.studies.store import KEY_COLUMNS, ResultsStore

    with ResultsStore(path) as store:
        start = time.perf_counter()
        stats = run_study(data, plan, store, executor=executor, progress=False)
        wall = time.perf_counter() - start
        frame = store.frame()
    by_bundle = frame.groupby(["data_hash", "sigma", "requested_backend"])["seconds"].sum()
    points = frame.drop(columns=TIMING_COLUMNS).sort_values(list(KEY_COLUMNS)).reset_index(drop=True)
    return wall, stats, float(by_bundle.max()), points


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.environ.get("PRECISE_KPCA_DATA"))
    parser.add_argument("--datasets", default="wine,cpu,boston,diabetes,stock,ilpd")
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--log2-sigma", default="-2,0,2,4,6,8")
    parser.add_argument("--ks", default="1,2,3")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()

    from precise_kpca.reports.study import StudyPlan, load_study_data
    from precise_kpca.studies.executors import LocalExecutor

    data = load_study_data(args.datasets.split(","), data_dir=args.data_dir, max_rows=args.rows)
    plan = StudyPlan(tuple(int(p) for p in args.log2_sigma.split(",")), tuple(int(k) for k in args.ks.split(",")), 8)
    ratios = []
    for repetition in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            load_before = os.getloadavg()[0]
            serial, stats, largest, serial_points = _run(data, plan, "serial", Path(tmp) / "serial.sqlite")
            pool, pool_stats, _, pool_points = _run(data, plan, LocalExecutor(args.workers),
                                                    Path(tmp) / "pool.sqlite")
        same = serial_points.equals(pool_points)
        bound = serial / max(serial / args.workers, largest)
        ratios.append(serial / pool)
        print(f"run {repetition + 1}: {stats.computed} points in {len(data)} sets of {args.rows} rows; serial "
              f"{serial:.1f} s, pool({args.workers}) {pool:.1f} s: speed-up {serial / pool:.2f} (largest bundle "
              f"{largest:.1f} s, bound {bound:.2f}); points' own times summed: serial {stats.point_seconds:.1f} s, "
              f"pool {pool_stats.point_seconds:.1f} s; stored points identical: {same}; load average "
              f"{load_before:.1f} → {os.getloadavg()[0]:.1f}", flush=True)
        if not same:
            raise SystemExit("the pool stored different points than the serial run")
    print(f"median speed-up over {len(ratios)} run(s): {statistics.median(ratios):.2f} on {args.workers} workers "
          f"({os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
