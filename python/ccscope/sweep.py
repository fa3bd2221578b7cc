"""Parameter sweeps: a grid of overrides times seeds, run on a dask cluster, resumable, one table out.

Each point is keyed by :func:`ccscope.provenance.point_key` (scenario text, overrides, seed, the
content of every input file and the ccscope build), and kept as ``out/points/<key>.json`` the moment
it finishes, written by the client, so workers need no shared filesystem for results. A rerun loads
the points whose key is unchanged and runs the others. The per-seed table goes to
``out/sweep.parquet`` and the per-point mean and 95% CI over seeds to ``out/summary.parquet``.
"""

from __future__ import annotations

import itertools
import json
import math
import numbers
import re
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, Union

from ccscope import _native, api, provenance, store
from ccscope.arguments import NamedArgument
from ccscope.progress import Progress
from ccscope.grid import MAX_RUNS, parse_grid

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from distributed import Client
    from rich.table import Table

__all__ = ["SUMMARY_FIELDS", "Sweep", "SweepArgumentError", "parse_grid", "run_sweep", "run_points", "aggregate",
           "render_table"]

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

# Exceptions a worker sends back as (class name, message): the native classes do not pickle.
_NATIVE_ERRORS: dict[str, type] = {
    cls.__name__: cls for cls in (_native.ScenarioError, _native.TraceError, _native.ControllerError, ValueError)
}


# The files whose presence marks an output folder as a sweep's (one a rerun may resume in).
FOLDER_MARKERS = ("sweep.json", "points")
# How `ccscope sweep` names run_sweep's arguments (its errors name the options, the API's the arguments).
CLI_OPTIONS = {"seeds": "--seeds", "grid": "--param", "out": "-o"}


class SweepArgumentError(NamedArgument, _native.ScenarioError):
    """A bad argument of :func:`run_sweep`, found before any run. The message names the Python argument
    (``seeds=0: need at least one seed``, ``grid['k']: no values``); :meth:`worded` with :data:`CLI_OPTIONS`
    names the CLI's options instead (``--seeds 0: ...``, ``--param k: ...``)."""


@dataclass(frozen=True)
class PointRun:
    """One simulation of a sweep: the overrides of its grid point, its seed and its content key."""

    overrides: dict
    seed: int
    key: str
    inputs: dict  # {path: sha256} of the files the point reads, as the client found them


@dataclass
class Sweep:
    """What :func:`run_sweep` returns: the per-seed table, the per-point summary and how it was got."""

    table: "pd.DataFrame"
    summary: "pd.DataFrame"
    grid: dict
    seeds: int  # seeds per point in `table` (1 when extra seeds could not change anything)
    ran: int  # points simulated now
    loaded: int  # points read back from out/points
    warnings: list = field(default_factory=list)


# The temporary files an earlier writer of the sweep left when killed mid-write: ".<name>.<8 random chars>.tmp".
_TEMP = re.compile(r"^\.(sweep\.json|sweep\.parquet|summary\.parquet|tune\.parquet|best\.json|[0-9a-f]{20}\.json)\.[a-z0-9_]{8}\.tmp$")


def clean_temporaries(folder: Path) -> None:
    """Remove what an interrupted write of ours left in `folder` and its points/ (one sweep per folder at a time)."""
    for d in (folder, folder / "points"):
        if d.is_dir():
            store.clean_leftovers(d)
            for p in d.iterdir():
                if _TEMP.match(p.name) and p.is_file():
                    p.unlink(missing_ok=True)


def _load_point(path: Path) -> Optional[dict]:
    try:
        d = json.loads(path.read_text())
        return {k: d["summary"][k] for k in SUMMARY_FIELDS}
    except (FileNotFoundError, ValueError, KeyError, TypeError):
        return None  # missing or unreadable: run it again


def _save_point(path: Path, run: PointRun, summary: dict) -> None:
    rec = {"overrides": run.overrides, "seed": run.seed, "ccscope": provenance.build_id(), "inputs": run.inputs,
           "summary": summary}
    text = json.dumps(rec, indent=1, default=str) + "\n"
    store.write_file(path, lambda p: p.write_text(text))


# Worker side: (path, size, mtime) -> sha256, so a worker hashes each input once per edit.
_HASH_CACHE: dict[tuple, str] = {}


def _hashes_here(sc: api.Scenario) -> dict[str, str]:
    out = {}
    for p in provenance.input_files(sc):
        st = p.stat()
        ident = (str(p), st.st_size, st.st_mtime_ns)
        if ident not in _HASH_CACHE:
            _HASH_CACHE[ident] = provenance.file_sha256(p)
        out[str(p)] = _HASH_CACHE[ident]
    return out


def _by_name(hashes: dict) -> list:
    return sorted((Path(p).name, h) for p, h in hashes.items())


def _run_point(text: str, file: Optional[str], overrides: dict, seed: int, inputs: dict,
               build: Optional[str] = None) -> tuple[str, Any]:
    """Run one point on a worker: ``("ok", summary)`` or ``(error class name, message)``."""
    try:
        if build is not None and build != provenance.build_id():
            raise ValueError(f"a worker runs ccscope {provenance.build_id()}, the client {build}: install the same "
                             "ccscope everywhere")
        sc = api.Scenario(text, file)
        # The key promised these inputs: a worker that reads other bytes (another machine's copy) must not answer.
        # By name and content, as the key counts them: the package's own traces may live elsewhere here.
        here, want = _by_name(_hashes_here(sc.with_overrides(overrides))), _by_name(inputs)
        if here != want:
            name = sorted(set(here) ^ set(want))[0][0]
            raise ValueError(f"{name}: this worker's copy differs from the client's (or is missing); "
                             "give every machine the same files at the same paths")
        res = api.run(sc, seed=seed, overrides=overrides)
        return "ok", {k: res.summary.get(k) for k in SUMMARY_FIELDS}
    except tuple(_NATIVE_ERRORS.values()) as e:
        return type(e).__name__ if type(e).__name__ in _NATIVE_ERRORS else "ValueError", str(e)


def _unwrap(outcome: tuple[str, Any]) -> dict:
    kind, payload = outcome
    if kind != "ok":
        raise _NATIVE_ERRORS[kind](payload)
    return payload


def plan(base: api.Scenario, points: list[dict], seeds: Iterable[int]) -> list[PointRun]:
    """Validate every point (before anything runs) and key each (point, seed) by content."""
    seeds = list(seeds)
    hashes: dict[Path, str] = {}
    runs = []
    for point in points:
        sc = base.with_overrides(point)
        files = provenance.input_files(sc, sc.validate())
        for p in files:
            if p not in hashes:
                hashes[p] = provenance.file_sha256(p)
        inputs = {str(p): hashes[p] for p in files}
        runs += [PointRun(point, s, provenance.point_key(base.text, point, s, inputs), inputs) for s in seeds]
    return runs


class SweepError(RuntimeError):
    """A point that could not be run for a reason other than its input (its workers died)."""


def _describe(r: PointRun) -> str:
    return "point " + " ".join(f"{k}={v}" for k, v in r.overrides.items()) + f" seed={r.seed}"


def absolute(sc: api.Scenario) -> api.Scenario:
    """`sc` with its file as an absolute path: a worker's current folder is not the client's."""
    if sc.file is None:
        return sc
    return api.Scenario(sc.text, str(Path(sc.file).resolve()), sc.overridden, sc.written)


class PointRunner:
    """Runs :class:`PointRun` s on a dask client, loading stored ones, storing each as it finishes."""

    def __init__(self, client: "Client", base: api.Scenario, store: Path, bar: Progress) -> None:
        from distributed import as_completed

        self.client, self.base, self.store, self.bar = client, base, store, bar
        self.results: dict[str, dict] = {}
        self.runs: dict[str, PointRun] = {}
        self.ran = self.loaded = 0
        self._pending = as_completed(loop=client.loop)
        self._futures: dict[str, Any] = {}

    def submit(self, runs: list[PointRun], on_result: Callable[[PointRun], None] = lambda r: None) -> None:
        """Queue `runs`; a stored one counts as done at once (and `on_result` sees it)."""
        self.store.mkdir(parents=True, exist_ok=True)
        self.bar.grow(len({r.key for r in runs} - set(self.runs)))
        for r in runs:
            if r.key in self.runs:
                continue  # the same point twice: run once
            self.runs[r.key] = r
            loaded = _load_point(self.store / f"{r.key}.json")
            if loaded is not None:
                self.results[r.key] = loaded
                self.loaded += 1
                self.bar.advance()
                on_result(r)
                continue
            fut = self.client.submit(_run_point, self.base.text, self.base.file, r.overrides, r.seed, r.inputs,
                                     provenance.build_id(),
                                     key=f"ccscope-point-{r.key}", pure=False)
            self._futures[fut.key] = r
            self._pending.add(fut)

    def drain(self, on_result: Callable[[PointRun], None] = lambda r: None) -> None:
        """Wait for every queued run, storing each result as it arrives; `on_result` may submit more."""
        from distributed import KilledWorker

        try:
            for fut in self._pending:
                r = self._futures.pop(fut.key)
                try:
                    outcome = fut.result()
                except KilledWorker:
                    raise SweepError(f"{_describe(r)}: every worker that ran it died (the simulation crashed or "
                                     "ran out of memory)") from None
                summary = _unwrap(outcome)
                fut.release()  # the result is on disk now: free the worker's copy
                _save_point(self.store / f"{r.key}.json", r, summary)
                self.results[r.key] = summary
                self.ran += 1
                self.bar.advance()
                on_result(r)
        except BaseException:
            self.client.cancel(list(self._pending.futures))
            raise


def run_points(client: "Client", base: api.Scenario, runs: list[PointRun], store: Path,
               progress: bool = False, label: str = "runs") -> list[dict]:
    """Run (or load) every run and return the summaries in `runs`' order."""
    with Progress(progress, label) as bar:
        runner = PointRunner(client, base, store, bar)
        runner.submit(runs)
        runner.drain()
    return [runner.results[r.key] for r in runs]


def _grid_points(grid: dict[str, list]) -> list[dict]:
    keys = list(grid)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(grid[k] for k in keys))]


def _point_id(point: dict) -> str:
    return json.dumps(point, sort_keys=True, default=str)


def _same(a: dict, b: dict) -> bool:
    # json so NaN equals NaN: identical runs must compare equal.
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def run_sweep(
    scenario: Union[str, Path, api.Scenario],
    grid: dict[str, list],
    seeds: int = 1,
    out: Path = Path("sweep-results"),
    jobs: Optional[int] = None,
    scheduler: Optional[str] = None,
    client: Optional["Client"] = None,
    progress: bool = False,
) -> Sweep:
    """Run every grid point for seeds 1..``seeds`` on dask and write ``sweep.parquet`` and ``summary.parquet``.

    All points are validated before any runs, so a bad value raises :class:`ScenarioError` early.
    With ``seeds > 1``, seeds 1 and 2 of every point run first; if they agree everywhere, the seed
    changes nothing in this scenario, a warning says so and the table keeps seed 1 only.
    Uses ``client`` if given, else a cluster from :func:`ccscope.cluster.open_client`.
    """
    import pandas as pd

    from ccscope.cluster import open_client

    if isinstance(seeds, bool) or not isinstance(seeds, numbers.Integral):
        raise SweepArgumentError.naming("seeds", "must be a whole number of seeds", value=seeds)
    if seeds < 1:
        raise SweepArgumentError.naming("seeds", "need at least one seed", value=seeds)
    if "seed" in grid:
        raise SweepArgumentError.naming("grid", "use {seeds} to vary the seed", key="seed",
                                        refs={"seeds": ("seeds=", "--seeds")})
    for k, values in grid.items():
        if not isinstance(values, (list, tuple)):
            raise SweepArgumentError.naming("grid", f"expected a list of values, got {values!r}", key=k)
        if not values:  # the product would be empty: nothing would run
            raise SweepArgumentError.naming("grid", "no values", key=k)
    points = _grid_points(grid)
    if len(points) * seeds > MAX_RUNS:
        raise SweepArgumentError.naming("seeds", f"{len(points) * seeds} runs, more than the limit of {MAX_RUNS}",
                                        value=seeds)
    base = absolute(scenario if isinstance(scenario, api.Scenario) else api.Scenario.load(scenario))
    base.validate()
    first = plan(base, points, range(1, min(seeds, 2) + 1))
    rest = plan(base, points, range(3, seeds + 1))

    out = Path(out)
    store.check_resumable_folder(out, FOLDER_MARKERS, "sweep", option="out")
    state = {"random": False}
    by_point: dict[tuple, dict] = {}

    def check(r: PointRun) -> None:
        # Seed 2 differing from seed 1 anywhere means the seed matters: queue seeds 3..N once.
        if seeds == 1 or state["random"]:
            return
        seen = by_point.setdefault(_point_id(r.overrides), {})
        seen[r.seed] = runner.results[r.key]
        if len(seen) == 2 and not _same(seen[1], seen[2]):
            state["random"] = True
            runner.submit(rest)

    with (open_client(scheduler, jobs) if client is None else nullcontext(client)) as c, Progress(progress) as bar:
        out.mkdir(parents=True, exist_ok=True)  # once the cluster is up: a bad --scheduler leaves no folder
        clean_temporaries(out)
        runner = PointRunner(c, base, out / "points", bar)
        runner.submit(first, check)
        runner.drain(check)

    warnings = []
    used = seeds
    if seeds > 1 and not state["random"]:
        used = 1
        warnings.append(f"warning: seeds 1 and 2 gave identical results at every grid point: this scenario has no "
                        f"randomness the seed changes (no random loss, random traffic or start jitter), so "
                        f"a sweep of {seeds} seeds ran seed 1 only")
    runs = [r for r in first + rest if r.seed <= used]
    order = {_point_id(p): i for i, p in enumerate(points)}
    runs.sort(key=lambda r: (order[_point_id(r.overrides)], r.seed))
    rows = [{**r.overrides, "seed": r.seed, **runner.results[r.key]} for r in runs]
    df = pd.DataFrame(rows, columns=[*grid, "seed", *SUMMARY_FIELDS])
    for key in grid:
        types = {type(v) for v in grid[key]}
        if len(types) > 1 and not types <= {int, float}:
            df[key] = df[key].astype(str)  # mixed value types: Parquet needs one type per column
    summary = aggregate(df, list(grid))
    # What reproduces the tables: the scenario as read, the grid, the seeds and the build (each point's inputs are in its file).
    record = {"scenario_file": base.file, "scenario": base.text, "grid": grid, "seeds": seeds, "seeds_run": used,
              "ccscope": provenance.build_id()}
    record_text = json.dumps(record, indent=1, default=str) + "\n"
    store.write_file(out / "sweep.json", lambda p: p.write_text(record_text))
    store.write_file(out / "sweep.parquet", lambda p: df.to_parquet(p, index=False))
    store.write_file(out / "summary.parquet", lambda p: summary.to_parquet(p, index=False))
    return Sweep(df, summary, grid, used, runner.ran, runner.loaded, warnings)


def t_ci95(values: list) -> tuple[float, float, int]:
    """(mean, half-width of the 95% Student-t confidence interval, n) of the finite values."""
    from scipy import stats

    xs = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    n = len(xs)
    if n == 0:
        return math.nan, math.nan, 0
    mean = sum(xs) / n
    if n == 1:
        return mean, math.nan, 1
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    return mean, float(stats.t.ppf(0.975, n - 1)) * sd / math.sqrt(n), n


def aggregate(df: "pd.DataFrame", grid_cols: list[str]) -> "pd.DataFrame":
    """Per grid point: the number of seeds, and each metric's mean and 95% CI half-width (``_ci95``)."""
    import pandas as pd

    rows = []
    groups: dict[tuple, list] = {}
    for rec in df.to_dict(orient="records"):
        groups.setdefault(tuple(rec[c] for c in grid_cols), []).append(rec)
    for point, recs in groups.items():
        row: dict[str, Any] = dict(zip(grid_cols, point))
        row["seeds"] = len(recs)
        for m in SUMMARY_FIELDS:
            mean, half, _ = t_ci95([r[m] for r in recs])
            row[f"{m}_mean"], row[f"{m}_ci95"] = mean, half
        rows.append(row)
    cols = [*grid_cols, "seeds", *(f"{m}_{s}" for m in SUMMARY_FIELDS for s in ("mean", "ci95"))]
    return pd.DataFrame(rows, columns=cols)


def _fmt(v: Any, digits: int) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def _pm(mean: Any, half: Any, digits: int) -> str:
    if half is None or half != half:
        return _fmt(mean, digits)
    return f"{_fmt(mean, digits)} ± {_fmt(half, digits)}"


# (header, metric, decimals) of the terminal table.
_SHOWN = (("Mbit/s", "throughput_mbps", 3), ("p95 signal ms", "signal_delay_p95_ms", 0), ("score", "score", 2))


def _grid_value(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _columns(t: "Table", grid_cols: list[str], middle: str) -> None:
    # Grid keys fold rather than truncate; metric cells never wrap, so "mean ± ci" stays on one line at 80 columns.
    for col in grid_cols:
        t.add_column(col, justify="right", overflow="fold")
    t.add_column(middle, justify="right", no_wrap=True)
    for h, _, _ in _SHOWN:
        t.add_column(h, justify="right", no_wrap=True)


def render_table(result: Union[Sweep, "pd.DataFrame"]) -> "Table":
    """The terminal table: per seed with one seed, else per point with mean ± 95% CI over seeds."""
    from rich import box
    from rich.table import Table

    df = result.table if isinstance(result, Sweep) else result
    grid_cols = [c for c in df.columns if c != "seed" and c not in SUMMARY_FIELDS]
    seeds = result.seeds if isinstance(result, Sweep) else df["seed"].nunique()
    if seeds <= 1:
        t = Table(title=f"sweep ({len(df)} runs)", box=box.SIMPLE_HEAD)
        _columns(t, grid_cols, "seed")
        for r in df.to_dict(orient="records"):
            t.add_row(*(_grid_value(r[c]) for c in grid_cols), str(r["seed"]), *(_fmt(r[m], d) for _, m, d in _SHOWN))
        return t
    summary = result.summary if isinstance(result, Sweep) else aggregate(df, grid_cols)
    t = Table(title=f"sweep ({len(summary)} points x {seeds} seeds; mean ± 95% CI, Student t)", box=box.SIMPLE_HEAD)
    _columns(t, grid_cols, "seeds")
    for r in summary.to_dict(orient="records"):
        t.add_row(*(_grid_value(r[c]) for c in grid_cols), str(r["seeds"]),
                  *(_pm(r[f"{m}_mean"], r[f"{m}_ci95"], d) for _, m, d in _SHOWN))
    return t
