"""pytest-benchmark entries for the high-precision eigensystem (issue 8), small N.

Not collected by the default test command (``testpaths = ["tests"]``); run with::

    OPENBLAS_NUM_THREADS=1 python -m pytest benchmarks/test_bench_eigen.py --benchmark-only

The side-by-side table (eigsy, float64 eigh, digits) is ``benchmarks/eigen_bench.py``.
"""
from __future__ import annotations

import numpy as np
import pytest

from precise_kpca.arith.fixed import FixedMatrix
from precise_kpca.testing import centered_gaussian_gram, gaussian_data
from precise_kpca.numerics.eigen_refine import input_bits, refine_eigensystem
from precise_kpca.numerics.binary128_gram import scaled_gaussian_gram_words

pytest.importorskip("pytest_benchmark")


@pytest.fixture(scope="module", params=[60, 200])
def gram(request):
    n = request.param
    return centered_gaussian_gram(gaussian_data(n, seed=0), bits=256)


@pytest.mark.parametrize("tier", [1, 2])
def test_refine(benchmark, gram, tier):
    res = benchmark.pedantic(refine_eigensystem, args=(gram,), kwargs={"dps": 30, "tier": tier},
                             rounds=3, iterations=1)
    norm = abs(res.values[0])
    assert max(res.value_error_bounds) <= norm * 1e-30
    benchmark.extra_info["iterations"] = res.iterations


def test_float64_eigh(benchmark, gram):
    Af = np.vectorize(float, otypes=[float])(gram)
    benchmark(np.linalg.eigh, Af)


@pytest.mark.parametrize("n", [200, 1000])
def test_refine_binary128_gram(benchmark, n):
    # the binary128 Gram as FixedMatrix words (the N = 5404 route), tier 1; its error bound rides along
    g = scaled_gaussian_gram_words(gaussian_data(n, seed=0), 2**10)
    A = FixedMatrix.from_words([g.hi, g.lo], bits=input_bits(n, 30))
    res = benchmark.pedantic(refine_eigensystem, args=(A,), kwargs={"dps": 30, "input_error": g.error_bound},
                             rounds=1 if n > 200 else 3, iterations=1)
    norm = abs(res.values[0])
    assert max(res.given_value_error_bounds) <= norm * 1e-30
    assert min(res.value_error_bounds) >= g.error_bound
    benchmark.extra_info["iterations"] = res.iterations
