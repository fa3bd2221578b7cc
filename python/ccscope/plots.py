"""Mahimahi-style figures: capacity, ingress and throughput over time, and per-packet delay."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Optional, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from ccscope.api import load_result  # noqa: E402


def plot_results(results: Path, out: Optional[Path] = None, formats: Sequence[str] = ("png", "svg")) -> list[Path]:
    """Draw throughput.{fmt} and delay.{fmt} for a results folder; returns the files written."""
    results = Path(results)
    out = Path(out) if out else results
    out.mkdir(parents=True, exist_ok=True)
    r = load_result(results)
    ts = r.timeseries
    total = ts[ts.flow == -1]
    flows = ts[ts.flow >= 0]
    name = r.scenario.get("name", results.name)
    written: list[Path] = []

    # Throughput, as mm-throughput-graph: capacity shaded, ingress and egress lines.
    fig, ax = plt.subplots(figsize=(10.24, 5.6))
    ax.fill_between(total.time_s, total.capacity_mbps, step="post", alpha=0.2,
                    label=f"Capacity (mean {r.summary['capacity_mbps']:.2f} Mbit/s)")
    ax.step(total.time_s, total.ingress_mbps, where="post", color="#0020a0", lw=1.5,
            label="Traffic ingress")
    ax.step(total.time_s, total.throughput_mbps, where="post", color="#ff6040", lw=1.2,
            label=f"Traffic egress (mean {r.summary['throughput_mbps']:.2f} Mbit/s)")
    if flows.flow.nunique() > 1:
        for f, g in flows.groupby("flow"):
            ax.step(g.time_s, g.throughput_mbps, where="post", lw=0.7, alpha=0.8, label=f"flow {f}")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("throughput (Mbit/s)")
    ax.set_title(f"{name}: throughput")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3, fontsize=8)
    fig.tight_layout()
    written += _save(fig, out / "throughput", formats)

    # Delay, as mm-delay-graph: per-packet queueing delay when the packet log was kept, else per bin.
    fig, ax = plt.subplots(figsize=(10.24, 5.6))
    if r.packets is not None and len(r.packets):
        dep = r.packets[r.packets.event == "departure"]
        ax.scatter(dep.time_ms / 1000.0, dep.delay_ms, s=1, color="#0020a0", label="per-packet queueing delay")
    else:
        for f, g in flows.groupby("flow"):
            ax.plot(g.time_s, g.queue_delay_max_ms, lw=1, label=f"flow {f}: max queueing delay per bin")
            ax.plot(g.time_s, g.one_way_delay_mean_ms, lw=1, ls="--", label=f"flow {f}: mean one-way delay")
    p95 = r.summary.get("signal_delay_p95_ms")
    if p95 is not None:
        ax.axhline(p95, color="#ff6040", lw=1, ls=":", label=f"95th percentile signal delay {p95:.0f} ms")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("delay (ms)")
    ax.set_title(f"{name}: delay")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, fontsize=8)
    fig.tight_layout()
    written += _save(fig, out / "delay", formats)
    return written


def _save(fig, stem: Path, formats: Iterable[str]) -> list[Path]:
    paths = []
    for f in formats:
        p = stem.with_suffix(f".{f}")
        fig.savefig(p, dpi=100)
        paths.append(p)
    plt.close(fig)
    return paths
