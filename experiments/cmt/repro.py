"""Paper 002 reproduction: SCTP-CMT simulation against the Markov and renewal models, and static against
dynamic congestion-window management. Writes docs/reproductions/cmt.md, its figures and the data behind
them (cmt/*.csv), from fresh runs.

    python experiments/cmt/repro.py -o docs/reproductions/cmt.md        (or: ccscope repro cmt)
    ccscope repro cmt --figs 5 6 7 8     (rerun Figs. 5-8 only; the rest of the report from its cmt/*.csv)

Every number in the report is computed here; the paper's numbers are quoted with their section. The
paper prints no curve data, so its figures are judged on shape and on the numbers its text quotes
(specs/002-cmt.md §4).
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path as FsPath
from typing import Callable, Iterable, Optional, Sequence

HERE = FsPath(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from ccscope import api, store  # noqa: E402
from ccscope.experiment import add_runner_options, check_data_destination, run_report, save_figure, write_csv  # noqa: E402
from ccscope.runner import default_jobs, run_all  # noqa: E402
from ccscope.models.cmt import Destination, allocate, markov_throughput, renewal_throughput  # noqa: E402
from ccscope.models.cmt import mathis_throughput  # noqa: E402
from cmt_scenarios import PACKET_BYTES, Path, association, duration_for  # noqa: E402

COMMAND = "ccscope repro cmt"

# §6.1.1 focus point: p = 0.1%, b = 21 Mbit/s, d = 40 ms, RBUF = 128 KB (KB = 1000 B, A11).
FOCUS = Path(b_mbps=21.0, d_ms=40.0, p=1e-3)
FOCUS_RBUF = 128_000
P_GRID = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1)
B_GRID = (1.0, 2.0, 5.0, 10.0, 21.0, 30.0, 50.0)
D_GRID = (10.0, 20.0, 40.0, 60.0, 80.0, 100.0)
R_GRID = (16_000, 32_000, 64_000, 128_000, 176_000, 256_000, 512_000, 1_000_000)
# §6.2 two paths (specs/002-cmt.md §4 table): path 1 at 21 Mbit/s 40 ms, path 2 at p2 = 1e-4.
P1_GRID = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1)
FIG9_B2 = (5.0, 10.0, 15.0, 20.0)
FIG10_R = (64_000, 128_000, 192_000, 256_000)
FIG11_P2 = (1e-4, 1e-3, 1e-2)
FIG12_D2 = (10.0, 40.0, 100.0, 200.0)
# Figs. 13-14: r 128 KB, b2 10, d1 25 ms, d2 50 ms, p1 = p2 = 1e-3 (A14); b1 varied; steps k.
FIG13_B1 = (5.0, 10.0, 20.0, 30.0, 40.0, 50.0)
FIG13_K = (1, 2, 5, 10)
SOLVE_RBUF = (16_000, 64_000, 128_000, 176_000, 256_000, 512_000, 1_000_000, 2_000_000, 4_000_000)
# The figures `--figs` can select, and the runs behind each group (Figs. 13 and 14 come from the same runs).
FIGS = ("5", "6", "7", "8", "9", "10", "11", "12", "13", "14")
SINGLE_FIGS, GAIN_FIGS, STEP_FIGS = ("5", "6", "7", "8"), ("9", "10", "11", "12"), ("13", "14")
# Columns of the report's CSVs that are text; every other column is read back as a number.
TEXT_COLUMNS = {"fig", "curve", "loss", "solver"}
# The columns each CSV read back must have (what the report and the model refresh read; "no FR" may be absent).
NEEDED_COLUMNS = {
    "single_path": ("fig", "x", "b_mbps", "d_ms", "p", "rbuf_bytes", "sim_mbps", "sim_ci95", "goodput_mbps", "seeds",
                    "min_loss_events", "sim_s", "markov_mbps", "markov_residual", "renewal_mbps", "mathis_mbps",
                    "markov_err", "renewal_err"),
    "gains": ("fig", "curve", "p1", "rbuf_bytes", "limit1", "limit2", "static_mbps", "dynamic_mbps",
              "predicted_static_mbps", "gain", "gain_ci95", "seeds", "min_loss_events"),
    "steps": ("b1_mbps", "k", "limit1", "limit2", "predicted_mbps", "sim_mbps", "sim_ci95", "solve_s", "search_s"),
}
# Paper 002 §6.1.2 and §7: the quoted accuracies and gain.
PAPER_MARKOV_MAX_ERR = 0.011
PAPER_RENEWAL_MAX_ERR = 0.147
PAPER_MAX_GAIN = 0.12


@dataclass(frozen=True)
class Settings:
    seeds: int = 5
    loss_events: int = 2000
    cap_s: float = 30_000.0
    jobs: int = default_jobs()
    two_path_seeds: int = 5
    two_path_loss_events: int = 2000
    sim_fig13: bool = True
    quiet: bool = True  # no progress bar


# ---------------------------------------------------------------- simulation


@dataclass(frozen=True)
class Run:
    """One simulation: its scenario and seed, and what came out."""

    text: str
    seed: int


def _simulate(run: Run) -> dict:
    res = api.run(api.Scenario(run.text, None), seed=run.seed)
    flow = res.flow_records()[0]
    secs = float(res.summary["duration_s"])
    return {
        "goodput_mbps": float(flow["goodput_mbps"]),
        "first_tx_mbps": float(flow["first_tx_mbps"]),
        "loss_events": int(flow["loss_events"]),
        "fast_retransmits": int(flow["fast_retransmits"]),
        "fast_retransmitted_tsns": int(flow["fast_retransmitted_tsns"]),
        "timeouts": int(flow["timeouts"]),
        "duration_s": secs,
        # Window management diagnostics (two-path runs): time with sum(CWND) at RBUF and time held by rwnd.
        "full_s": float(flow.get("cwnd_sum_full_ms", 0)) / 1e3,
        "rwnd_blocked_s": float(flow.get("rwnd_blocked_ms", 0)) / 1e3,
    }


def simulate_all(runs: Sequence[Run], st: Settings) -> list[dict]:
    """Every run on the package's shared runner, in `runs`' order."""
    return run_all(_simulate, runs, st.jobs, "cmt runs", st.quiet)


def ci95(xs: Sequence[float]) -> tuple[float, float]:
    """Mean and half-width of the 95% Student-t interval (0 for one value)."""
    from scipy import stats

    m = statistics.fmean(xs)
    if len(xs) < 2:
        return m, 0.0
    return m, float(stats.t.ppf(0.975, len(xs) - 1) * statistics.stdev(xs) / math.sqrt(len(xs)))


# ---------------------------------------------------------------- Figs. 5-8: single path


@dataclass
class ModelPoint:
    fig: str
    x: float
    path: Path
    rbuf: int
    sim: list = field(default_factory=list)  # per-seed dicts
    markov_mbps: float = float("nan")
    markov_residual: float = float("nan")
    renewal_mbps: float = float("nan")
    mathis_mbps: float = float("nan")

    @property
    def sim_mbps(self) -> tuple[float, float]:
        """What eq. 19 counts: packets received on their first transmission, per second (a round's x
        packets are new data; a lost packet's retransmission is in no round, §4.3.1)."""
        return ci95([s["first_tx_mbps"] for s in self.sim])

    @property
    def goodput_mbps(self) -> tuple[float, float]:
        """Distinct data delivered to the application, per second (retransmissions included)."""
        return ci95([s["goodput_mbps"] for s in self.sim])

    @property
    def no_fast_rtx_mbps(self) -> tuple[float, float]:
        """Goodput less the fast-retransmitted TSNs: what eq. 20 counts (first transmissions and the packets a
        timeout resends, EB and the slow-start rounds after it; a fast retransmission is in no round). The
        round-correlated dropper spares retransmissions (A12), so every fast-retransmitted TSN arrives once."""
        return ci95([s["goodput_mbps"] - s["fast_retransmitted_tsns"] * PACKET_BYTES * 8 / s["duration_s"] / 1e6
                     for s in self.sim])

    @property
    def loss_events(self) -> int:
        return min(s["loss_events"] for s in self.sim)


def single_path_points() -> list[ModelPoint]:
    pts = [ModelPoint("5", p, Path(FOCUS.b_mbps, FOCUS.d_ms, p), FOCUS_RBUF) for p in P_GRID]
    pts += [ModelPoint("6", b, Path(b, FOCUS.d_ms, FOCUS.p), FOCUS_RBUF) for b in B_GRID]
    pts += [ModelPoint("7", d, Path(FOCUS.b_mbps, d, FOCUS.p), FOCUS_RBUF) for d in D_GRID]
    pts += [ModelPoint("8", r / 1000, FOCUS, r) for r in R_GRID]
    return pts


def _single_runs(pt: ModelPoint, st: Settings, scale: float = 1.0) -> list[Run]:
    secs = duration_for([pt.path], pt.rbuf, st.loss_events, st.cap_s) * scale
    text = association([pt.path], pt.rbuf, min(st.cap_s, secs), loss="round_correlated")
    return [Run(text, seed) for seed in range(1, st.seeds + 1)]


def run_single_path(pts: list[ModelPoint], st: Settings, log: Callable[[str], None]) -> None:
    """Simulate each point until every seed saw `loss_events` loss events (or hit the cap), then the models."""
    scale = {id(pt): 1.0 for pt in pts}
    todo = list(pts)
    while todo:
        runs = [(pt, r) for pt in todo for r in _single_runs(pt, st, scale[id(pt)])]
        out = simulate_all([r for _, r in runs], st)
        for pt in todo:
            pt.sim = []
        for (pt, _), o in zip(runs, out):
            pt.sim.append(o)
        again = []
        for pt in todo:
            short = pt.loss_events < st.loss_events and max(s["duration_s"] for s in pt.sim) < st.cap_s * 0.999
            if short:
                scale[id(pt)] *= 1.2 * st.loss_events / max(1, pt.loss_events)
                again.append(pt)
        log(f"single path: {len(todo) - len(again)} points done, {len(again)} need longer runs")
        todo = again
    for pt in pts:
        set_models(pt)


def set_models(pt: ModelPoint) -> None:
    """The Markov, renewal and Mathis throughputs of one point (correlated loss, as the runs)."""
    p = pt.path
    m = markov_throughput(p.p, p.b_mbps, p.d_ms, pt.rbuf, loss="correlated")
    pt.markov_mbps, pt.markov_residual = m.throughput_mbps, m.residual
    pt.renewal_mbps = renewal_throughput(p.p, p.b_mbps, p.d_ms, pt.rbuf, loss="correlated").throughput_mbps
    # Mathis with the path's propagation RTT (eq. 8 with an empty queue): the loss-limited reference.
    pt.mathis_mbps = mathis_throughput(p.p, p.d_ms / 1e3 + PACKET_BYTES * 8 / (p.b_mbps * 1e6))


def relative_error(model: float, sim: float) -> float:
    return abs(model - sim) / sim


# ---------------------------------------------------------------- Figs. 9-12: static over dynamic


@dataclass
class GainPoint:
    fig: str
    curve: str
    p1: float
    paths: tuple
    rbuf: int
    limits: tuple = ()
    predicted_static_mbps: float = float("nan")
    static: list = field(default_factory=list)
    dynamic: list = field(default_factory=list)

    @property
    def gains(self) -> list[float]:
        # Paired by seed: both schemes see the same loss draws (issue 10).
        return [s["goodput_mbps"] / d["goodput_mbps"] - 1 for s, d in zip(self.static, self.dynamic)]


def gain_points() -> list[GainPoint]:
    b1, d1 = 21.0, 40.0
    pts = []
    for b2 in FIG9_B2:
        pts += [GainPoint("9", f"b2 = {b2:g} Mbit/s", p1, (Path(b1, d1, p1), Path(b2, 40.0, 1e-4)), 128_000) for p1 in P1_GRID]
    for r in FIG10_R:
        pts += [GainPoint("10", f"r = {r // 1000} KB", p1, (Path(b1, d1, p1), Path(20.0, 40.0, 1e-4)), r) for p1 in P1_GRID]
    for p2 in FIG11_P2:
        pts += [GainPoint("11", f"p2 = {p2:g}", p1, (Path(b1, d1, p1), Path(20.0, 40.0, p2)), 128_000) for p1 in P1_GRID]
    for d2 in FIG12_D2:
        pts += [GainPoint("12", f"d2 = {d2:g} ms", p1, (Path(b1, d1, p1), Path(20.0, d2, 1e-4)), 128_000) for p1 in P1_GRID]
    return pts


def dests(paths: Iterable[Path]) -> list[Destination]:
    return [Destination(p.b_mbps, p.d_ms, p.p) for p in paths]


def _gain_runs(pt: GainPoint, st: Settings, secs: float, seeds: Sequence[int]) -> list[tuple]:
    static = association(pt.paths, pt.rbuf, secs, loss="bernoulli", management="static", limits=pt.limits)
    dynamic = association(pt.paths, pt.rbuf, secs, loss="bernoulli", management="dynamic")
    return [(scheme, Run(text, seed)) for seed in seeds for scheme, text in (("static", static), ("dynamic", dynamic))]


# A pilot run per scheme is sized for this many loss events (a guess from an upper bound on the rate); the
# point's runs are sized from its measured rate once it saw at least half as many.
PILOT_LOSS_EVENTS = 200
# Head-room over the pilot's rate: seeds differ, and a run short of the target is run again, longer.
PILOT_MARGIN = 1.25


def sized_seconds(loss_events: int, seconds: float, target: int, margin: float, cap_s: float) -> float:
    """Seconds for `target` loss events at the rate a run of `seconds` showed (`loss_events` of them), with
    `margin` head-room, at least 60 s (duration_for's floor) and capped; a run that saw none is asked for the cap."""
    if loss_events <= 0:
        return cap_s
    return min(cap_s, max(60.0, margin * target * seconds / loss_events))


def _run_sized(pts: list[GainPoint], st: Settings, secs: dict, seeds: Sequence[int], done: dict, what: str,
               log: Callable[[str], None]) -> None:
    """Run both schemes on `seeds` at each point for `secs[id(pt)]` simulated seconds into pt.static/dynamic;
    `done` holds the runs already made (a pilot at the cap is its seed's run)."""
    runs = [(pt, scheme, r) for pt in pts for scheme, r in _gain_runs(pt, st, secs[id(pt)], seeds)]
    # Figures share curves (Fig. 9 b2 = 20 is Fig. 10 r = 128 KB, ...): each distinct run once.
    length = {r: secs[id(pt)] for pt, _, r in runs}
    distinct = [r for r in dict.fromkeys(r for *_, r in runs) if r not in done]
    log(f"two paths, {what}: {len(distinct)} runs, {sum(length[r] for r in distinct):.0f} simulated s")
    done.update(zip(distinct, simulate_all(distinct, st)))
    for pt in pts:
        pt.static, pt.dynamic = [], []
    for pt, scheme, r in runs:
        getattr(pt, scheme).append(done[r])


def run_gains(pts: list[GainPoint], st: Settings, log: Callable[[str], None]) -> None:
    """Simulate both schemes at each point until every run saw `two_path_loss_events` loss events (or hit
    the cap), as Figs. 5-8 are (specs/002-cmt.md §4: each point long enough for >= 2,000 loss events).

    A pilot on the first seed measures each point's loss-event rate (lengthened until it sees at least
    half of PILOT_LOSS_EVENTS), the runs are sized from it, and only points that still fall short run again."""
    cache: dict = {}
    for pt in pts:
        key = (pt.paths, pt.rbuf)
        if key not in cache:
            cache[key] = allocate(dests(pt.paths), pt.rbuf, solver="dp")
        a = cache[key]
        pt.limits = tuple(int(c) for c in a.limits_packets)
        pt.predicted_static_mbps = float(a.total_mbps)
    target = st.two_path_loss_events
    pilot = min(PILOT_LOSS_EVENTS, target)
    secs = {id(pt): duration_for(pt.paths, pt.rbuf, pilot, st.cap_s) for pt in pts}
    done: dict = {}
    todo = list(pts)
    while todo:
        _run_sized(todo, st, secs, (1,), done, "pilot", log)
        again = []
        for pt in todo:
            got = min(s["loss_events"] for s in pt.static + pt.dynamic)
            if 2 * got >= pilot or secs[id(pt)] >= st.cap_s:
                secs[id(pt)] = sized_seconds(got, secs[id(pt)], target, PILOT_MARGIN, st.cap_s)
            else:
                # Too few to size from: lengthen the pilot (tenfold when it saw none).
                secs[id(pt)] = (min(st.cap_s, 10 * secs[id(pt)]) if got == 0 else
                                sized_seconds(got, secs[id(pt)], pilot, PILOT_MARGIN, st.cap_s))
                again.append(pt)
        todo = again
    seeds = range(1, st.two_path_seeds + 1)
    todo = list(pts)
    while todo:
        _run_sized(todo, st, secs, seeds, done, "runs", log)
        again = []
        for pt in todo:
            sims = pt.static + pt.dynamic
            got = min(s["loss_events"] for s in sims)
            # Judged on the length asked (not the one reported), so a point at the cap is never asked again.
            if got < target and secs[id(pt)] < st.cap_s:
                secs[id(pt)] = sized_seconds(got, secs[id(pt)], target, 1.2, st.cap_s)
                again.append(pt)
        log(f"two paths: {len(todo) - len(again)} points done, {len(again)} need longer runs")
        todo = again


# ---------------------------------------------------------------- Figs. 13-14: the heuristic's step k


@dataclass
class StepPoint:
    b1: float
    k: int
    limits: tuple
    predicted_mbps: float
    solve_s: float
    search_s: float
    sim: list = field(default_factory=list)


def run_steps(st: Settings, log: Callable[[str], None]) -> list[StepPoint]:
    pts = []
    for b1 in FIG13_B1:
        paths = (Path(b1, 25.0, 1e-3), Path(10.0, 50.0, 1e-3))
        for k in FIG13_K:
            a = allocate(dests(paths), 128_000, solver="heuristic", k=k)
            pts.append(StepPoint(b1, k, tuple(int(c) for c in a.limits_packets), float(a.total_mbps),
                                 float(a.objective_time_s + a.solve_time_s), float(a.solve_time_s)))
    if st.sim_fig13:
        runs = []
        for pt in pts:
            paths = (Path(pt.b1, 25.0, 1e-3), Path(10.0, 50.0, 1e-3))
            secs = duration_for(paths, 128_000, st.two_path_loss_events, st.cap_s)
            text = association(paths, 128_000, secs, loss="bernoulli", management="static", limits=pt.limits)
            runs += [(pt, Run(text, seed)) for seed in range(1, st.two_path_seeds + 1)]
        log(f"Fig. 13: {len(runs)} runs")
        for (pt, _), o in zip(runs, simulate_all([r for _, r in runs], st)):
            pt.sim.append(o)
    return pts


# ---------------------------------------------------------------- solve times


def solve_table() -> list[dict]:
    rows = []
    for r in SOLVE_RBUF:
        for loss in ("correlated", "independent"):
            t0 = time.perf_counter()
            m = markov_throughput(FOCUS.p, FOCUS.b_mbps, FOCUS.d_ms, r, loss=loss)
            wall = time.perf_counter() - t0
            rows.append({"rbuf_bytes": r, "loss": loss, "W": m.window_packets, "states": m.states,
                         "nonzeros": m.nonzeros, "iterations": m.iterations, "residual": m.residual,
                         "solver": m.solver, "solve_s": m.solve_time_s, "wall_s": wall,
                         "throughput_mbps": m.throughput_mbps})
    return rows


# ---------------------------------------------------------------- report


def _write_csv(path: FsPath, rows: list[dict]) -> None:
    # Every column any row has (rows read back from an older CSV may lack a newer one: written "nan").
    write_csv(path, rows, restval="nan")


def _savefig(fig, path: FsPath) -> None:
    save_figure(fig, path, dpi=110)


# The files the report writes in its cmt/ folder (checked before any run: none may be a file ccscope did not write).
DATA_FILES = (tuple(f"{n}.csv" for n in ("single_path", "gains", "steps", "solve"))
              + tuple(f"fig{f}.png" for f in SINGLE_FIGS + GAIN_FIGS) + ("fig13_14.png",))


def _md_table(header: Sequence[str], rows: Iterable[Sequence]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def single_path_rows(pts: list[ModelPoint]) -> list[dict]:
    rows = []
    for pt in pts:
        m, h = pt.sim_mbps
        rows.append({"fig": pt.fig, "x": pt.x, "b_mbps": pt.path.b_mbps, "d_ms": pt.path.d_ms, "p": pt.path.p,
                     "rbuf_bytes": pt.rbuf, "sim_mbps": m, "sim_ci95": h, "goodput_mbps": pt.goodput_mbps[0],
                     "no_fast_rtx_mbps": pt.no_fast_rtx_mbps[0],
                     "seeds": len(pt.sim),
                     "min_loss_events": pt.loss_events, "sim_s": max(s["duration_s"] for s in pt.sim),
                     "markov_mbps": pt.markov_mbps, "markov_residual": pt.markov_residual,
                     "renewal_mbps": pt.renewal_mbps, "mathis_mbps": pt.mathis_mbps,
                     "markov_err": relative_error(pt.markov_mbps, m), "renewal_err": relative_error(pt.renewal_mbps, m)})
    return rows


def gain_rows(pts: list[GainPoint]) -> list[dict]:
    rows = []
    for pt in pts:
        g, h = ci95(pt.gains)
        rows.append({"fig": pt.fig, "curve": pt.curve, "p1": pt.p1, "rbuf_bytes": pt.rbuf,
                     "limit1": pt.limits[0], "limit2": pt.limits[1],
                     "static_mbps": statistics.fmean(s["goodput_mbps"] for s in pt.static),
                     "dynamic_mbps": statistics.fmean(d["goodput_mbps"] for d in pt.dynamic),
                     "predicted_static_mbps": pt.predicted_static_mbps, "gain": g, "gain_ci95": h,
                     "seeds": len(pt.gains), "min_loss_events": min(s["loss_events"] for s in pt.static + pt.dynamic),
                     "sim_s": max(s["duration_s"] for s in pt.static + pt.dynamic),
                     **{f"{name}_{what}": statistics.fmean(s[what + "_s"] / s["duration_s"] for s in runs)
                        for name, runs in (("static", pt.static), ("dynamic", pt.dynamic))
                        for what in ("full", "rwnd_blocked")}})
    return rows


def step_rows(pts: list[StepPoint]) -> list[dict]:
    rows = []
    for pt in pts:
        sim = ci95([s["goodput_mbps"] for s in pt.sim]) if pt.sim else (float("nan"), float("nan"))
        rows.append({"b1_mbps": pt.b1, "k": pt.k, "limit1": pt.limits[0], "limit2": pt.limits[1],
                     "predicted_mbps": pt.predicted_mbps, "sim_mbps": sim[0], "sim_ci95": sim[1],
                     "solve_s": pt.solve_s, "search_s": pt.search_s})
    return rows


XLABEL = {"5": ("p", "log"), "6": ("b (Mbit/s)", "linear"), "7": ("d (ms)", "linear"), "8": ("RBUF (KB)", "log")}


def plot_single(rows: list[dict], outdir: FsPath) -> list[str]:
    names = []
    for fig_no, (label, scale) in XLABEL.items():
        rs = [r for r in rows if r["fig"] == fig_no]
        fig, ax = plt.subplots(figsize=(5.2, 3.6))
        xs = [r["x"] for r in rs]
        ax.errorbar(xs, [r["sim_mbps"] for r in rs], yerr=[r["sim_ci95"] for r in rs], fmt="o", color="k",
                    label="simulation (95% CI)", capsize=3)
        ax.plot(xs, [r["markov_mbps"] for r in rs], "-", label="Markov chain")
        ax.plot(xs, [r["renewal_mbps"] for r in rs], "--", label="renewal")
        ax.set_xscale(scale)
        if fig_no == "5":
            ax.set_yscale("log")
        names.append(_finish(fig, ax, fig_no, label, "throughput (Mbit/s)", outdir))
    return names


def _finish(fig, ax, fig_no: str, xlabel: str, ylabel: str, outdir: FsPath) -> str:
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(f"Fig. {fig_no}")
    ax.legend(fontsize=8)
    name = f"cmt/fig{fig_no}.png"
    _savefig(fig, outdir / name)
    return name


def plot_gains(rows: list[dict], outdir: FsPath) -> list[str]:
    names = []
    for fig_no in ("9", "10", "11", "12"):
        rs = [r for r in rows if r["fig"] == fig_no]
        fig, ax = plt.subplots(figsize=(5.2, 3.6))
        for curve in dict.fromkeys(r["curve"] for r in rs):
            cs = [r for r in rs if r["curve"] == curve]
            ax.errorbar([r["p1"] for r in cs], [100 * r["gain"] for r in cs], yerr=[100 * r["gain_ci95"] for r in cs],
                        marker="o", capsize=3, label=curve)
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xscale("log")
        names.append(_finish(fig, ax, fig_no, "p1", "static over dynamic (%)", outdir))
    return names


def plot_steps(rows: list[dict], outdir: FsPath) -> list[str]:
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.6))
    for k in FIG13_K:
        rs = [r for r in rows if r["k"] == k]
        a1.plot([r["b1_mbps"] for r in rs], [r["predicted_mbps"] for r in rs], marker="o", label=f"k = {k} (model)")
        if not math.isnan(rs[0]["sim_mbps"]):
            a1.errorbar([r["b1_mbps"] for r in rs], [r["sim_mbps"] for r in rs], yerr=[r["sim_ci95"] for r in rs],
                        fmt="x", capsize=2, label=f"k = {k} (simulation)")
        a2.plot([r["b1_mbps"] for r in rs], [1e3 * r["search_s"] for r in rs], marker="o", label=f"k = {k}")
    a1.set_xlabel("b1 (Mbit/s)")
    a1.set_ylabel("throughput (Mbit/s)")
    a1.set_title("Fig. 13")
    a1.legend(fontsize=7)
    a2.set_xlabel("b1 (Mbit/s)")
    a2.set_ylabel("search time (ms)")
    a2.set_yscale("log")
    a2.set_title("Fig. 14")
    a2.legend(fontsize=7)
    _savefig(fig, outdir / "cmt/fig13_14.png")
    return ["cmt/fig13_14.png"]


def _share_pair(row: dict, what: str) -> str:
    """"a% / b%" for the static and dynamic runs' share of time in state `what`; "-" if not recorded."""
    vals = [row.get(f"{scheme}_{what}", float("nan")) for scheme in ("static", "dynamic")]
    if any(not isinstance(v, float) or math.isnan(v) for v in vals):
        return "-"
    return " / ".join(f"{100 * v:.0f}%" for v in vals)


def _short_rows(gains: list[dict], st: Settings) -> tuple[list[dict], str]:
    """The Figs. 9-12 rows short of the asked-for loss events, and why: run to the cap, or read back from runs
    made before the two-path runner lengthened its runs (docs/deviations.md, issue 10)."""
    short = [r for r in gains if int(r["min_loss_events"]) < st.two_path_loss_events]
    capped = [r for r in short if float(r.get("sim_s", 0.0)) >= st.cap_s * 0.999]
    why = [f"{len(capped)} ran to the {st.cap_s:g} s cap"] if capped else []
    if len(short) > len(capped):
        why.append(f"{len(short) - len(capped)} were read back from runs made before the two-path runner "
                   "lengthened its runs (docs/reproductions/cmt_wm_subset.md reran a subset at full size)")
    return short, "; ".join(why)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def report(single: list[dict], gains: list[dict], steps: list[dict], solves: list[dict], figs: list[str],
           st: Settings, wall_s: float, ran: Sequence[str] = FIGS) -> str:
    merr = [r["markov_err"] for r in single]
    rerr = [r["renewal_err"] for r in single]
    if tuple(ran) == FIGS:
        made = [f"Generated by `{COMMAND}` (experiments/cmt/repro.py) in {wall_s / 60:.1f} min; the data behind every"]
    elif not ran:
        made = [f"Written by `{COMMAND} --report-only` from the `cmt/*.csv` of the runs that made each figure, the",
                "Figs. 5-8 models recomputed by this checkout (Figs. 9-14's predictions and window limits are those",
                "runs'; the settings below are this command's). The data behind every"]
    else:
        kept = [f for f in FIGS if f not in ran]
        made = [f"Figs. {', '.join(ran)} (and the solve-time table) generated by `{COMMAND} --figs {' '.join(ran)}`",
                f"(experiments/cmt/repro.py) in {wall_s / 60:.1f} min; Figs. {', '.join(kept)} read back from the",
                "`cmt/*.csv` of the earlier run that made them (the settings below are this run's). The data behind every"]
    short, why = _short_rows(gains, st)
    low = min((int(r["min_loss_events"]) for r in gains), default=0)
    nofr = [abs(r["markov_mbps"] - r["no_fast_rtx_mbps"]) / r["no_fast_rtx_mbps"] for r in single
            if not math.isnan(r.get("no_fast_rtx_mbps", math.nan))] or [math.nan]
    out = [
        "# Paper 002: CMT-SCTP modelling and congestion-window management",
        "",
        *made,
        "figure is in `cmt/*.csv`. The paper prints no curve data, so the figures are judged on shape and on",
        "the numbers its text quotes (specs/002-cmt.md §4). Readings: docs/deviations.md (paper 002).",
        "",
        "## Setup",
        "",
        f"- Simulation: one bulk SCTP-CMT association (`transport = \"cmt\"`, model mode: SACK per packet,",
        "  missing count 4, RTO = 3 SRTT, retransmit to the same destination), each path a forward bottleneck",
        "  at b with half of d and the path's random loss, and a fast lossless reverse path with the other half.",
        f"- Figs. 5-8: round-correlated loss (eq. 7, A12), {st.seeds} seeds per point, each run long enough",
        f"  for {st.loss_events} loss events (capped at {st.cap_s:g} s simulated); Markov and renewal with",
        "  correlated loss.",
        f"- Figs. 9-12: Bernoulli loss (eq. 6, §6.2), {st.two_path_seeds} seeds, both schemes on the same seeds,",
        f"  runs sized for {st.two_path_loss_events} loss events" + (
            f" but {len(short)} of {len(gains)} rows below saw fewer (down to {low}; see Figs. 9-12);" if short else ";"),
        "  static limits from the exact DP over the Markov model with independent loss.",
        "",
        "## Figs. 5-8: models against simulation (single path)",
        "",
        f"Markov chain error against the simulation mean: median {_pct(statistics.median(merr))}, worst "
        f"{_pct(max(merr))} (paper: at most {_pct(PAPER_MARKOV_MAX_ERR)}; issue: median 2%, worst 5%); against the",
        f"\"no FR\" column: median {_pct(statistics.median(nofr))}, worst {_pct(max(nofr))}.",
        f"Renewal model: median {_pct(statistics.median(rerr))}, worst {_pct(max(rerr))} (paper: at most "
        f"{_pct(PAPER_RENEWAL_MAX_ERR)}; issue: 15%).",
        "",
        "The simulation column counts packets received on their first transmission. Eq. 19 counts a round's",
        "x packets less its losses: new data in CA and slow-start rounds (a fast retransmission is in no",
        "round, §4.3.1), but also the packet of each back-off round (eq. 20), which resends data. Beside it:",
        "goodput (every retransmission counted) and goodput less the fast-retransmitted TSNs (\"no FR\", the",
        "count eq. 20 makes; it differs from the first column only by what timeouts resend).",
        "",
        _md_table(["Fig.", "x", "simulation (Mbit/s)", "goodput", "no FR", "Markov", "err", "renewal", "err", "Mathis", "loss events (min)", "residual"],
                  [(r["fig"], f"{r['x']:g}", f"{r['sim_mbps']:.3f} ± {r['sim_ci95']:.3f}", f"{r['goodput_mbps']:.3f}",
                    f"{r.get('no_fast_rtx_mbps', math.nan):.3f}", f"{r['markov_mbps']:.3f}",
                    _pct(r["markov_err"]), f"{r['renewal_mbps']:.3f}", _pct(r["renewal_err"]), f"{r['mathis_mbps']:.3f}",
                    r["min_loss_events"], f"{r['markov_residual']:.1e}") for r in single]),
        "",
    ]
    out += [f"![{f}]({f})" for f in figs if any(f"fig{n}." in f for n in "5678")]
    out += ["", "## Figs. 9-12: static over dynamic window management (two paths)", ""]
    if short:
        out += [f"**{len(short)} of {len(gains)} rows saw fewer than {st.two_path_loss_events} loss events** (column "
                f"\"loss events (min)\", down to {low}): {why}.", ""]
    best = max(gains, key=lambda r: r["gain"])
    out += [f"Largest mean gain: {_pct(best['gain'])} ± {_pct(best['gain_ci95'])} (Fig. {best['fig']}, {best['curve']}, "
            f"p1 = {best['p1']:g}; paper: up to {_pct(PAPER_MAX_GAIN)}).", ""]
    out += ["Buffer full: share of the run with sum(CWND) at RBUF (static / dynamic), where window management acts;",
            "rwnd-held: share with a window open but the receive window (RBUF less out-of-order data) full."]
    if any(_share_pair(r, "full") == "-" for r in gains):
        out += ["\"-\": a row read back from a run made before these were recorded."]
    out += [""]
    out.append(_md_table(["Fig.", "curve", "p1", "limits (packets)", "static (Mbit/s)", "dynamic", "gain ± 95% CI",
                          "predicted static", "buffer full", "rwnd-held", "loss events (min)"],
                         [(r["fig"], r["curve"], f"{r['p1']:g}", f"{r['limit1']}, {r['limit2']}", f"{r['static_mbps']:.3f}",
                           f"{r['dynamic_mbps']:.3f}", f"{_pct(r['gain'])} ± {_pct(r['gain_ci95'])}",
                           f"{r['predicted_static_mbps']:.3f}", _share_pair(r, "full"), _share_pair(r, "rwnd_blocked"),
                           r["min_loss_events"]) for r in gains]))
    out += [""] + [f"![{f}]({f})" for f in figs if any(f"fig{n}." in f for n in ("9", "10", "11", "12"))]
    out += ["", "## Figs. 13-14: the heuristic's step k", ""]
    out.append(_md_table(["b1", "k", "limits", "model (Mbit/s)", "simulation", "search (ms)", "solve incl. model (ms)"],
                         [(f"{r['b1_mbps']:g}", r["k"], f"{r['limit1']}, {r['limit2']}", f"{r['predicted_mbps']:.3f}",
                           "-" if math.isnan(r["sim_mbps"]) else f"{r['sim_mbps']:.3f} ± {r['sim_ci95']:.3f}",
                           f"{1e3 * r['search_s']:.2f}", f"{1e3 * r['solve_s']:.1f}") for r in steps]))
    out += ["", "![cmt/fig13_14.png](cmt/fig13_14.png)", ""]
    out += claims(single, gains, steps, st)
    out += ["## Markov chain solve time against RBUF", "",
            "Paper 002 footnote 7: MATLAB could not solve RBUF = 176 KB (a dense matrix in 32-bit memory).", ""]
    out.append(_md_table(["RBUF", "loss", "W", "states", "non-zeros", "solver", "iterations", "residual", "solve (s)", "Mbit/s"],
                         [(f"{r['rbuf_bytes'] // 1000} KB", r["loss"], r["W"], r["states"], r["nonzeros"], r["solver"],
                           r["iterations"], f"{r['residual']:.1e}", f"{r['solve_s']:.3f}", f"{r['throughput_mbps']:.3f}")
                          for r in solves]))
    out.append("")
    return "\n".join(out)


def claims(single: list[dict], gains: list[dict], steps: list[dict], st: Settings) -> list[str]:
    """Issue 10's "what it must show", each with the measured value next to its target."""
    merr = [r["markov_err"] for r in single]
    rerr = [r["renewal_err"] for r in single]
    window = [r for r in gains if r["fig"] in ("9", "10", "11") and 1e-3 <= r["p1"] <= 1e-2]
    above = [r for r in window if r["gain"] - r["gain_ci95"] > 0]
    misses = ", ".join(f"Fig. {r['fig']} {r['curve']} p1 = {r['p1']:g} ({_pct(r['gain'])} ± {_pct(r['gain_ci95'])})"
                       for r in window if r not in above)
    best = max(gains, key=lambda r: r["gain"])
    fig12_dyn = [r for r in gains if r["fig"] == "12" and r["gain"] + r["gain_ci95"] < 0]
    fig12_neg = [r for r in gains if r["fig"] == "12" and r["gain"] < 0]
    by_b1: dict = {}
    for r in steps:
        by_b1.setdefault(r["b1_mbps"], {})[r["k"]] = r["predicted_mbps"]
    beaten = [(b1, k) for b1, ks in by_b1.items() for k, v in ks.items() if v > ks[1] + 1e-12]
    events = min(r["min_loss_events"] for r in single)
    short, why = _short_rows(gains, st)
    lines = [
        "## The issue's claims, measured",
        "",
        f"- Markov against simulation over Figs. 5-8: median {_pct(statistics.median(merr))} (target 2%), worst "
        f"{_pct(max(merr))} (target 5%; paper 1.1%).",
        f"- Renewal against simulation: worst {_pct(max(rerr))} (target 15%; paper 14.7%); points above 15%: "
        + (", ".join(f"Fig. {r['fig']} x = {r['x']:g} ({_pct(r['renewal_err'])})" for r in single if r["renewal_err"] > 0.15) or "none") + ".",
        f"- Loss events per run, Figs. 5-8: at least {events} (asked of the runner: {st.loss_events}).",
        f"- Loss events per run, Figs. 9-12: at least {min(r['min_loss_events'] for r in gains)} (asked of the runner: "
        f"{st.two_path_loss_events}" + (f"; {why})." if short else ")."),
        f"- Static over dynamic, Figs. 9-11, p1 in [1e-3, 1e-2]: the gain's 95% CI is above zero at {len(above)} of "
        f"{len(window)} points" + (f"; not at: {misses}." if misses else "."),
        f"- Largest gain over Figs. 9-12: {_pct(best['gain'])} ± {_pct(best['gain_ci95'])} (Fig. {best['fig']}, {best['curve']}, "
        f"p1 = {best['p1']:g}; target between 6% and 18%, paper 12%).",
        f"- Fig. 12, dynamic ahead: {len(fig12_neg)} points with a negative mean gain, {len(fig12_dyn)} with the whole CI below zero"
        + (": " + ", ".join(f"{r['curve']} p1 = {r['p1']:g} ({_pct(r['gain'])})" for r in fig12_neg) if fig12_neg else "") + ".",
        f"- Heuristic (eq. 61): a k beating k = 1 in the model: {'none' if not beaten else beaten}.",
        "",
    ]
    return lines


def _read_csv(path: FsPath) -> list[dict]:
    """Rows of one of the report's CSVs, numbers read back as numbers (the figures not rerun by `--figs`)."""
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run the whole report (no --figs, no --report-only) first")

    def value(key: str, text: str):
        if key in TEXT_COLUMNS:
            return text
        try:
            return int(text)
        except ValueError:
            return float(text)

    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in NEEDED_COLUMNS.get(path.stem, ()) if c not in (reader.fieldnames or ())]
        if missing:
            raise ValueError(f"{path}: no column {', '.join(missing)}; rerun the whole report (no --figs, no --report-only)")
        try:
            rows = [{k: value(k, v) for k, v in row.items()} for row in reader]
        except (TypeError, ValueError) as e:
            raise ValueError(f"{path}: line {reader.line_num}: {e}") from None
    if not rows:
        raise ValueError(f"{path} has no rows; rerun the whole report (no --figs, no --report-only)")
    return rows


def _keep(rows: list[dict], figs: Sequence[str]) -> list[dict]:
    return [r for r in rows if str(r["fig"]) in figs]


def _refresh_models(row: dict) -> dict:
    """A single-path row read back from its CSV with the models recomputed by this checkout's code (they take
    milliseconds; only the simulation columns are the earlier run's)."""
    pt = ModelPoint(str(row["fig"]), row["x"], Path(row["b_mbps"], row["d_ms"], row["p"]), int(row["rbuf_bytes"]))
    set_models(pt)
    fresh = {"markov_mbps": pt.markov_mbps, "markov_residual": pt.markov_residual, "renewal_mbps": pt.renewal_mbps,
             "mathis_mbps": pt.mathis_mbps, "markov_err": relative_error(pt.markov_mbps, row["sim_mbps"]),
             "renewal_err": relative_error(pt.renewal_mbps, row["sim_mbps"])}
    return {**row, **fresh}


def reproduce(out: FsPath, st: Settings, log: Callable[[str], None] = print, figs: Sequence[str] = FIGS) -> FsPath:
    """Run the figures in `figs` (all by default) and write the report; the other figures' rows come from the
    `cmt/*.csv` an earlier run wrote next to `out`."""
    t0 = time.perf_counter()
    # Figs. 13 and 14 come from the same runs: naming one runs both.
    ran = tuple(f for f in FIGS if f in figs or (f in STEP_FIGS and set(STEP_FIGS) & set(figs)))
    outdir = out.parent
    check_data_destination(outdir / "cmt", DATA_FILES)
    # Read back first: a missing or damaged CSV is refused before any folder or file is made.
    old = {name: _read_csv(outdir / "cmt" / f"{name}.csv") for name, group in
           (("single_path", SINGLE_FIGS), ("gains", GAIN_FIGS), ("steps", STEP_FIGS))
           if not set(group) <= set(ran)}
    (outdir / "cmt").mkdir(parents=True, exist_ok=True)
    single_run = [f for f in SINGLE_FIGS if f in ran]
    if single_run:
        pts = [pt for pt in single_path_points() if pt.fig in single_run]
        run_single_path(pts, st, log)
        fresh = single_path_rows(pts)
        carried = _keep(old.get("single_path", []), [f for f in SINGLE_FIGS if f not in single_run])
        single = sorted(fresh + [_refresh_models(r) for r in carried], key=lambda r: SINGLE_FIGS.index(str(r["fig"])))
    else:
        single = [_refresh_models(r) for r in old["single_path"]]
    gain_run = [f for f in GAIN_FIGS if f in ran]
    if gain_run:
        gp = [pt for pt in gain_points() if pt.fig in gain_run]
        run_gains(gp, st, log)
        carried = _keep(old.get("gains", []), [f for f in GAIN_FIGS if f not in gain_run])
        gains = sorted(gain_rows(gp) + carried, key=lambda r: GAIN_FIGS.index(str(r["fig"])))
    else:
        gains = old["gains"]
    steps = step_rows(run_steps(st, log)) if set(STEP_FIGS) & set(ran) else old["steps"]
    solves = solve_table()
    for name, rows in (("single_path", single), ("gains", gains), ("steps", steps), ("solve", solves)):
        _write_csv(outdir / "cmt" / f"{name}.csv", rows)
    figs_out = plot_single(single, outdir) + plot_gains(gains, outdir) + plot_steps(steps, outdir)
    text = report(single, gains, steps, solves, figs_out, st, time.perf_counter() - t0, ran)
    store.write_text(out, text)
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", type=FsPath, default=FsPath("docs/reproductions/cmt.md"))
    ap.add_argument("--seeds", type=int, default=Settings.seeds)
    ap.add_argument("--loss-events", type=int, default=Settings.loss_events)
    ap.add_argument("--two-path-seeds", type=int, default=Settings.two_path_seeds)
    ap.add_argument("--two-path-loss-events", type=int, default=Settings.two_path_loss_events)
    ap.add_argument("--cap-s", type=float, default=Settings.cap_s)
    ap.add_argument("--figs", nargs="+", default=None, choices=FIGS,
                    help="the figures to run (default all; 13 and 14 share runs); the others are read back from "
                         "the cmt/*.csv next to the report, the Figs. 5-8 models recomputed (Figs. 9-14's predictions "
                         "and limits stay those of the runs that made them)")
    ap.add_argument("--report-only", action="store_true",
                    help="run nothing: rewrite the report from cmt/*.csv, the Figs. 5-8 models recomputed")
    add_runner_options(ap, Settings.jobs)
    a = ap.parse_args(argv)
    st = Settings(seeds=a.seeds, loss_events=a.loss_events, cap_s=a.cap_s, jobs=a.jobs, quiet=a.quiet,
                  two_path_seeds=a.two_path_seeds, two_path_loss_events=a.two_path_loss_events)
    if a.report_only and a.figs is not None:
        # One error line, exit 2 (the house rule for bad input): --report-only runs no figure.
        print("error: --report-only runs nothing; give it no --figs (or drop --report-only to rerun those figures)",
              file=sys.stderr)
        return 2
    figs = () if a.report_only else (a.figs or FIGS)
    return run_report(lambda: reproduce(a.out, st, figs=figs), a.out, "cmt")


if __name__ == "__main__":
    raise SystemExit(main())
