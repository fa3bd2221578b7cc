"""Reading what compare and report analyse: results folders (`ccscope run -o`) and sweep folders
(`ccscope sweep -o`), each problem one line naming the file (and field)."""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Sequence

from ccscope.arguments import NamedArgument

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# --delay: the summary field plotted on the delay axis, and its axis label.
DELAY_METRICS = {
    "one_way": ("one_way_delay_p95_ms", "95th percentile one-way delay (ms)"),
    "signal": ("signal_delay_p95_ms", "95th percentile signal delay (ms)"),
    "queue": ("queue_delay_p95_ms", "95th percentile queueing delay (ms)"),
}
# The default --label: the controllers of a run's flows; a sweep's grid point.
DEFAULT_LABEL = "controller"


def label_ref(key: str) -> dict:
    """The `label` argument in a message about a file (``label='k'``; ``ccscope compare``: ``--label k``)."""
    return {"label": (f"label={key!r}", "--label", key)}


class AnalysisInputError(NamedArgument, ValueError):
    """An input that cannot be analysed: the message is one line naming the file (and field), or the argument
    of the analysis function (``delay='x'``, ``out PATH``; a command words it with its options: :meth:`worded`)."""


def read_parquet(path: Path, columns: Optional[Sequence[str]] = None) -> Any:
    """A Parquet file as a pandas DataFrame, or one line naming the file when it is unreadable."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path, columns=list(columns) if columns is not None else None)
    except FileNotFoundError:
        raise AnalysisInputError(f"{path}: missing") from None
    except (pa.ArrowException, OSError, KeyError, ValueError) as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        first = first.split("': ", 1)[-1] if first.startswith("Could not open") else first
        raise AnalysisInputError(f"{path}: not a readable Parquet file ({first})") from None
    return table.to_pandas()


def read_json(path: Path) -> dict:
    try:
        d = json.loads(path.read_text())
    except FileNotFoundError:
        raise AnalysisInputError(f"{path}: missing") from None
    except UnicodeDecodeError:
        raise AnalysisInputError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as e:
        raise AnalysisInputError(f"{path}: line {e.lineno}: not valid JSON ({e.msg})") from None
    if not isinstance(d, dict):
        raise AnalysisInputError(f"{path}: expected a JSON object")
    return d


def read_scenario_text(folder: Path) -> str:
    p = folder / "scenario.toml"
    if not p.exists():
        return ""
    try:
        return p.read_text()
    except UnicodeDecodeError:
        raise AnalysisInputError(f"{p}: not UTF-8 text") from None


def kind_of(folder: Path) -> str:
    """"run", "sweep" or "compare"; one line when the folder is none of them."""
    if not folder.exists():
        raise AnalysisInputError(f"{folder}: no such folder")
    if not folder.is_dir():
        raise AnalysisInputError(f"{folder}: not a folder (expected a results, sweep or compare folder)")
    if (folder / "compare.json").is_file():
        return "compare"
    if (folder / "summary.json").is_file():
        return "run"
    if (folder / "sweep.parquet").is_file():
        return "sweep"
    raise AnalysisInputError(
        f"{folder}: not a results folder (no summary.json), sweep folder (no sweep.parquet) or compare folder "
        "(no compare.json)"
    )


def _number(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan


def _dotted(d: Any, key: str) -> Any:
    cur = d
    for part in key.split("."):
        if isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        elif isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            raise KeyError(key)
    return cur


@dataclass
class RunFolder:
    """One results folder: its summary, flows, effective scenario; time series read on demand."""

    path: Path
    meta: dict
    scenario_text: str

    @classmethod
    def load(cls, path: Path) -> "RunFolder":
        meta = read_json(path / "summary.json")
        for key in ("summary", "flows"):
            if key not in meta:
                raise AnalysisInputError(f"{path / 'summary.json'}: no field `{key}` (not written by ccscope run)")
        if not isinstance(meta["summary"], dict) or not isinstance(meta["flows"], list):
            raise AnalysisInputError(f"{path / 'summary.json'}: fields `summary` and `flows` have the wrong type")
        return cls(path, meta, read_scenario_text(path))

    @property
    def summary(self) -> dict:
        return self.meta["summary"]

    @property
    def flows(self) -> list:
        return self.meta["flows"]

    def scenario(self) -> dict:
        try:
            return tomllib.loads(self.scenario_text) if self.scenario_text else {}
        except tomllib.TOMLDecodeError as e:
            raise AnalysisInputError(f"{self.path / 'scenario.toml'}: {e}") from None

    def controllers(self) -> str:
        names = []
        for f in self.flows:
            c = str(f.get("controller"))
            if c not in names:
                names.append(c)
        return "+".join(names) if names else "?"

    def label(self, key: str) -> str:
        if key == DEFAULT_LABEL:
            return self.controllers()
        try:
            return str(_dotted(self.scenario(), key))
        except KeyError:
            raise AnalysisInputError.naming(str(self.path / "scenario.toml"), "{label}: no such field",
                                            refs=label_ref(key)) from None

    def metric(self, key: str) -> float:
        return _number(self.summary.get(key))

    def timeseries(self) -> Any:
        ts = read_parquet(self.path / "timeseries.parquet")
        for col in ("time_s", "flow", "throughput_mbps"):
            if col not in ts.columns:
                raise AnalysisInputError(f"{self.path / 'timeseries.parquet'}: no column `{col}`")
        return ts

    def has_cwnd(self) -> bool:
        return (self.path / "cwnd.parquet").exists()

    def cwnd(self) -> Any:
        return read_parquet(self.path / "cwnd.parquet", ["time_ms", "flow", "cwnd"]) if self.has_cwnd() else None

    def has_packets(self) -> bool:
        return (self.path / "packets.parquet").exists()

    def packet_delays(self) -> Optional[dict[int, np.ndarray]]:
        """Per flow, the queueing delay (ms) of every packet that left the data link, when the packet
        log was kept (`--packets`)."""
        if not self.has_packets():
            return None
        pk = read_parquet(self.path / "packets.parquet", ["event", "flow", "delay_ms"])
        dep = pk[pk["event"].astype(str) == "departure"]
        return {int(f): g["delay_ms"].to_numpy(dtype=float) for f, g in dep.groupby("flow")}


@dataclass
class SweepFolder:
    """One sweep folder: sweep.parquet, one row per run."""

    path: Path
    table: Any
    grid: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path) -> "SweepFolder":
        from ccscope.sweep import SUMMARY_FIELDS

        df = read_parquet(path / "sweep.parquet")
        for col in ("throughput_mbps",):
            if col not in df.columns:
                raise AnalysisInputError(f"{path / 'sweep.parquet'}: no column `{col}` (not written by ccscope sweep)")
        known = set(SUMMARY_FIELDS) | {"seed"}
        grid = [c for c in df.columns if c not in known and not str(c).startswith("_")]
        return cls(path, df, grid)

    def labels(self, key: str) -> list[str]:
        if key == DEFAULT_LABEL:
            if not self.grid:
                return ["all"] * len(self.table)
            return [", ".join(f"{k}={r[k]}" for k in self.grid) for r in self.table.to_dict(orient="records")]
        if key not in self.table.columns:
            raise AnalysisInputError.naming(
                str(self.path / "sweep.parquet"), f"{{label}}: no such column (grid: {', '.join(self.grid) or 'none'})",
                refs=label_ref(key))
        return [str(v) for v in self.table[key].tolist()]

    def scenario_text(self) -> str:
        return read_scenario_text(self.path)


def load_folder(path: Path) -> Any:
    """A RunFolder or SweepFolder (a compare folder is not an input of compare)."""
    kind = kind_of(path)
    if kind == "run":
        return RunFolder.load(path)
    if kind == "sweep":
        return SweepFolder.load(path)
    raise AnalysisInputError(f"{path}: a compare folder; give the results or sweep folders it compared")


def bin_width_s(ts: Any) -> Optional[float]:
    """The time-series bin width: the smallest step between bin starts."""
    import numpy as np

    t = np.unique(ts["time_s"].to_numpy(dtype=float))
    steps = np.diff(t)
    steps = steps[steps > 0]
    return float(steps.min()) if len(steps) else None


def fmt_bin(bin_s: Optional[float]) -> str:
    if bin_s is None:
        return "one bin"
    return f"{bin_s * 1000:g} ms bins"
