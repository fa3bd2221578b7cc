"""The one process pool of the reproductions (experiments/) and of ``ccscope markov collect``.

Every experiment hands its independent simulations to :class:`Runner`: a pool of worker processes
(or the calling process when one job is asked for), with the package's progress bar. Results come
back in the order the work was given, whatever order the workers finish in, so a report is the same
byte for byte on 1 or N processes. Sweeps and tuning, which need a resumable store and remote
workers, run on the dask client of :mod:`ccscope.cluster` instead.
"""

from __future__ import annotations

import os
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, Callable, Iterable, Optional, Sequence, TypeVar

from ccscope.progress import Progress

T = TypeVar("T")
R = TypeVar("R")


def default_jobs() -> int:
    """One worker per core."""
    return max(1, os.cpu_count() or 1)


def max_jobs() -> int:
    """At most four local workers per core: each is a process of its own (a simulation is single-threaded,
    so more buy no speed), and -j 100000 started that many."""
    return 4 * default_jobs()


def check_jobs(jobs: Optional[int]) -> None:
    """Refuse a local pool larger than :func:`max_jobs` before any worker starts."""
    if jobs is not None and jobs > max_jobs():
        raise ValueError(f"--jobs {jobs}: more than {max_jobs()} local workers (4 per core, {default_jobs()} cores here)")


class Runner:
    """A process pool with a progress bar. Use as a context manager::

        with Runner(jobs=2, label="verus runs", quiet=False) as run:
            results = run.map(simulate, work)

    ``jobs`` <= 1 runs everything in this process (no pool), in the same order."""

    def __init__(self, jobs: Optional[int] = None, label: str = "runs", quiet: bool = False) -> None:
        self.jobs = default_jobs() if jobs is None else int(jobs)
        if self.jobs < 1:
            raise ValueError(f"--jobs {jobs}: need at least one process")
        check_jobs(self.jobs)
        self.bar = Progress(not quiet, label)
        self._pool: Optional[ProcessPoolExecutor] = None

    def __enter__(self) -> "Runner":
        self.bar.__enter__()
        if self.jobs > 1:
            self._pool = ProcessPoolExecutor(max_workers=self.jobs)
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            if self._pool is not None:
                # On an error or ^C: drop what has not started, so the command ends with its workers.
                self._pool.shutdown(wait=True, cancel_futures=exc[0] is not None)
                self._pool = None
        finally:
            self.bar.__exit__(*exc)

    def describe(self, text: str) -> None:
        self.bar.describe(text)

    def submit(self, fn: Callable[..., R], *args: Any, **kwargs: Any) -> "Future[R]":
        """Start `fn(*args, **kwargs)` (counted on the bar when :meth:`done` is called); in this process,
        at once, when jobs is 1."""
        if self._pool is not None:
            return self._pool.submit(fn, *args, **kwargs)
        fut: "Future[R]" = Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except Exception as e:  # re-raised by .result(), as a pool would; Ctrl-C stops the run at once
            fut.set_exception(e)
        return fut

    def expect(self, n: int) -> None:
        """Add `n` items to the bar's total."""
        self.bar.grow(n)

    def done(self, n: int = 1) -> None:
        """Count `n` items finished on the bar."""
        self.bar.advance(n)

    @staticmethod
    def wait_any(futures: Iterable[Future]) -> set:
        """The futures among `futures` that have finished (at least one)."""
        finished, _ = wait(list(futures), return_when=FIRST_COMPLETED)
        return finished

    def map(self, fn: Callable[[T], R], work: Sequence[T], order: Optional[Sequence[int]] = None,
            on_result: Optional[Callable[[int, R], None]] = None) -> list[R]:
        """`fn` of every item of `work`, returned in `work`'s order. `order` is the order to start them in
        (e.g. longest first so the pool's tail is short); `on_result(i, result)` sees each as it finishes."""
        idx = list(range(len(work))) if order is None else list(order)
        if sorted(idx) != list(range(len(work))):
            raise ValueError("order: must be a permutation of the work's indices")
        self.expect(len(work))
        out: list[Any] = [None] * len(work)
        if self._pool is None:
            for i in idx:
                out[i] = fn(work[i])
                self.done()
                if on_result:
                    on_result(i, out[i])
            return out
        pending = {self._pool.submit(fn, work[i]): i for i in idx}
        try:
            while pending:
                for fut in self.wait_any(pending):
                    i = pending.pop(fut)
                    out[i] = fut.result()
                    self.done()
                    if on_result:
                        on_result(i, out[i])
        except BaseException:
            for fut in pending:
                fut.cancel()
            raise
        return out


def run_all(fn: Callable[[T], R], work: Sequence[T], jobs: Optional[int] = None, label: str = "runs",
            quiet: bool = False, order: Optional[Sequence[int]] = None) -> list[R]:
    """`fn` of every item of `work` on a :class:`Runner` of `jobs` processes, in `work`'s order."""
    if not work:
        return []
    with Runner(jobs if len(work) > 1 else 1, label, quiet) as r:
        return r.map(fn, work, order)
