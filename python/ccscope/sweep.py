"""Parameter sweeps: a grid of overrides times seeds, run in parallel, resumable, one table out.

Each finished point is kept as ``out/points/<key>.json`` (written atomically), so an interrupted
sweep picks up where it stopped; the whole table goes to ``out/sweep.parquet``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any, Iterator, Optional, Union

import pandas as pd
from rich.table import Table

from ccscope import _native, api, store

# The total-row fields of a run's summary that become columns of the sweep table.
SUMMARY_FIELDS = (
    "throughput_mbps",
    "capacity_mbps",
    "utilization",
    "queue_delay_p95_ms",
    "signal_delay_p95_ms",
    "one_way_delay_p95_ms",
    "one_way_delay_mean_ms",
    "loss_rate",
    "score",
    "log2_score",
    "jain_index",
    "sent",
    "delivered",
    "dropped",
)

_NATIVE_ERRORS = {cls.__name__: cls for cls in (_native.ScenarioError, _native.TraceError, _native.ControllerError)}


def parse_grid(params: list[str]) -> dict[str, list]:
    """``["flows.0.window=1,2,5", "duration_s=10"]`` -> ``{"flows.0.window": [1, 2, 5], "duration_s": [10]}``."""
    grid: dict[str, list] = {}
    for item in params:
        key, eq, values = item.partition("=")
        key = key.strip()
        parts = [v.strip() for v in values.split(",")]
        if not eq or not key or any(not v for v in parts):
            raise _native.ScenarioError(f"--param {item}: expected KEY=V1,V2,... with no empty values")
        if key == "seed":
            raise _native.ScenarioError(f"--param {item}: use --seeds to vary the seed")
        if key in grid:
            raise _native.ScenarioError(f"--param {item}: `{key}` is given twice")
        grid[key] = [api.parse_value(v) for v in parts]
    return grid


def point_key(text: str, overrides: dict, seed: int) -> str:
    """The point's file name: a hash of what determines its result."""
    canon = json.dumps({"scenario": text, "overrides": overrides, "seed": seed}, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canon.encode()).hexdigest()[:16]


def _run_point(text: str, file: Optional[str], overrides: dict, seed: int) -> dict:
    """Run one point; module-level so worker processes can import it."""
    res = api.run(api.Scenario(text, file), seed=seed, overrides=overrides)
    return {k: res.summary.get(k) for k in SUMMARY_FIELDS}


def _run_and_save(text: str, file: Optional[str], overrides: dict, seed: int, path: str) -> dict:
    # The worker saves its own point, so finished work survives the parent being interrupted.
    summary = _run_point(text, file, overrides, seed)
    _save_point(Path(path), overrides, seed, summary)
    return summary


def _pool_entry(text: str, file: Optional[str], overrides: dict, seed: int, path: str) -> tuple[str, Any]:
    # The native exception classes do not pickle, so a worker sends (class name, message) back.
    try:
        return "ok", _run_and_save(text, file, overrides, seed, path)
    except tuple(_NATIVE_ERRORS.values()) as e:
        return type(e).__name__, str(e)


def _unwrap(outcome: tuple[str, Any]) -> dict:
    kind, payload = outcome
    if kind != "ok":
        raise _NATIVE_ERRORS[kind](payload)
    return payload


def _load_point(path: Path) -> Optional[dict]:
    try:
        d = json.loads(path.read_text())
        return {k: d["summary"][k] for k in SUMMARY_FIELDS}
    except (FileNotFoundError, ValueError, KeyError, TypeError):
        return None  # missing or unreadable: run it again


def _save_point(path: Path, overrides: dict, seed: int, summary: dict) -> None:
    text = json.dumps({"overrides": overrides, "seed": seed, "summary": summary}, indent=1, default=str) + "\n"
    store.write_file(path, lambda p: p.write_text(text))


def _grid_points(grid: dict[str, list]) -> Iterator[dict]:
    keys = list(grid)
    for combo in itertools.product(*(grid[k] for k in keys)):
        yield dict(zip(keys, combo))


def run_sweep(
    scenario: Union[str, Path],
    grid: dict[str, list],
    seeds: int = 1,
    out: Path = Path("sweep-results"),
    jobs: Optional[int] = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Run every grid point for seeds 1..``seeds`` and return (and write) one row per run.

    All points are validated before any runs, so a bad value raises :class:`ScenarioError` early.
    Points already in ``out/points/`` are loaded instead of run again.
    """
    if seeds < 1:
        raise _native.ScenarioError(f"--seeds {seeds}: need at least one seed")
    if jobs is not None and jobs < 1:
        raise ValueError(f"--jobs {jobs}: need at least one worker")
    if "seed" in grid:
        raise _native.ScenarioError("--param seed: use --seeds to vary the seed")
    base = api.Scenario.load(scenario)
    base.validate()
    points = list(_grid_points(grid))
    for point in points:
        base.with_overrides(point).validate()

    out = Path(out)
    points_dir = out / "points"
    points_dir.mkdir(parents=True, exist_ok=True)
    runs = [(point, seed, points_dir / f"{point_key(base.text, point, seed)}.json") for point in points for seed in range(1, seeds + 1)]
    results: dict[int, dict] = {}
    todo = []
    for i, (point, seed, path) in enumerate(runs):
        loaded = _load_point(path)
        if loaded is None:
            todo.append(i)
        else:
            results[i] = loaded

    workers = min(jobs or os.cpu_count() or 1, len(todo))
    with _Progress(progress, len(runs), len(runs) - len(todo)) as bar:
        if workers <= 1:
            bar.start()
            for i in todo:
                point, seed, path = runs[i]
                results[i] = _run_and_save(base.text, base.file, point, seed, str(path))
                bar.advance()
        elif todo:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                futures = {pool.submit(_pool_entry, base.text, base.file, *runs[i][:2], str(runs[i][2])): i for i in todo}
                bar.start()  # after submitting: the pool may fork, and the bar runs a thread
                pending = set(futures)
                try:
                    while pending:
                        done, pending = wait(pending, return_when=FIRST_EXCEPTION)
                        for fut in done:
                            results[futures[fut]] = _unwrap(fut.result())
                            bar.advance()
                except BaseException:
                    pool.shutdown(cancel_futures=True)
                    raise

    rows = [{**point, "seed": seed, **results[i]} for i, (point, seed, _) in enumerate(runs)]
    df = pd.DataFrame(rows, columns=[*grid, "seed", *SUMMARY_FIELDS])
    for key in grid:
        types = {type(v) for v in grid[key]}
        if len(types) > 1 and not types <= {int, float}:
            df[key] = df[key].astype(str)  # mixed value types: Parquet needs one type per column
    store.write_file(out / "sweep.parquet", lambda p: df.to_parquet(p, index=False))
    return df


class _Progress:
    """A rich progress bar on stderr, or nothing when disabled."""

    def __init__(self, enabled: bool, total: int, completed: int) -> None:
        self.enabled, self.total, self.completed = enabled, total, completed
        self.bar: Any = None
        self.task: Any = None

    def __enter__(self) -> "_Progress":
        return self

    def start(self) -> None:
        if not self.enabled or self.bar is not None:
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(
            TextColumn("sweep"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=Console(stderr=True), transient=True
        )
        self.bar.start()
        self.task = self.bar.add_task("sweep", total=self.total, completed=self.completed)

    def advance(self) -> None:
        if self.bar is not None:
            self.bar.advance(self.task)

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.stop()


def _fmt(v: Any, digits: int) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def render_table(df: pd.DataFrame) -> Table:
    """The sweep table for the terminal: grid columns, seed, Mbit/s, p95 signal delay, score."""
    grid_cols = [c for c in df.columns if c != "seed" and c not in SUMMARY_FIELDS]
    t = Table(title=f"sweep ({len(df)} runs)")
    for col in [*grid_cols, "seed", "Mbit/s", "p95 signal ms", "score"]:
        t.add_column(col, justify="right")
    for r in df.to_dict(orient="records"):
        t.add_row(
            *(_fmt(r[c], 3) for c in grid_cols),
            str(r["seed"]),
            _fmt(r["throughput_mbps"], 3),
            _fmt(r["signal_delay_p95_ms"], 0),
            _fmt(r["score"], 2),
        )
    return t
