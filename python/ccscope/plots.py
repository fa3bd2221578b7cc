"""Mahimahi-style figures of one results folder: capacity, ingress and throughput over time, and delay."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

from ccscope.analysis import figures as F
from ccscope.analysis.inputs import RunFolder, bin_width_s, fmt_bin, read_parquet


def plot_results(results: Path, out: Optional[Path] = None, formats: Sequence[str] = ("png", "svg")) -> list[Path]:
    """Draw throughput.{fmt} and delay.{fmt} for a results folder; returns the files written.

    Every input is read (and every problem raised as one line) before anything is written."""
    import matplotlib.pyplot as plt

    results = Path(results)
    out = Path(out) if out else results
    run = RunFolder.load(results)
    ts = run.timeseries()
    packets = read_parquet(results / "packets.parquet", ["time_ms", "event", "delay_ms"]) if run.has_packets() else None
    bins = fmt_bin(bin_width_s(ts))
    total = ts[ts.flow == -1]
    flows = ts[ts.flow >= 0]
    name = run.meta.get("scenario", {}).get("name", results.name)
    s = run.summary

    # Throughput, as mm-throughput-graph: capacity shaded, ingress and egress of the link.
    with F.paper_style():
        fig_t, ax = plt.subplots(figsize=(7.5, 4.2))
        if "capacity_mbps" in total.columns:
            ax.fill_between(total.time_s, total.capacity_mbps.fillna(0), step="post", color="#bbbbbb", alpha=0.45, lw=0,
                            label=f"capacity (mean {s.get('capacity_mbps', float('nan')):.2f} Mbit/s)")
        if "ingress_mbps" in total.columns:
            ax.step(total.time_s, total.ingress_mbps, where="post", color=F.PALETTE[0], ls="--", label="traffic ingress")
        ax.step(total.time_s, total.throughput_mbps, where="post", color=F.PALETTE[1],
                label=f"traffic egress (mean {s.get('throughput_mbps', float('nan')):.2f} Mbit/s)")
        if flows.flow.nunique() > 1:
            for i, (f, g) in enumerate(flows.groupby("flow")):
                color, _, ls = F.look(i + 2)
                ax.step(g.time_s, g.throughput_mbps, where="post", lw=0.9, color=color, ls=ls, label=f"flow {f} egress")
        ax.set_xlabel("time (s)")
        ax.set_ylabel(f"throughput (Mbit/s, {bins})")
        ax.set_ylim(bottom=0)
        ax.set_title(f"{name}: throughput")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
        fig_t.tight_layout()

        # Delay, as mm-delay-graph: per-packet queueing delay when the packet log was kept, else per bin.
        fig_d, ax = plt.subplots(figsize=(7.5, 4.2))
        if packets is not None and len(packets):
            dep = packets[packets.event.astype(str) == "departure"]
            ax.scatter(dep.time_ms / 1000.0, dep.delay_ms, s=1, color=F.PALETTE[0], rasterized=True,
                       label="per-packet queueing delay")
        else:
            for i, (f, g) in enumerate(flows.groupby("flow")):
                color = F.PALETTE[i % len(F.PALETTE)]
                if "queue_delay_max_ms" in g.columns:
                    ax.step(g.time_s, g.queue_delay_max_ms, where="post", color=color,
                            label=f"flow {f}: max queueing delay per bin")
                if "one_way_delay_mean_ms" in g.columns:
                    ax.step(g.time_s, g.one_way_delay_mean_ms, where="post", color=color, ls="--",
                            label=f"flow {f}: mean one-way delay per bin")
        p95 = s.get("signal_delay_p95_ms")
        if isinstance(p95, (int, float)):
            ax.axhline(p95, color=F.PALETTE[1], lw=1, ls=":", label=f"95th percentile signal delay {p95:.0f} ms")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("delay (ms)" if packets is not None else f"delay (ms, {bins})")
        ax.set_ylim(bottom=0)
        ax.set_title(f"{name}: delay")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
        fig_d.tight_layout()

    out.mkdir(parents=True, exist_ok=True)
    return F.save_figure(fig_t, out / "throughput", formats) + F.save_figure(fig_d, out / "delay", formats)
