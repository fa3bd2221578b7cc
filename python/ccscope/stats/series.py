"""Read one time series from a Parquet file or a ccscope results folder (``timeseries.parquet``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

import numpy as np

from ccscope.stats.errors import StatsError, check_series

#: The link series' default column: bits that left the bottleneck per bin, the paper's "aggregate
#: throughput" at the (G1, G2) link (paper 003 §2.3, Fig. 1).
DEFAULT_COLUMN = "throughput_mbps"
#: Columns that index a series rather than measure it.
INDEX_COLUMNS = ("time_s", "flow")


@dataclass(frozen=True, eq=False)
class Series:
    """``values`` of ``column``; ``bin_s`` from the evenly spaced ``time_s`` column (None without one)."""

    values: np.ndarray
    column: str
    bin_s: Optional[float]
    source: str


def load_series(path: Union[str, Path], column: Optional[str] = None, flow: int = -1) -> Series:
    """The series of `column` for `flow` (default -1, the whole link) from a Parquet file or a results folder.

    Without `column`: ``throughput_mbps`` if present, else the only numeric column that is not
    ``time_s`` or ``flow``. Rows are ordered by ``time_s`` when it exists."""
    import pyarrow.parquet as pq

    path = Path(path)
    if path.is_dir():
        if not (path / "timeseries.parquet").exists():
            raise StatsError(f"series {path}: not a results folder (no timeseries.parquet)")
        file = path / "timeseries.parquet"
    elif path.exists():
        file = path
    else:
        raise StatsError(f"series {path}: no such file or folder")
    try:
        table = pq.read_table(file)
    except Exception as e:  # pyarrow raises several types for a file that is not Parquet
        why = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise StatsError(f"series {file}: not a Parquet file ({why})") from None
    names = table.column_names
    numeric = [c for c in names if c not in INDEX_COLUMNS and _is_numeric(table.schema.field(c).type)]
    if column is None:
        if DEFAULT_COLUMN in names:
            column = DEFAULT_COLUMN
        elif len(numeric) == 1:
            column = numeric[0]
        else:
            raise StatsError(f"column: {file} has {len(numeric)} numeric columns ({', '.join(numeric) or 'none'}); "
                             "name one with --column")
    # The default column too: one of text was cast to numbers and failed naming neither file nor column.
    if column not in numeric:
        raise StatsError(f"column {column!r}: not a numeric column of {file} (columns: {', '.join(numeric) or 'none'})")
    if "time_s" in names and not _is_numeric(table.schema.field("time_s").type):
        raise StatsError(f"series {file}: time_s is not numeric ({table.schema.field('time_s').type})")
    values = table.column(column).to_numpy(zero_copy_only=False).astype(np.float64)
    time = table.column("time_s").to_numpy(zero_copy_only=False).astype(np.float64) if "time_s" in names else None
    if "flow" in names:
        sel = table.column("flow").to_numpy(zero_copy_only=False) == flow
        if not sel.any():
            why = " (the link series); the run kept no link time series" if flow == -1 else ""
            raise StatsError(f"series {file}: no rows of flow {flow}{why}")
        values = values[sel]
        time = time[sel] if time is not None else None
    bin_s = None
    if time is not None:
        order = np.argsort(time, kind="stable")
        values, time = values[order], time[order]
        if len(time) >= 2:
            d = np.diff(time)
            bin_s = float(d[0])
            if bin_s <= 0 or np.max(np.abs(d - bin_s)) > 1e-6 * bin_s:
                raise StatsError(f"series {file}: time_s is not evenly spaced (steps {d.min():.6g} to {d.max():.6g} s)")
    return Series(check_series(values, f"column {column!r}"), column, bin_s, str(file))


def _is_numeric(t) -> bool:
    import pyarrow.types as pt

    return pt.is_integer(t) or pt.is_floating(t)
