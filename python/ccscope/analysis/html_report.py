"""``ccscope report DIR -o report.html``: one self-contained HTML page for a run, a sweep or a compare.

The page holds the summary tables, the figures as inline SVG, the effective scenario and the inputs'
hashes; it loads nothing from anywhere (no scripts, no external URLs), so it can be mailed or archived.
"""

from __future__ import annotations

import datetime
import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence, Union

from ccscope import store
from ccscope.analysis import figures as F
from ccscope.analysis import views
from ccscope.analysis.comparison import RunPoint, group_stats, grouped, load_record
from ccscope.analysis.files import write_atomic
from ccscope.analysis.inputs import (
    DEFAULT_LABEL,
    AnalysisInputError,
    RunFolder,
    SweepFolder,
    fmt_bin,
    kind_of,
    read_json,
)

TEMPLATE = "report.html.j2"


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[str]]
    note: str = ""


@dataclass
class Figure:
    title: str
    svg: str
    caption: str


@dataclass
class Page:
    title: str
    kind: str
    source: str
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    scenarios: list[tuple[str, str]] = field(default_factory=list)
    provenance: list[Table] = field(default_factory=list)


def _f(v: Any, digits: int = 2) -> str:
    if v is None or isinstance(v, bool):
        return "-" if v is None else str(v)
    if isinstance(v, float):
        return "-" if not math.isfinite(v) else f"{v:.{digits}f}"
    return str(v)


def _pm(mean: float, sd: float, digits: int) -> str:
    return _f(mean, digits) + ("" if sd != sd else f" \u00b1 {_f(sd, digits)}")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _figure(title: str, fig: Any, caption: str, index: int) -> Figure:
    return Figure(title, F.inline_svg(F.figure_svg(fig), f"f{index}-"), caption)


# ---------------------------------------------------------------------------------------- a run

FLOW_COLUMNS = [("flow", "flow", 0), ("controller", "controller", 0), ("throughput_mbps", "Mbit/s", 3),
                ("utilization", "util", 3), ("queue_delay_p95_ms", "p95 queueing delay (ms)", 0),
                ("signal_delay_p95_ms", "p95 signal delay (ms)", 0), ("one_way_delay_p95_ms", "p95 one-way delay (ms)", 1),
                ("loss_rate", "loss", 4), ("score", "score", 2)]


def _run_tables(run: RunFolder) -> list[Table]:
    rows = []
    for r in [*run.flows, {**run.summary, "flow": "all"}]:
        rows.append([_f(r.get(k), d) if k != "flow" else str(r.get("flow")) for k, _, d in FLOW_COLUMNS])
    out = [Table("flows", [c for _, c, _ in FLOW_COLUMNS], rows)]
    links = run.meta.get("links") or []
    if len(links) > 2:
        cols = [("link", "link", 0), ("throughput_mbps", "Mbit/s", 3), ("capacity_mbps", "capacity (Mbit/s)", 3),
                ("utilization", "util", 3), ("arrivals", "arrivals", 0), ("dropped", "dropped", 0),
                ("loss_rate", "loss", 4), ("queue_delay_p95_ms", "p95 queueing delay (ms)", 0)]
        out.append(Table("links", [c for _, c, _ in cols], [[_f(r.get(k), d) for k, _, d in cols] for r in links]))
    s = run.summary
    if isinstance(s.get("jain_index"), float) and len(run.flows) > 1:
        out[0].note = f"Jain's fairness index over the flows: {s['jain_index']:.4f}"
    return out


def _run_page(path: Path) -> Page:
    run = RunFolder.load(path)
    sc = run.meta.get("scenario", {})
    name = sc.get("name", path.name)
    page = Page(f"{name}: run report", "run", str(path))
    page.tables = _run_tables(run)
    tp, bin_s = views.throughput_panel(run, "")
    page.figures.append(_figure(
        "Throughput over time", F.time_figure([tp], ylabel=f"throughput (Mbit/s,\n{fmt_bin(bin_s)})"),
        f"Bits leaving the data link per flow in {fmt_bin(bin_s)} (Mahimahi's egress), over the link's capacity per "
        "bin (shaded).", 0))
    per_packet = run.has_packets()
    dists, xlabel, ylabel, notes = views.distributions([(name, [run])], per_packet)
    page.notes += notes
    page.figures.append(_figure(
        "Delay distribution", F.cdf_figure(dists, xlabel=xlabel, ylabel=ylabel),
        "Per-packet queueing delay at the data link (the packet log)." if per_packet else
        f"Each {fmt_bin(bin_s)[:-1]}'s mean one-way delay, weighted by the bytes delivered in it; "
        "`ccscope run --packets` keeps per-packet delays.", 1))
    wp = views.window_panel(run, "")
    if wp is None:
        page.notes.append(views.CWND_MISSING)
    else:
        page.figures.append(_figure("Window over time", F.time_figure([wp], ylabel="window (packets)"),
                                    "Every change of each flow's congestion window (cwnd.parquet).", 2))
    if len(run.flows) > 1:
        schemes = [F.Scheme(f"flow {r.get('flow')} ({r.get('controller')})", [_num(r.get("one_way_delay_p95_ms"))],
                            [_num(r.get("throughput_mbps"))]) for r in run.flows]
        page.figures.append(_figure("Throughput against delay, per flow", F.throughput_delay_figure(schemes),
                                    "Each flow's average throughput against its 95th-percentile one-way delay.", 3))
    page.scenarios.append(("scenario.toml (the effective scenario of this run)", run.scenario_text or "(missing)"))
    page.provenance = run_provenance(run) + [_files_table(path)]
    return page


def _num(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan


def run_provenance(run: RunFolder) -> list[Table]:
    """What reproduces the run: its recorded provenance, else the inputs' hashes computed now."""
    recorded: Optional[dict] = None
    where = ""
    if (run.path / "provenance.json").is_file():
        recorded, where = read_json(run.path / "provenance.json"), "provenance.json"
    elif isinstance(run.meta.get("provenance"), dict):
        recorded, where = run.meta["provenance"], "summary.json `provenance`"
    elif isinstance(run.summary.get("provenance"), dict):
        recorded, where = run.summary["provenance"], "summary.json `summary.provenance`"
    if recorded is not None:
        inputs = recorded.get("inputs") if isinstance(recorded.get("inputs"), dict) else {}
        fields = [[k, _f(v) if not isinstance(v, (dict, list)) else str(v)] for k, v in recorded.items() if k != "inputs"]
        return [Table(f"Provenance (recorded at run time, {where})", ["field", "value"], fields),
                Table("Input files (recorded at run time)", ["file", "SHA-256"], [[p, h] for p, h in inputs.items()])]
    return [_computed_inputs(run)]


def _computed_inputs(run: RunFolder) -> Table:
    """No provenance recorded: hash the scenario's inputs as they are now, saying which are missing."""
    from ccscope import api, provenance

    rows: list[list[str]] = []
    note = ("Not recorded at run time (this folder predates provenance records): hashed now from the files the "
            "scenario names, which may have changed since the run.")
    hashes: dict[str, str] = {}
    try:
        sc = api.Scenario(run.scenario_text, str(run.path / "scenario.toml"))
        hashes = provenance.input_hashes(sc)
    except Exception as e:  # the scenario no longer resolves here (moved traces, missing controller)
        note += f" The scenario no longer loads here ({str(e).splitlines()[0] if str(e) else type(e).__name__})."
    for p, h in hashes.items():
        rows.append([p, h, "hashed now"])
    recorded_paths = run.meta.get("scenario", {}).get("inputs", []) or []
    found = {Path(p).name for p in hashes}
    for p in recorded_paths:
        if Path(p).name in found:
            continue
        rows.append([p, _sha256(Path(p)) if Path(p).is_file() else "-",
                     "hashed now" if Path(p).is_file() else "missing: cannot be hashed"])
    return Table("Input files", ["file", "SHA-256", "status"], rows, note)


def _files_table(path: Path, names: Optional[Sequence[str]] = None) -> Table:
    files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith(".")) if names is None else \
        [path / n for n in names if (path / n).is_file()]
    return Table(f"Files of {path.name}", ["file", "bytes", "SHA-256"],
                 [[p.name, str(p.stat().st_size), _sha256(p)] for p in files])


# -------------------------------------------------------------------------------------- a sweep


def _sweep_page(path: Path) -> Page:
    sw = SweepFolder.load(path)
    df = sw.table
    page = Page(f"{path.name}: sweep report", "sweep", str(path))
    labels = sw.labels(DEFAULT_LABEL)
    points = [RunPoint(str(path), f"{path.name}[{i}]", lab, _num(r.get("throughput_mbps")),
                       _num(r.get("one_way_delay_p95_ms")))
              for i, (r, lab) in enumerate(zip(df.to_dict(orient="records"), labels))]
    by = grouped(points)
    groups = [group_stats(lab, [points[i] for i in idx]) for lab, idx in by.items()]
    page.tables.append(_groups_table(groups, "Grid points (mean over seeds)", "p95 one-way delay"))
    metric_cols = [c for c in ("throughput_mbps", "utilization", "queue_delay_p95_ms", "signal_delay_p95_ms",
                               "one_way_delay_p95_ms", "loss_rate", "score") if c in df.columns]
    cols = [*sw.grid, *(["seed"] if "seed" in df.columns else []), *metric_cols]
    page.tables.append(Table(f"Runs ({len(df)})", cols, [[_f(r[c], 3) for c in cols] for r in df.to_dict(orient="records")]))
    schemes = [F.Scheme(lab, [points[i].delay_ms for i in idx], [points[i].throughput_mbps for i in idx])
               for lab, idx in by.items()]
    page.figures.append(_figure("Throughput against delay", F.throughput_delay_figure(schemes),
                                "One point per grid point at the mean over its seeds; small dots are single runs; "
                                "the shaded ellipse is the 1-\u03c3 contour over runs.", 0))
    text = sw.scenario_text()
    if text:
        page.scenarios.append(("scenario.toml", text))
    else:
        page.notes.append("this sweep folder keeps no scenario.toml: the scenario is not part of the report")
    if (path / "provenance.json").is_file():
        rec = read_json(path / "provenance.json")
        page.provenance.append(Table("Provenance (provenance.json)", ["field", "value"],
                                     [[k, str(v)] for k, v in rec.items()]))
    page.provenance.append(_files_table(path))
    return page


def _groups_table(groups: Sequence[Any], title: str, delay_name: str) -> Table:
    cols = ["scheme", "runs", "throughput (Mbit/s), mean \u00b1 s.d.", "95% CI \u00b1",
            f"{delay_name} (ms), mean \u00b1 s.d.", "95% CI \u00b1"]
    rows = [[g.label, str(g.runs), _pm(g.throughput_mean, g.throughput_sd, 3), _f(g.throughput_ci95, 3),
             _pm(g.delay_mean, g.delay_sd, 1), _f(g.delay_ci95, 1)] for g in groups]
    return Table(title, cols, rows, "s.d.: sample standard deviation over runs; CI: Student's t, n - 1 degrees of freedom.")


# ------------------------------------------------------------------------------------ a compare


def _compare_page(path: Path) -> Page:
    from ccscope.analysis.comparison import Group
    from ccscope.analysis.inputs import DELAY_METRICS

    rec = load_record(path)
    try:
        groups = [Group(**{k: (math.nan if v is None else v) for k, v in g.items()}) for g in rec["groups"]]
        runs = rec["runs"]
        delay = rec["delay"]
        figures = rec["figures"]
        inputs = rec["inputs"]
    except (KeyError, TypeError) as e:
        raise AnalysisInputError(f"{path / 'compare.json'}: missing or malformed field ({e})") from None
    delay_label = DELAY_METRICS.get(delay, (None, delay))[1].replace(" (ms)", "")
    page = Page(f"{path.name}: comparison", "compare", str(path))
    page.tables.append(_groups_table(groups, f"Schemes (grouped by {rec.get('label', DEFAULT_LABEL)})", delay_label))
    page.tables.append(Table(f"Runs ({len(runs)})", ["run", "scheme", "Mbit/s", f"{delay_label} (ms)"],
                             [[r["name"], r["label"], _f(r["throughput_mbps"], 3), _f(r["delay_ms"], 1)] for r in runs]))
    captions = {
        "throughput_delay": ("Throughput against delay", "Mean per scheme; small dots are single runs; the shaded "
                             "ellipse is the 1-\u03c3 contour over runs. Better is up and to the right."),
        "delay_cdf": ("Delay distribution", "Per flow, the scheme's runs pooled."),
        "throughput_time": ("Throughput over time", "One run per scheme; capacity shaded."),
        "window_time": ("Window over time", "One run per scheme: every window change (cwnd.parquet)."),
    }
    for i, (name, files) in enumerate(figures.items()):
        svg = path / f"{name}.svg"
        if not svg.is_file():
            raise AnalysisInputError(f"{svg}: missing (rerun `ccscope compare` with --formats svg)")
        title, caption = captions.get(name, (name, ""))
        page.figures.append(Figure(title, F.inline_svg(svg.read_text(), f"f{i}-"), caption))
    page.notes += [str(n) for n in rec.get("notes", [])]
    rows = []
    for inp in inputs:
        src = Path(inp["path"])
        for fname, h in inp.get("files", {}).items():
            now = src / fname
            status = "unchanged" if now.is_file() and _sha256(now) == h else ("changed since the compare" if now.is_file() else "gone")
            rows.append([str(src / fname), h, status])
        sc = src / "scenario.toml"
        if sc.is_file():
            page.scenarios.append((f"{src.name}/scenario.toml", sc.read_text(errors="replace")))
    page.provenance.append(Table("Inputs (SHA-256 when compared; status now)", ["file", "SHA-256", "status"], rows))
    page.provenance.append(_files_table(path))
    return page


# ------------------------------------------------------------------------------------- the page


def render(page: Page) -> str:
    import jinja2

    from ccscope import __version__

    env = jinja2.Environment(loader=jinja2.PackageLoader("ccscope.analysis", "templates"),
                             autoescape=jinja2.select_autoescape(["html", "j2"]), undefined=jinja2.StrictUndefined)
    generated = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return env.get_template(TEMPLATE).render(page=page, version=__version__, generated=generated,
                                             markup=jinja2.utils.markupsafe.Markup)


def build(folder: Union[str, Path]) -> Page:
    folder = Path(folder)
    kind = kind_of(folder)
    return {"run": _run_page, "sweep": _sweep_page, "compare": _compare_page}[kind](folder)


GENERATOR = '<meta name="generator" content="ccscope '


def _is_our_page(path: Path) -> bool:
    """True when `path` is a page `ccscope report` wrote (its head names ccscope as the generator)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return GENERATOR.encode() in head


# How `ccscope report` names report()'s arguments (its errors name the options, the API's the arguments).
CLI_OPTIONS = {"folder": "FOLDER", "out": "-o"}


def report(folder: Union[str, Path], out: Union[str, Path]) -> Path:
    """Write the HTML report of a results, sweep or compare folder to `out`, atomically. A bad `out` is an
    :class:`AnalysisInputError` naming it (``out PATH: ...``); ``ccscope report`` names ``-o``."""
    out = Path(out)

    def refuse(detail: str) -> AnalysisInputError:
        return AnalysisInputError.naming("out", detail, value=out, path=True)

    if out.is_dir():
        raise refuse("is a folder; give the HTML file to write")
    if out.parent.exists() and not out.parent.is_dir():
        raise refuse(f"{out.parent} is a file, not a folder")
    if not out.parent.is_dir():
        raise refuse(f"folder {out.parent} does not exist")
    if out.exists() and out.suffix.lower() not in (".html", ".htm"):
        raise refuse("exists and is not an .html file; refusing to overwrite it")
    if out.exists() and not _is_our_page(out):
        raise refuse(f"{out.name} is there and ccscope did not write it; move it away first")
    store.check_file_destination(out, "out")  # a folder that takes no file, before the work
    html = render(build(folder))
    return write_atomic(out, html)
