"""Cost of the linear enclosure (the exact linear side's warm-up) on the one-hot data sets, per grid.

    OPENBLAS_NUM_THREADS=1 python benchmarks/linear_bench.py --data-dir ../shared/datasets
    OPENBLAS_NUM_THREADS=1 python benchmarks/linear_bench.py --sets splice --bits 128 256 --timeout 900

Run it once on each tree (``PYTHONPATH=<tree>``) and compare: one line per (set, bits) with the process CPU seconds of
``linear_enclosure(X, bits)`` computed afresh (the exact integer form and rank are computed once per set and not
counted) and the radius it reached, as log2 of radius / λ₁ (the grid asks for 2^-bits). Each (set, bits) runs in a
child process so that ``--timeout`` can stop a slow one (the mpmath eigsy fallback of the tree before
``certify/linear_refine.py``: splice at 256 bits ran over 1150 s).
"""
from __future__ import annotations

import argparse
import math
import multiprocessing
import time

from precise_kpca.certify import linear_enclosure as linear_module
from precise_kpca.datasets import load
from precise_kpca.numerics.linear_exact import exact_linear


def _time_one(name: str, data_dir: str, bits: int, out) -> None:
    X = load(name, data_dir=data_dir)
    exact_linear(X)
    start = time.process_time()
    lin = linear_module.linear_enclosure(X, bits)
    seconds = time.process_time() - start
    radius_bits = math.log2(lin.radius / lin.values[0]) if lin.radius else -math.inf  # 0: the pairs are exact
    out.put((seconds, radius_bits, lin.rank, lin.exact.small.nrows()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default="../shared/datasets")
    parser.add_argument("--sets", nargs="+", default=["tic-tac-toe", "kr-vs-kp", "splice"])
    parser.add_argument("--bits", type=int, nargs="+", default=[128, 256, 512, 1024])
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per (set, bits) before giving up")
    args = parser.parse_args()
    for name in args.sets:
        for bits in args.bits:
            out = multiprocessing.Queue()
            child = multiprocessing.Process(target=_time_one, args=(name, args.data_dir, bits, out))
            started = time.perf_counter()
            child.start()
            child.join(args.timeout)
            if child.is_alive():
                child.terminate()
                child.join()
                print(f"{name:12s} bits {bits:5d}: over {time.perf_counter() - started:.0f} s wall (stopped)", flush=True)
                continue
            if child.exitcode != 0:
                print(f"{name:12s} bits {bits:5d}: failed (exit code {child.exitcode})", flush=True)
                continue
            seconds, radius_bits, rank, size = out.get()
            print(f"{name:12s} bits {bits:5d}: {seconds:7.2f} s CPU, radius 2^{radius_bits:.1f} λ₁ "
                  f"(S {size}×{size}, rank {rank})", flush=True)


if __name__ == "__main__":
    main()
