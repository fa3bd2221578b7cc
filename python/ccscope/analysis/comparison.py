"""``ccscope compare``: Pantheon-style comparison of schemes over results folders and sweeps.

Each run (a results folder, or a row of a sweep's table) is one (throughput, 95th-percentile delay)
point; runs are grouped into schemes by the controllers of their flows or by a `--label` key, and each
scheme is drawn at its mean with the 1-sigma ellipse over its runs (Pantheon `analysis/plot.py`).
"""

from __future__ import annotations

import hashlib
import json
import math
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional, Sequence, Union

from ccscope import store
from ccscope.analysis import figures as F
from ccscope.analysis import views
from ccscope.analysis.inputs import (
    DEFAULT_LABEL,
    DELAY_METRICS,
    AnalysisInputError,
    RunFolder,
    SweepFolder,
    fmt_bin,
    load_folder,
)

# The comparison's record (what report and kind_of read); the folder's ownership is the store's manifest.
MARKER = "compare.json"
# How `ccscope compare` names compare()'s arguments (its errors name the options, the API's the arguments).
CLI_OPTIONS = {"inputs": "RESULTS", "out": "-o", "delay": "--delay", "formats": "--formats", "overwrite": "--overwrite"}
FIGURES = ("throughput_delay", "delay_cdf", "throughput_time", "window_time")
# Time panels drawn at most (one per scheme); the table lists every scheme.
MAX_PANELS = 12


@dataclass
class RunPoint:
    """One run's place on the throughput-delay plane."""

    source: str
    name: str
    label: str
    throughput_mbps: float
    delay_ms: float


@dataclass
class Group:
    """One scheme: its runs' statistics (mean, sample s.d., 95% CI half-width by Student's t)."""

    label: str
    runs: int
    throughput_mean: float
    throughput_sd: float
    throughput_ci95: float
    delay_mean: float
    delay_sd: float
    delay_ci95: float
    left_out: int = 0


@dataclass
class CompareResult:
    out: Path
    groups: list[Group]
    runs: list[RunPoint]
    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _ci95(xs: Sequence[float]) -> float:
    """Half-width of the 95% confidence interval of the mean (Student's t, n - 1 degrees of freedom)."""
    if len(xs) < 2:
        return math.nan
    from scipy.special import stdtrit  # Student's t quantile, without importing all of scipy.stats

    return float(stdtrit(len(xs) - 1, 0.975) * statistics.stdev(xs) / math.sqrt(len(xs)))


def group_stats(label: str, runs: Sequence[RunPoint]) -> Group:
    ok = [r for r in runs if math.isfinite(r.throughput_mbps) and math.isfinite(r.delay_ms) and r.delay_ms > 0]
    thr = [r.throughput_mbps for r in ok]
    dl = [r.delay_ms for r in ok]

    def mean(xs: list) -> float:
        return statistics.fmean(xs) if xs else math.nan

    def sd(xs: list) -> float:
        return statistics.stdev(xs) if len(xs) > 1 else math.nan

    return Group(label, len(ok), mean(thr), sd(thr), _ci95(thr), mean(dl), sd(dl), _ci95(dl), len(runs) - len(ok))


def collect(inputs: Sequence[Union[str, Path]], label: Optional[str], delay: str):  # type: ignore[no-untyped-def]
    """Load every input and place its runs; raises AnalysisInputError before anything is written."""
    if delay not in DELAY_METRICS:
        raise AnalysisInputError.naming("delay", f"not one of {', '.join(DELAY_METRICS)}", value=delay)
    if not inputs:
        raise AnalysisInputError.naming("inputs", "give at least one results or sweep folder")
    key, _ = DELAY_METRICS[delay]
    lab = label or DEFAULT_LABEL
    folders: list = []
    points: list[RunPoint] = []
    run_of: dict[int, RunFolder] = {}
    seen = set()
    for raw in inputs:
        path = Path(raw)
        if path.resolve() in seen:
            raise AnalysisInputError(f"{path}: given twice")
        seen.add(path.resolve())
        folder = load_folder(path)
        folders.append(folder)
        if isinstance(folder, RunFolder):
            run_of[len(points)] = folder
            points.append(RunPoint(str(path), path.name, folder.label(lab), folder.metric("throughput_mbps"),
                                   folder.metric(key)))
        else:
            if key not in folder.table.columns:
                raise AnalysisInputError.naming(str(path / "sweep.parquet"), f"no column `{key}` for {{delay}}",
                                                refs={"delay": (f"delay={delay!r}", "--delay", delay)})
            labels = folder.labels(lab)
            for i, (row, name) in enumerate(zip(folder.table.to_dict(orient="records"), labels)):
                seed = f", seed {row['seed']}" if "seed" in row else ""
                points.append(RunPoint(str(path), f"{path.name}[{i}]{seed}", name,
                                       _float(row.get("throughput_mbps")), _float(row.get(key))))
    return folders, points, run_of


def _float(v: object) -> float:
    try:
        return float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan


def grouped(points: Sequence[RunPoint]) -> dict[str, list[int]]:
    """Run indices per label, labels in first-seen order."""
    out: dict[str, list[int]] = {}
    for i, p in enumerate(points):
        out.setdefault(p.label, []).append(i)
    return out


def check_out(out: Path, inputs: Sequence[Union[str, Path]]) -> None:
    """The output is not an input, and not a results folder of another kind (a run's or a sweep's):
    whether a folder may be written at all is the store's decision (:class:`ccscope.store.FolderWriter`)."""
    for raw in inputs:
        if Path(raw).resolve() == out.resolve():
            raise AnalysisInputError.naming("out", "is one of the inputs", value=out, path=True)
    manifest = store.read_manifest(out) if out.is_dir() else None
    if manifest is None and (out / MARKER).is_file():
        # Before the results store, compare marked its folder with compare.json alone: which of the files
        # there it wrote is not recorded, so nothing may be replaced (and --overwrite would refuse them too).
        raise AnalysisInputError.naming("out", f"a comparison written by an earlier ccscope ({MARKER} without "
                                        f"{store.MANIFEST}); give a new folder, or remove that one yourself",
                                        value=out, path=True)
    if manifest is not None and MARKER not in manifest["files"]:
        raise AnalysisInputError.naming("out", f"a ccscope results folder of another kind (no {MARKER} in its "
                                        f"{store.MANIFEST}); give a new folder for the comparison", value=out,
                                        path=True)


def output_names(formats: Sequence[str]) -> list[str]:
    """Every file a compare may write: the figures in each format and the record."""
    return [f"{name}.{fmt}" for name in FIGURES for fmt in formats] + [MARKER]


def compare(
    inputs: Sequence[Union[str, Path]],
    out: Union[str, Path],
    *,
    label: Optional[str] = None,
    delay: str = "one_way",
    formats: Sequence[str] = ("svg", "png"),
    overwrite: bool = False,
) -> CompareResult:
    """Compare runs (results folders) and sweeps (one run per row) as Pantheon does, writing into `out`:
    throughput_delay, delay_cdf, throughput_time and window_time figures (each in `formats`) and
    compare.json (the groups, every run, the inputs' file hashes). `label` groups runs by a scenario key
    (results folders, dotted: `flows.0.window`) or a column (sweeps); by default by controller (runs) and
    grid point (sweeps). `delay` is one_way, signal or queue.

    `out` goes through the results store: a new folder, or an earlier compare (its manifest lists
    compare.json), whose files alone are replaced; a non-empty folder that is not a ccscope results folder
    is refused unless `overwrite`, which adds the comparison beside the files there.

    A bad argument is an :class:`AnalysisInputError` or a :class:`ccscope.store.OutputError` naming it
    (``delay='x': ...``, ``out PATH: ...``); ``ccscope compare`` words it with its options (:data:`CLI_OPTIONS`)."""
    out = Path(out)
    for fmt in formats:
        if fmt not in ("svg", "png", "pdf"):
            raise AnalysisInputError.naming("formats", "not one of svg, png, pdf", value=fmt)
    check_out(out, inputs)
    # The destination is checked here, before any input is read; nothing is written until the commit.
    with store.FolderWriter(out, overwrite=overwrite, names=output_names(formats), option="out") as writer:
        return _compare(inputs, out, writer.stage, label, delay, formats)


def _compare(inputs: Sequence[Union[str, Path]], out: Path, stage: Path, label: Optional[str], delay: str,
             formats: Sequence[str]) -> CompareResult:
    folders, points, run_of = collect(inputs, label, delay)
    key, delay_label = DELAY_METRICS[delay]
    by_label = grouped(points)
    groups = [group_stats(lab, [points[i] for i in idx]) for lab, idx in by_label.items()]
    notes: list[str] = []
    for g in groups:
        if g.left_out:
            notes.append(f"{g.label}: {g.left_out} run(s) without a finite throughput and {delay} delay left out of the figure")

    # Every figure is drawn before anything is written: an error leaves no partial output.
    figs: dict[str, object] = {}
    schemes = [F.Scheme(lab, [points[i].delay_ms for i in idx], [points[i].throughput_mbps for i in idx])
               for lab, idx in by_label.items()]
    n_runs = len(points)
    figs["throughput_delay"] = F.throughput_delay_figure(
        schemes, delay_label=delay_label,
        title=f"{len(schemes)} scheme{'s' if len(schemes) != 1 else ''}, {n_runs} run{'s' if n_runs != 1 else ''}; "
              "mean per scheme, 1-\u03c3 ellipse over runs",
    )
    run_groups = [(lab, [run_of[i] for i in idx if i in run_of]) for lab, idx in by_label.items()]
    run_groups = [(lab, rs) for lab, rs in run_groups if rs]
    if run_groups:
        per_packet = all(r.has_packets() for _, rs in run_groups for r in rs)
        if not per_packet:
            notes.append("delay CDF from per-bin mean one-way delays weighted by delivered bytes: "
                         "run with `ccscope run --packets` for per-packet delays")
        dists, xlabel, ylabel, more = views.distributions(run_groups, per_packet)
        notes += more
        figs["delay_cdf"] = F.cdf_figure(dists, xlabel=xlabel, ylabel=ylabel)
        shown = run_groups[:MAX_PANELS]
        if len(run_groups) > MAX_PANELS:
            notes.append(f"time figures show the first {MAX_PANELS} of {len(run_groups)} schemes")
        panels, bins = [], set()
        for lab, rs in shown:
            p, b = views.throughput_panel(rs[0], _panel_title(lab, rs))
            panels.append(p)
            bins.add(b)
        bin_txt = ", ".join(sorted(fmt_bin(b) for b in bins))
        figs["throughput_time"] = F.time_figure(panels, ylabel=f"throughput (Mbit/s,\n{bin_txt})")
        wpanels = []
        for lab, rs in shown:
            with_cwnd = [r for r in rs if r.has_cwnd()]
            if not with_cwnd:
                notes.append(f"{lab}: {views.CWND_MISSING}")
                continue
            wp = views.window_panel(with_cwnd[0], _panel_title(lab, rs, with_cwnd[0]))
            if wp is not None:
                wpanels.append(wp)
        if wpanels:
            figs["window_time"] = F.time_figure(wpanels, ylabel="window (packets)")
    else:
        notes.append("sweeps keep one summary row per run: no delay CDF or time figures (compare results folders for those)")

    files: list[Path] = []
    for name, fig in figs.items():
        files += [out / p.name for p in F.save_figure(fig, stage / name, formats)]  # type: ignore[arg-type]
    record = {
        "label": label or DEFAULT_LABEL,
        "delay": delay,
        "delay_field": key,
        "inputs": [_input_record(f) for f in folders],
        "groups": [asdict(g) for g in groups],
        "runs": [asdict(p) for p in points],
        "figures": {name: [f"{name}.{fmt}" for fmt in formats] for name in figs},
        "notes": notes,
    }
    (stage / MARKER).write_text(json.dumps(_no_nan(record), indent=1, allow_nan=False) + "\n", encoding="utf-8")
    return CompareResult(out, groups, points, files + [out / MARKER], notes)


def _panel_title(label: str, runs: Sequence[RunFolder], shown: Optional[RunFolder] = None) -> str:
    shown = shown or runs[0]
    return f"{label}: {shown.path.name}" + (f" (1 of {len(runs)} runs)" if len(runs) > 1 else "")


def _input_record(folder: object) -> dict:
    """Where an input was and the SHA-256 of each file read from it."""
    if isinstance(folder, RunFolder):
        names = ["summary.json", "scenario.toml", "timeseries.parquet", "flows.parquet", "cwnd.parquet", "packets.parquet"]
        kind = "run"
    else:
        assert isinstance(folder, SweepFolder)
        names = ["sweep.parquet", "scenario.toml"]
        kind = "sweep"
    path: Path = folder.path  # type: ignore[attr-defined]
    return {"path": str(path.resolve()), "kind": kind,
            "files": {n: _sha256(path / n) for n in names if (path / n).is_file()}}


def _no_nan(o: object) -> object:
    """NaN and infinities as null: compare.json stays strict JSON."""
    if isinstance(o, float) and not math.isfinite(o):
        return None
    if isinstance(o, dict):
        return {k: _no_nan(v) for k, v in o.items()}
    if isinstance(o, list):
        return [_no_nan(v) for v in o]
    return o


def load_record(folder: Path) -> dict:
    from ccscope.analysis.inputs import read_json

    return read_json(folder / MARKER)
