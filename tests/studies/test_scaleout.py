"""Scale-out stays real: the same study through a Dask cluster stores exactly the points a serial run stores."""
from __future__ import annotations

import pandas as pd

from precise_kpca.reports.study import StudyPlan, load_study_data, run_study, with_distinct_counts
from precise_kpca.studies import ResultsStore
from precise_kpca.studies.store import KEY_COLUMNS

TIMING_COLUMNS = ("seconds", "created")
"""The only columns allowed to differ between executors: when and how long, not what."""


def _stored(data, plan, path, executor) -> pd.DataFrame:
    with ResultsStore(path) as store:
        stats = run_study(data, plan, store, executor=executor, progress=False)
        frame = store.frame()
    assert stats.computed == len(frame) > 0 and stats.executor == executor.split(":")[0]
    return frame.drop(columns=list(TIMING_COLUMNS)).sort_values(list(KEY_COLUMNS)).reset_index(drop=True)


def test_dask_cluster_stores_the_same_points_as_a_serial_run(data_dir, tmp_path, dask_address):
    """Values, interval texts, guarantees, routes and reasons equal, column by column, for every point of a study
    of two data sets (paper grid and extension, ranks 1 and 2, certified and float64-naive)."""
    data = with_distinct_counts(load_study_data(["wine", "cpu"], data_dir=data_dir, max_rows=12), (1, 2))
    plan = StudyPlan((-2, 6, 20), (1, 2), 8)
    serial = _stored(data, plan, tmp_path / "serial.sqlite", "serial")
    dask = _stored(data, plan, tmp_path / "dask.sqlite", dask_address)
    assert list(serial.columns) == list(dask.columns)
    assert {"value_text", "lower_text", "upper_text", "normalized_text", "guarantee", "route"} <= set(serial.columns)
    for column in serial.columns:
        pd.testing.assert_series_equal(serial[column], dask[column], check_names=True, obj=column)
    assert (serial["guarantee"][serial["requested_backend"] != "float64-naive"] == "rigorous").all()
