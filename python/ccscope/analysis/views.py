"""What a results folder contributes to a figure: throughput and window panels, delay distributions.

Shared by `compare` (one panel per scheme) and `report` (one run)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from ccscope.analysis.figures import Distribution, Panel, Series
from ccscope.analysis.inputs import RunFolder, bin_width_s, fmt_bin

# Above this many flows a run's delay CDF pools its flows into one curve (a legend of 32 is unreadable).
MAX_FLOW_CURVES = 8
CWND_MISSING = "no window trace (cwnd.parquet): run with `ccscope run --cwnd` to record every window change"


def throughput_panel(run: RunFolder, title: str) -> tuple[Panel, Optional[float]]:
    """Per-flow throughput (departures from the data link) per bin over the link's capacity; the bin width."""
    ts = run.timeseries()
    bin_s = bin_width_s(ts)
    link = ts[ts["flow"] == -1]
    cap = None
    if "capacity_mbps" in ts.columns and len(link) and link["capacity_mbps"].notna().any():
        mean_cap = run.summary.get("capacity_mbps")
        cap_label = "link capacity" + (f" (mean {mean_cap:.2f} Mbit/s)" if isinstance(mean_cap, (int, float)) else "")
        cap = Series(cap_label, link["time_s"].to_numpy(float), link["capacity_mbps"].fillna(0).to_numpy(float))
    flows = {r.get("flow"): r for r in run.flows}
    series = []
    for f, g in ts[ts["flow"] >= 0].groupby("flow"):
        rec = flows.get(int(f), {})
        mean = rec.get("throughput_mbps")
        extra = f", mean {mean:.2f} Mbit/s" if isinstance(mean, (int, float)) else ""
        series.append(Series(f"flow {int(f)} ({rec.get('controller', '?')}{extra})", g["time_s"].to_numpy(float),
                             g["throughput_mbps"].fillna(0).to_numpy(float)))
    return Panel(title, series, cap), bin_s


def window_panel(run: RunFolder, title: str) -> Optional[Panel]:
    """Every window change per flow (cwnd.parquet), or None when the run did not record it."""
    cw = run.cwnd()
    if cw is None:
        return None
    flows = {r.get("flow"): r for r in run.flows}
    end = run.summary.get("sim_end_s")
    series = []
    for f, g in cw.groupby("flow"):
        g = g.sort_values("time_ms", kind="stable")
        t = g["time_ms"].to_numpy(float) / 1000.0
        y = g["cwnd"].to_numpy(float)
        if isinstance(end, (int, float)) and len(t) and end > t[-1]:
            t, y = np.r_[t, end], np.r_[y, y[-1]]  # hold the last window to the end of the run
        series.append(Series(f"flow {int(f)} ({flows.get(int(f), {}).get('controller', '?')})", t, y))
    return Panel(title, series)


@dataclass
class DelaySamples:
    """Per-flow delay samples of one run, and what they are."""

    per_flow: dict[int, tuple[np.ndarray, Optional[np.ndarray]]]
    xlabel: str
    ylabel: str


def delay_samples(run: RunFolder, per_packet: bool) -> DelaySamples:
    """Per-packet queueing delays at the data link (packets.parquet) when `per_packet`, else each bin's
    mean one-way delay weighted by the bytes delivered in it."""
    if per_packet:
        d = run.packet_delays() or {}
        return DelaySamples({f: (v, None) for f, v in d.items()}, "per-packet queueing delay at the data link (ms)",
                            "fraction of packets")
    ts = run.timeseries()
    bin_s = bin_width_s(ts)
    out = {}
    if "one_way_delay_mean_ms" in ts.columns:
        weight = "delivered_mbps" if "delivered_mbps" in ts.columns else "throughput_mbps"
        for f, g in ts[ts["flow"] >= 0].groupby("flow"):
            out[int(f)] = (g["one_way_delay_mean_ms"].to_numpy(float), g[weight].fillna(0).to_numpy(float))
    return DelaySamples(out, f"one-way delay, mean per {fmt_bin(bin_s)[:-1]} (ms)", "fraction of delivered bytes")


def distributions(groups: Sequence[tuple[str, Sequence[RunFolder]]], per_packet: bool) -> tuple[list[Distribution], str, str, list[str]]:
    """Delay CDF curves: per (group, flow), the group's runs pooled; many flows pool into one curve."""
    dists: list[Distribution] = []
    notes: list[str] = []
    xlabel = ylabel = ""
    for label, runs in groups:
        pooled: dict[object, tuple[list, list]] = {}
        for run in runs:
            s = delay_samples(run, per_packet)
            xlabel, ylabel = s.xlabel, s.ylabel
            many = len(s.per_flow) > MAX_FLOW_CURVES
            if many:
                notes.append(f"{run.path}: {len(s.per_flow)} flows pooled into one delay CDF curve")
            for f, (v, w) in s.per_flow.items():
                key: object = "all flows" if many else f
                vals, wts = pooled.setdefault(key, ([], []))
                vals.append(v)
                wts.append(np.ones_like(v) if w is None else w)
        for key, (vals, wts) in pooled.items():
            name = key if isinstance(key, str) else f"flow {key}"
            runs_txt = f", {len(runs)} runs pooled" if len(runs) > 1 else ""
            dists.append(Distribution(f"{label}: {name}{runs_txt}", np.concatenate(vals), np.concatenate(wts)))
    return dists, xlabel, ylabel, notes
