"""Pantheon-style comparison of every registered congestion-control scheme: regenerates
docs/reproductions/schemes.md and one throughput/delay figure per link under docs/reproductions/schemes/.

    python experiments/schemes/repro.py -o docs/reproductions/schemes.md   (or: ccscope repro schemes)

Every controller of the registry that is a scheme (see EXCLUDED for the ones that are not, and why) runs
alone, one flow at a time, on a constant-rate link and on every Mahimahi trace of the shared trace folder
(and of the package, when its traces differ), for several start-time seeds, in Pantheon's setup (one flow,
30 s; Yan et al., USENIX ATC 2018, `src/experiments/test.py`). The runs go through `ccscope.sweep` (one
sweep per link on one dask cluster) and each figure is `ccscope compare` of that link's sweep.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

import ccscope
from ccscope import api
from ccscope.analysis import compare
from ccscope.analysis.files import write_atomic
from ccscope.analysis.markdown import table as _table
from ccscope.experiment import add_runner_options, run_report
from ccscope.sweep import run_sweep
from ccscope.traces import TraceDirNotFound, find_traces, trace_mean_mbps, trace_period_s

COMMAND = "ccscope repro schemes"

# Pantheon `src/experiments/test.py`: `--runtime` defaults to 30 s and `--flows` to 1.
DURATION_S = 30.0
# One-way propagation delay each way: the CS244 setup of the trace README (`mm-delay 20`), as in the
# other reproductions, so their numbers compare. Pantheon's test harness adds no delay of its own.
ONE_WAY_DELAY_MS = 20
# Drop-tail bottleneck buffer (Pantheon's calibrated emulators use drop-tail buffers sized in packets;
# mm-link's default, an infinite queue, would let a loss-based sender's delay grow for the whole run).
QUEUE_PACKETS = 250
# Pantheon's default local link: `12mbps.trace` in both directions.
CONSTANT_MBPS = 12.0
# A trace without a partner direction in the set sends its ACKs over an uncongested link.
UNPAIRED_ACK_MBPS = 100.0
# Each seed starts the flow uniformly in [0, START_JITTER_S): Pantheon's runs differ by when they start.
START_JITTER_S = 1.0
PACKET_BYTES = 1500
GRID_KEY = "flows.0.controller"

CONTEST = "paper 001's contest controllers, tuned for the contest link (`ccscope repro datagrump`)"
# Registry entries that are not schemes a Pantheon comparison runs, with the reason. Every other
# registered controller is a scheme: a controller registered tomorrow joins the comparison unasked.
EXCLUDED: dict[str, str] = {
    "fixed": "a fixed window, paper 001's contest baseline, whose result is its one parameter",
    "aimd": CONTEST,
    "aiad": CONTEST,
    "mimd": CONTEST,
    "timely": CONTEST,
    "queue_gradient": CONTEST,
    "sctp": "SCTP-CMT's per-destination control, a multipath transport (`ccscope repro cmt`)",
    "markov": "needs a trained Markov model file as input (paper 000; `ccscope repro markov`)",
    "lied": "paper 003's rate controller, whose step and rate ceiling are set for that paper's bottleneck and "
            "self-similar cross traffic (`ccscope repro mtsc`)",
    "sac": "paper 003's rate controller over LIED, with a CondProb table learnt from cross traffic "
           "(`ccscope repro mtsc`)",
}

# The traces shipped inside the package (the CS244 contest pair).
PACKAGE_TRACES = Path(ccscope.__file__).resolve().parent / "data" / "traces"


def registered() -> list[str]:
    """The controller registry's names, in registry order, read at run time."""
    return [c["name"] for c in api.controllers()]


def scheme_names(names: Optional[Iterable[str]] = None) -> list[str]:
    """The registered controllers that are schemes: all but :data:`EXCLUDED`."""
    return [n for n in (registered() if names is None else names) if n not in EXCLUDED]


def _by_reason() -> dict[str, list[str]]:
    """EXCLUDED grouped: reason -> names, in registry order of first appearance."""
    out: dict[str, list[str]] = {}
    for n, r in EXCLUDED.items():
        out.setdefault(r, []).append(n)
    return out


def stale_exclusions(names: Optional[Iterable[str]] = None) -> list[str]:
    """Excluded names that are no longer registered (a renamed controller would otherwise slip in)."""
    have = set(registered() if names is None else names)
    return sorted(n for n in EXCLUDED if n not in have)


# ---------------------------------------------------------------------------------------------- links


@dataclass(frozen=True)
class Link:
    """One bottleneck: a trace direction (data and, if any, its ACK partner) or the constant-rate link."""

    key: str  # folder name for its sweep and figure
    label: str
    data: Optional[Path]  # None: constant rate
    ack: Optional[Path]
    source: str  # "constant", "shared", "package"

    @property
    def period_s(self) -> float:
        return math.inf if self.data is None else trace_period_s(self.data)


CONSTANT = Link("constant-12mbps", f"constant {CONSTANT_MBPS:g} Mbit/s", None, None, "constant")


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _directions(folder: Path, source: str, prefix: str = "") -> list[Link]:
    names = sorted(p.name for p in folder.iterdir() if p.suffix in (".down", ".up") and p.is_file())
    out = []
    for n in names:
        stem, kind = n.rsplit(".", 1)
        other = folder / f"{stem}.{'up' if kind == 'down' else 'down'}"
        out.append(Link(prefix + n.replace(".", "_"), prefix + n, folder / n, other if other.is_file() else None, source))
    return out


def links(trace_dir: Optional[Path], only: Optional[Sequence[str]] = None, constant: bool = True,
          package: Path = PACKAGE_TRACES) -> tuple[list[Link], list[str]]:
    """The constant-rate link, every direction of `trace_dir`, and every package trace whose bytes differ
    from the shared one of the same name; `only` keeps the links with those labels. Also returns notes."""
    out = [CONSTANT] if constant else []
    notes: list[str] = []
    shared = _directions(trace_dir, "shared") if trace_dir is not None else []
    out += shared
    by_name = {lk.data.name: lk for lk in shared if lk.data is not None}
    if package.is_dir():
        for lk in _directions(package, "package", "package:"):
            assert lk.data is not None
            twin = by_name.get(lk.data.name)
            if twin is not None and twin.data is not None and _sha(twin.data) == _sha(lk.data):
                notes.append(f"the package's `{lk.data.name}` is byte-identical to the shared trace of that name: run once")
                continue
            out.append(lk)
    if only is not None:
        labels = {lk.label: lk for lk in out}
        missing = [o for o in only if o not in labels]
        if missing:
            raise TraceDirNotFound(f"--links {missing[0]}: no such link (have: {', '.join(labels)})")
        out = [labels[o] for o in only]
    return out, notes


def duration_of(link: Link, cap_s: float) -> float:
    """`cap_s`, or one loop of a shorter trace."""
    return min(cap_s, link.period_s)


def scenario(link: Link, duration_s: float) -> dict:
    """The base scenario of one link: one flow of whatever controller the sweep sets, starting in [0, 1 s)."""
    queue = {"kind": "droptail", "packets": QUEUE_PACKETS}
    if link.data is None:
        data: dict[str, Any] = {"rate_mbps": CONSTANT_MBPS, "delay_ms": ONE_WAY_DELAY_MS, "queue": queue}
        ack: dict[str, Any] = {"rate_mbps": CONSTANT_MBPS, "delay_ms": ONE_WAY_DELAY_MS}
    else:
        data = {"trace": str(link.data), "delay_ms": ONE_WAY_DELAY_MS, "queue": queue}
        ack = ({"trace": str(link.ack), "delay_ms": ONE_WAY_DELAY_MS} if link.ack is not None
               else {"rate_mbps": UNPAIRED_ACK_MBPS, "delay_ms": ONE_WAY_DELAY_MS})
    return {
        "name": f"schemes {link.label}",
        "seed": 1,
        "duration_s": duration_s,
        "bin_ms": 1000,
        "data_link": data,
        "ack_link": ack,
        # The transport is each controller's registry default (reliable TCP for the TCPs, datagram otherwise;
        # Copa: the datagram transport's `ctcp` mode, genericCC's sender loop).
        "flows": [{"controller": "cubic", "packet_bytes": PACKET_BYTES, "start_jitter_s": START_JITTER_S}],
    }


# ----------------------------------------------------------------------------------------------- runs


@dataclass
class Cell:
    """One scheme on one link: mean and 95% CI half-width (Student's t) over the seeds, and each seed."""

    scheme: str
    seeds: int
    thr: float
    thr_ci: float
    p95: float
    p95_ci: float
    loss: float
    loss_ci: float
    util: float
    capacity: float
    thr_runs: list[float]
    p95_runs: list[float]


def cells_of(sweep: Any) -> dict[str, Cell]:
    """scheme -> :class:`Cell` from a sweep's summary and per-seed tables."""
    out = {}
    tab = sweep.table
    for row in sweep.summary.to_dict(orient="records"):
        name = str(row[GRID_KEY])
        runs = tab[tab[GRID_KEY].astype(str) == name]
        out[name] = Cell(name, int(row["seeds"]), row["throughput_mbps_mean"], row["throughput_mbps_ci95"],
                         row["one_way_delay_p95_ms_mean"], row["one_way_delay_p95_ms_ci95"],
                         row["loss_rate_mean"], row["loss_rate_ci95"], row["utilization_mean"],
                         row["capacity_mbps_mean"], [float(x) for x in runs["throughput_mbps"]],
                         [float(x) for x in runs["one_way_delay_p95_ms"]])
    return out


def run_links(lks: Sequence[Link], schemes: Sequence[str], seeds: int, duration_s: float, work: Path,
              jobs: Optional[int] = None, scheduler: Optional[str] = None, progress: bool = False,
              log: Callable[[str], None] = lambda m: None) -> dict[str, Any]:
    """One sweep per link (grid: the controller; seeds 1..`seeds`), all on one dask cluster; link key ->
    :class:`ccscope.sweep.Sweep`. Points already in `work` are loaded, not rerun."""
    from ccscope.cluster import open_client

    out = {}
    with open_client(scheduler, jobs) as client:
        for lk in lks:
            t0 = time.perf_counter()
            sc = api.Scenario.from_dict(scenario(lk, duration_of(lk, duration_s)))
            out[lk.key] = run_sweep(sc, {GRID_KEY: list(schemes)}, seeds=seeds, out=work / lk.key, client=client,
                                   progress=progress)
            s = out[lk.key]
            log(f"{lk.label}: {s.ran} runs, {s.loaded} loaded, {time.perf_counter() - t0:.1f} s")
    return out


# ---------------------------------------------------------------------------------------------- claims

LOSS_BASED = ("cubic", "newreno")
# The scheme every other is set against in the overview (Pantheon's figures all carry it).
REFERENCE = "cubic"
DELAY_BASED = ("vegas", "ledbat", "bbr")


def delay_ordering(cells: Mapping[str, Cell]) -> list[tuple[str, str, bool]]:
    """(delay-based scheme, loss-based scheme, p95 delay of the first below the second's) for each pair
    present: what a deep drop-tail buffer must show (a loss-based sender fills it, a delay-based one not)."""
    return [(d, lb, cells[d].p95 < cells[lb].p95) for d in DELAY_BASED for lb in LOSS_BASED
            if d in cells and lb in cells]


# ---------------------------------------------------------------------------------------------- output


def _pm(mean: float, half: float, digits: int, scale: float = 1.0) -> str:
    if not math.isfinite(mean):
        return "–"
    m = f"{mean * scale:.{digits}f}"
    return m if not math.isfinite(half) else f"{m} ± {half * scale:.{digits}f}"


def _link_text(lk: Link, duration_s: float) -> str:
    if lk.data is None:
        return f"constant {CONSTANT_MBPS:g} Mbit/s each way, {duration_s:g} s"
    ack = f"ACKs over `{lk.ack.name}`" if lk.ack is not None else f"ACKs over a constant {UNPAIRED_ACK_MBPS:g} Mbit/s link"
    src = "shared trace folder" if lk.source == "shared" else "package trace"
    return (f"{src}; {ack}; {duration_s:g} s of a {lk.period_s:.0f} s trace (whole-trace mean "
            f"{trace_mean_mbps(lk.data):.2f} Mbit/s)")


def schemes_report(
    out: Union[str, Path],
    traces: Optional[Union[str, Path]] = None,
    seeds: int = 5,
    duration: float = DURATION_S,
    only_links: Optional[Sequence[str]] = None,
    only_schemes: Optional[Sequence[str]] = None,
    work: Optional[Union[str, Path]] = None,
    jobs: Optional[int] = None,
    progress: bool = False,
    log: Optional[Callable[[str], None]] = None,
) -> Path:
    """Run the comparison and write the markdown report `out`, with one figure folder per link under
    ``<out stem>/`` (``ccscope compare`` of that link's sweep)."""
    if seeds < 2:
        raise ValueError(f"--seeds {seeds}: need at least 2 for a confidence interval")
    if not duration > START_JITTER_S:
        raise ValueError(f"--duration {duration:g}: must exceed the {START_JITTER_S:g} s start jitter")
    say = log or (lambda _m: None)
    reg = registered()
    stale = stale_exclusions(reg)
    if stale:
        raise ValueError(f"EXCLUDED names {', '.join(stale)}: not in the controller registry any more")
    schemes = scheme_names(reg)
    if only_schemes is not None:
        bad = [s for s in only_schemes if s not in schemes]
        if bad:
            raise ValueError(f"--schemes {bad[0]}: not a scheme (schemes: {', '.join(schemes)})")
        schemes = list(only_schemes)
    trace_dir = find_traces(traces)
    lks, link_notes = links(trace_dir, only_links)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig_dir = out.with_suffix("")
    fig_dir.mkdir(parents=True, exist_ok=True)

    t0 = time.perf_counter()
    with (tempfile.TemporaryDirectory(prefix="ccscope-schemes-") if work is None else _Keep(Path(work))) as w:
        sweeps = run_links(lks, schemes, seeds, duration, Path(w), jobs=jobs, progress=progress, log=say)
        wall = time.perf_counter() - t0
        cells = {lk.key: cells_of(sweeps[lk.key]) for lk in lks}
        # Determinism: the first point once more, in this process, against the sweep's row.
        lk0 = lks[0]
        again = api.run(api.Scenario.from_dict(scenario(lk0, duration_of(lk0, duration)))
                        .with_overrides({GRID_KEY: schemes[0], "seed": 1})).summary
        row = sweeps[lk0.key].table.iloc[0]
        deterministic = all(again[k] == row[k] or (again[k] is None and math.isnan(row[k]))
                            for k in ("throughput_mbps", "one_way_delay_p95_ms", "loss_rate", "sent", "delivered"))
        figs = {}
        for lk in lks:
            res = compare([Path(w) / lk.key], fig_dir / lk.key, label=GRID_KEY, formats=("png", "svg"))
            figs[lk.key] = res
    n_runs = sum(len(s.table) for s in sweeps.values())
    say(f"{n_runs} runs in {wall:.1f} s")

    L: list[str] = [
        "# Reproduction: every scheme on every link, Pantheon style",
        "",
        f"Generated by `{COMMAND}` (ccscope {ccscope.__version__}); do not edit by hand. The setup follows "
        "Pantheon (Yan et al., *Pantheon: the training ground for Internet congestion-control research*, "
        "USENIX ATC 2018; `StanfordSNR/pantheon` `src/experiments/test.py` and `src/analysis/plot.py`): one flow "
        "at a time, its average throughput against its 95th-percentile one-way delay, the mean over runs with "
        "the 1-sigma ellipse. Departures from Pantheon: `docs/deviations.md`; metric definitions: `docs/metrics.md`.",
        "",
        "## Setup",
        "",
        f"- Schemes ({len(schemes)}): " + ", ".join(f"`{s}`" for s in schemes) + ". They are read from the "
        "controller registry at run time: every registered controller is a scheme except the ones below, so a "
        "controller registered later joins this comparison without a change here. Each runs with its "
        "registry defaults (`ccscope controllers`) and its default transport (reliable TCP with SACK for the "
        "TCPs, BBR, BBRv3, LEDBAT and Vivace; datagrams for Verus and Sprout; genericCC's own sender loop, "
        f"datagrams with no retransmission, for Copa), {PACKET_BYTES}-byte packets.",
        "- Not schemes here: " + "; ".join(", ".join(f"`{n}`" for n in names) + f": {r}"
                                          for r, names in _by_reason().items()) + ".",
        f"- Links ({len(lks)}): a constant {CONSTANT_MBPS:g} Mbit/s link each way (Pantheon's default local "
        "link, `12mbps.trace` both ways), and every Mahimahi trace direction of the shared trace folder, its "
        "ACKs over the opposite direction of the same recording when the set has it (the ACK trace loops), "
        f"else over a constant {UNPAIRED_ACK_MBPS:g} Mbit/s link." + (" " + "; ".join(link_notes).capitalize()[:1] + "; ".join(link_notes)[1:] + "." if link_notes else ""),
        f"- Propagation delay {ONE_WAY_DELAY_MS} ms each way (40 ms base RTT); bottleneck queue drop-tail, "
        f"{QUEUE_PACKETS} packets, on the data direction.",
        f"- Duration {duration:g} s per run" + (" (Pantheon's default `--runtime`)" if duration == DURATION_S else
        f" (reduced from Pantheon's default `--runtime` of {DURATION_S:g} s)") + ", or one loop of a shorter trace.",
        f"- Seeds 1..{seeds}: each draws the flow's start uniformly in [0, {START_JITTER_S:g} s) "
        "(`start_jitter_s`), so the flow meets the trace at a different phase; nothing else is random.",
        f"- {n_runs} runs through `ccscope.sweep` (one sweep per link on one dask cluster) in {wall:.0f} s "
        f"wall. Determinism: the first run repeated in the report's process is "
        f"{'bit-identical' if deterministic else '**not** identical'} to the sweep's.",
        "- Each figure is `ccscope compare` of the link's sweep (`--label flows.0.controller`): the delay axis "
        "is logarithmic and inverted, so better is up and to the right.",
        "",
        "Regenerate (about as long as above on two cores):",
        "",
        "    ccscope repro schemes -o docs/reproductions/schemes.md"
        + ("" if seeds == 5 and duration == DURATION_S else f" --seeds {seeds} --duration {duration:g}"),
        "",
    ]

    # ---------------------------------------------------------------------------- the orderings
    c0 = cells.get(CONSTANT.key)
    if c0 is not None:
        pairs = delay_ordering(c0)
        L += ["## Delay-based against loss-based on the constant-rate link", "",
              f"Behind a {QUEUE_PACKETS}-packet buffer ({QUEUE_PACKETS / (CONSTANT_MBPS * 1e6 / 8 / PACKET_BYTES * 2 * ONE_WAY_DELAY_MS / 1000):.1f} "
              "bandwidth-delay products) a loss-based sender fills the buffer before it backs off; a delay-based "
              "one (Vegas, LEDBAT's 100 ms target, BBR's model of the path) keeps the queue short.", ""]
        L += _table(["delay-based", "loss-based", "p95 delay (ms)", "lower?"],
                    [(d, lb, f"{c0[d].p95:.0f} vs {c0[lb].p95:.0f}", "yes" if ok else "**no**") for d, lb, ok in pairs],
                    [False, False, True, False])
        L += [""]

    # ---------------------------------------------------------------------------- overview tables
    L += ["## Overview", "", "Mean over seeds of throughput (Mbit/s) / p95 one-way delay (ms), per link:", ""]
    rows = []
    for s in schemes:
        rows.append([f"`{s}`"] + [f"{cells[lk.key][s].thr:.2f} / {cells[lk.key][s].p95:.0f}"
                                  if math.isfinite(cells[lk.key][s].p95) else f"{cells[lk.key][s].thr:.2f} / –"
                                  for lk in lks])
    L += _table(["scheme"] + [lk.label for lk in lks], rows, [False] + [True] * len(lks))
    L += [""]
    traced = [lk for lk in lks if lk.data is not None]
    if REFERENCE in schemes and traced:
        L += [f"Against `{REFERENCE}` on the {len(traced)} trace links: on how many the scheme's mean p95 delay is lower, "
              "and its throughput as a share of Cubic's (median and range over the links).", ""]
        rows = []
        for s in schemes:
            if s == REFERENCE:
                continue
            lower = sum(cells[lk.key][s].p95 < cells[lk.key][REFERENCE].p95 for lk in traced)
            shares = sorted(cells[lk.key][s].thr / cells[lk.key][REFERENCE].thr for lk in traced
                            if cells[lk.key][REFERENCE].thr > 0)
            rows.append((f"`{s}`", f"{lower} of {len(traced)}",
                         f"{statistics.median(shares):.0%}" if shares else "–",
                         f"{shares[0]:.0%}-{shares[-1]:.0%}" if shares else "–"))
        L += _table(["scheme", "p95 below Cubic's", "throughput / Cubic's (median)", "range"], rows,
                    [False, True, True, True])
        L += [""]

    # ---------------------------------------------------------------------------- per link
    L += ["## Results per link", "",
          f"Mean ± 95% confidence half-width (Student's t over the {seeds} seeds). Throughput counts every bit that "
          "left the bottleneck (retransmissions included), as Pantheon's tunnel logs count departures; loss rate = "
          "dropped / sent at the bottleneck.", ""]
    for lk in lks:
        dur = duration_of(lk, duration)
        cap = next(iter(cells[lk.key].values())).capacity
        L += [f"### {lk.label}", "", f"{_link_text(lk, dur)}; capacity over the run {cap:.2f} Mbit/s.", ""]
        rows = []
        for s in schemes:
            c = cells[lk.key][s]
            rows.append((f"`{s}`", _pm(c.thr, c.thr_ci, 2), _pm(c.p95, c.p95_ci, 0), _pm(c.loss, c.loss_ci, 2, 100.0),
                         f"{c.util:.0%}"))
        L += _table(["scheme", "throughput (Mbit/s)", "p95 one-way delay (ms)", "loss (%)", "utilization"],
                    rows, [False, True, True, True, True])
        res = figs[lk.key]
        png = next(f for f in res.files if f.suffix == ".png")
        rel = png.relative_to(fig_dir.parent)
        L += ["", f"![{lk.label}: throughput against p95 one-way delay]({rel.as_posix()})", ""]
        # compare's note that a sweep has no per-run time series says nothing about this link: left out.
        notes = [n for n in res.notes if not n.startswith("sweeps keep")]
        if notes:
            L += [f"Notes: {'; '.join(notes)}.", ""]
    write_atomic(out, "\n".join(L) + "\n")
    return out


class _Keep:
    """A work folder that stays (the `--work` option): a context manager like TemporaryDirectory."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> str:
        self.path.mkdir(parents=True, exist_ok=True)
        return str(self.path)

    def __exit__(self, *exc: Any) -> None:
        return None


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", type=Path, default=Path("docs/reproductions/schemes.md"), help="Markdown report to write")
    ap.add_argument("--traces", type=Path, default=None,
                    help="Mahimahi trace folder (default: $CCSCOPE_TRACE_PATH, then ../shared/traces)")
    ap.add_argument("--seeds", type=int, default=5, help="Start-time seeds per scheme and link: runs seeds 1..N")
    ap.add_argument("--duration", type=float, default=DURATION_S, help="Seconds per run (a shorter trace: one loop)")
    ap.add_argument("--links", default=None, help="Comma-separated link labels to run (default: all)")
    ap.add_argument("--schemes", default=None, help="Comma-separated schemes to run (default: every registered scheme)")
    ap.add_argument("--work", type=Path, default=None, help="Keep the sweeps here (reruns load finished points)")
    add_runner_options(ap)
    args = ap.parse_args(argv)
    split = (lambda s: [x.strip() for x in s.split(",") if x.strip()] if s else None)
    return run_report(lambda: schemes_report(args.out, traces=args.traces, seeds=args.seeds, duration=args.duration,
                                             only_links=split(args.links), only_schemes=split(args.schemes),
                                             work=args.work, jobs=args.jobs, progress=not args.quiet,
                                             log=lambda m: print(m, file=sys.stderr)),
                      args.out, "schemes")


if __name__ == "__main__":
    sys.exit(main())
