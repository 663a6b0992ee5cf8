"""Executors: run a sweep's independent tasks serially, on a local process pool, or on a Dask cluster.

Every executor has the same shape: ``executor.run(fn, shared, tasks)`` calls ``fn(shared, task)`` for each
task and yields ``(task, result)`` pairs **as they complete** (not in task order), so the caller can stream
results into the results store. ``shared`` (the data matrix) is shipped to each worker once, not per task.
Tasks are drawn from the iterable only as workers free up (a few ahead), so a caller can decide each task at the
last moment (the sweeps claim points in the store that way). A task that raises stops the run: pending tasks are
cancelled and a :class:`TaskError` naming the task is raised (results already yielded stay valid); a worker
process that dies (killed, out of memory) raises :class:`WorkerLost`.

Choose one with :func:`get_executor`: ``"serial"``, ``"local"`` (process pool, the default for sweeps), or
``"dask://HOST:PORT"`` (a running ``dask.distributed`` scheduler).
"""
from __future__ import annotations

import itertools
import multiprocessing
import os
import reprlib
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from ..extras import require

DASK_PREFIX = "dask://"


class TaskError(RuntimeError):
    """A task failed; ``task`` is the failing task and ``__cause__`` the original exception."""

    def __init__(self, task, error: BaseException):
        super().__init__(f"{describe(task)} failed: {type(error).__name__}: {error}")
        self.task = task


class WorkerLost(TaskError):
    """A worker process died while it computed ``task`` (killed by a signal, or out of memory)."""

    def __init__(self, task, error: BaseException):
        RuntimeError.__init__(self, f"a worker process died (killed by a signal, or out of memory?) while computing "
                                    f"{describe(task)} or another task in flight ({str(error).rstrip('.')}). Every "
                                    "point finished before it is kept: rerun to resume, with fewer workers if memory "
                                    "ran out")
        self.task = task


def describe(task) -> str:
    """A task in one short phrase: its ``describe()`` where it has one, else a shortened repr."""
    return task.describe() if hasattr(task, "describe") else f"task {reprlib.repr(task)}"


_AHEAD = 2
"""Tasks in flight per worker: one running, one queued, so a worker never waits for the caller."""


class Executor(ABC):
    """Runs ``fn(shared, task)`` for independent tasks, yielding results as they complete."""

    name: str

    @abstractmethod
    def run(self, fn: Callable, shared, tasks: Iterable) -> Iterator[tuple[object, object]]:
        """Yield ``(task, fn(shared, task))`` for every task, in completion order.

        Raises
        ------
        TaskError
            The first task that raised (remaining tasks are cancelled).
        """

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class SerialExecutor(Executor):
    """In this process, one task after another."""

    name = "serial"

    def run(self, fn, shared, tasks):
        for task in tasks:
            try:
                result = fn(shared, task)
            except Exception as exc:
                raise TaskError(task, exc) from exc
            yield task, result


_SHARED = None  # the worker process's copy of ``shared`` (set once by the pool initializer)


def _set_shared(value) -> None:
    global _SHARED
    _SHARED = value
    _exit_with_parent(os.getppid())


def _exit_with_parent(parent: int, period: float = 1.0) -> None:
    """End this worker once its parent is gone (killed with SIGTERM/SIGKILL, the pool gets no chance to stop
    it, and a long high-precision task would otherwise run on as an orphan)."""

    def watch():
        while os.getppid() == parent:
            time.sleep(period)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _call_with_shared(fn, task):
    return fn(_SHARED, task)


class LocalExecutor(Executor):
    """A pool of local worker processes (``spawn`` start method: safe with threads, same on every OS).

    Parameters
    ----------
    workers : int, optional
        Number of processes; default ``os.cpu_count()``. With one worker, or at most one task, runs serially
        in this process (a pool would only add start-up time).
    """

    name = "local"

    def __init__(self, workers: int | None = None):
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
            raise ValueError(f"workers must be a positive integer, got {workers!r}")
        self.workers = workers or os.cpu_count() or 1

    def __repr__(self) -> str:
        return f"LocalExecutor(workers={self.workers})"

    def run(self, fn, shared, tasks):
        tasks = iter(tasks)
        first = list(itertools.islice(tasks, 2))
        if self.workers == 1 or len(first) <= 1:
            yield from SerialExecutor().run(fn, shared, itertools.chain(first, tasks))
            return
        pool = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_set_shared,
            initargs=(shared,),
        )
        queue = itertools.chain(first, tasks)
        try:
            pending = {}
            for task in itertools.islice(queue, self.workers * _AHEAD):
                pending[pool.submit(_call_with_shared, fn, task)] = task
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    task = pending.pop(future)
                    error = future.exception()
                    if isinstance(error, BrokenProcessPool):
                        raise WorkerLost(task, error) from error
                    if error is not None:
                        raise TaskError(task, error) from error
                    yield task, future.result()
                for task in itertools.islice(queue, len(done)):
                    pending[pool.submit(_call_with_shared, fn, task)] = task
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor(Executor):
    """Tasks on a ``dask.distributed`` cluster; ``shared`` is scattered (broadcast) to the workers once.

    Parameters
    ----------
    address : str
        Scheduler address: ``"dask://HOST:PORT"``, ``"tcp://HOST:PORT"`` or ``"HOST:PORT"``.
    timeout : float
        Seconds to wait for the scheduler.

    The workers must be able to import ``precise_kpca`` (same version as here).

    Raises
    ------
    MissingExtra
        When dask.distributed is not installed (the ``[dask]`` extra).
    """

    name = "dask"

    def __init__(self, address: str, *, timeout: float = 10.0):
        if address.startswith(DASK_PREFIX):
            address = address[len(DASK_PREFIX):]
        if not address or ":" not in address:
            raise ValueError(f"dask scheduler address must look like dask://HOST:PORT, got {address!r}")
        require("dask", "the dask:// executor")
        self.address = address if "://" in address else f"tcp://{address}"
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"DaskExecutor({self.address!r})"

    def run(self, fn, shared, tasks):
        from dask.distributed import Client, as_completed  # deferred: importing distributed takes ~1 s

        try:
            client = Client(self.address, timeout=self.timeout, set_as_default=False)
        except OSError as exc:
            raise ValueError(f"cannot reach the dask scheduler at {self.address}: {exc}") from exc
        try:
            shared_future = client.scatter(shared, broadcast=True)
            queue = iter(tasks)
            ahead = max(1, len(client.scheduler_info().get("workers", {}))) * _AHEAD
            pending = {client.submit(fn, shared_future, task, pure=False): task
                       for task in itertools.islice(queue, ahead)}
            completed = as_completed(list(pending), loop=client.loop)
            for future in completed:
                task = pending.pop(future)
                if future.status == "error":
                    error = future.exception()
                    client.cancel(list(pending))
                    raise TaskError(task, error) from error
                yield task, future.result()
                for following in itertools.islice(queue, 1):
                    submitted = client.submit(fn, shared_future, following, pure=False)
                    pending[submitted] = following
                    completed.add(submitted)
        finally:
            client.close()


def get_executor(spec: str | Executor | None = None) -> Executor:
    """An executor from a specification.

    Parameters
    ----------
    spec : {"local", "serial"}, "dask://HOST:PORT", Executor or None
        None means ``"local"`` (a process pool with one worker per core).

    Returns
    -------
    Executor
    """
    if isinstance(spec, Executor):
        return spec
    if spec is None or spec == "local":
        return LocalExecutor()
    if spec == "serial":
        return SerialExecutor()
    if isinstance(spec, str) and spec.startswith(DASK_PREFIX):
        return DaskExecutor(spec)
    raise ValueError(f"unknown executor {spec!r}; use 'local', 'serial' or 'dask://HOST:PORT'")
