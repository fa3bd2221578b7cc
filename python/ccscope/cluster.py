"""The dask client that sweeps and tuning run on: a local cluster by default, or a running scheduler.

A local cluster's workers are child processes of the client's (their nannies live in the client's
process), and a worker process exits as soon as the pipe to its parent closes, so killing the client
even with SIGKILL leaves no worker behind. On a scheduler given by address, the workers belong to
whoever started them; disconnecting releases this client's tasks.
"""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Optional

from ccscope.runner import check_jobs

if TYPE_CHECKING:  # pragma: no cover
    from distributed import Client

#: Seconds to wait for a scheduler given by address before giving up.
CONNECT_TIMEOUT_S = 10


def _quiet() -> None:
    # dask logs worker start-up, shutdown and lost connections at INFO/WARNING: the sweep reports its own errors.
    for name in ("distributed", "tornado", "bokeh"):
        logging.getLogger(name).setLevel(logging.ERROR)


@contextmanager
def open_client(scheduler: Optional[str] = None, jobs: Optional[int] = None) -> Iterator["Client"]:
    """A dask client: on ``scheduler`` (``tcp://HOST:PORT`` or a scheduler file) if given, else on a local cluster of
    ``jobs`` single-threaded worker processes (default: one per core), closed on the way out."""
    from distributed import Client, LocalCluster

    _quiet()
    if scheduler and jobs:
        raise ValueError(f"--jobs {jobs}: sets the size of a local cluster; a --scheduler's cluster is sized by its workers")
    if scheduler:
        # A path to the JSON file `dask scheduler --scheduler-file` wrote (shared home on a cluster), or an address.
        where = {"scheduler_file": scheduler} if scheduler.endswith(".json") else {"address": scheduler}
        if "scheduler_file" in where and not Path(scheduler).is_file():
            raise ValueError(f"--scheduler {scheduler}: no such scheduler file")
        try:
            client = Client(**where, timeout=f"{CONNECT_TIMEOUT_S}s", set_as_default=False)
        except (OSError, ValueError, TypeError) as e:  # TimeoutError is an OSError
            raise ValueError(f"--scheduler {scheduler}: cannot connect ({type(e).__name__}: {e})".rstrip()) from None
        try:
            yield client
        finally:
            client.close()
        return
    if jobs is not None and jobs < 1:
        raise ValueError(f"--jobs {jobs}: need at least one worker")
    check_jobs(jobs)
    cluster = LocalCluster(
        n_workers=jobs or os.cpu_count() or 1,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        # Port 0: any free port, so two sweeps at once do not warn about 8787 (its HTTP server starts anyway).
        dashboard_address="127.0.0.1:0",
        silence_logs=logging.ERROR,
        # Each point is one single-threaded simulation: no need for dask's memory-based pausing.
        memory_limit=0,
    )
    try:
        client = Client(cluster, set_as_default=False)
        try:
            yield client
        finally:
            client.close()
    finally:
        cluster.close()
