"""Studies: convergence curves over σ sweeps, the results store, and executors (serial, process pool, Dask)."""
from .curves import convergence_curve
from .executors import DaskExecutor, Executor, LocalExecutor, SerialExecutor, TaskError, get_executor
from .store import ResultsStore

__all__ = [
    "DaskExecutor",
    "Executor",
    "LocalExecutor",
    "ResultsStore",
    "SerialExecutor",
    "TaskError",
    "convergence_curve",
    "get_executor",
]
